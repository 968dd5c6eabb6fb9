package rpc

import (
	"container/list"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// ErrServiceBusy answers a request whose body finds no room in the body memory budget
// (svc.app.body_memory_budget): HTTP 503 with code 1900, the code the original gives every HTTP
// status it does not map (wire-core §1.5; wire-core §2 has no "busy" code). The engine adds
// Retry-After: 1.
var ErrServiceBusy = NewError(CodeUnknown, http.StatusServiceUnavailable, "service_busy")

// errOverflow: fill found more bytes than its limit.
var errOverflow = errors.New("rpc: body over its limit")

// Admission (issue #42 item 2). The budget is charged for the bytes a request actually holds,
// as they arrive, never for what its headers declare; and it is shared by a rule, not first
// come first served:
//
//   - smallBody: a request holding at most this much is small (a login is under 1 KiB). A
//     share of the budget, smallShare = size/smallShareDiv, is kept for small requests: large
//     ones together hold at most size − smallShare. So however many large bodies are in
//     flight, small calls find room.
//   - Each client address (the IP of RequestInfo, as app/clientip.go determines it behind
//     trusted proxies; an IPv6 address counts by its /64) holds at most perClient in all, and
//     at most smallShare/clientSmallDiv (at least smallBody) in small requests: one address,
//     with any number of connections, can take neither the budget nor the small share.
//   - How long a body may hold memory is the app's total body deadline (BodyHolder): in
//     proportion to what it holds.
//
// Only a request that holds nothing waits (admission: its first bytes, in line, first come
// first served, a waiter whose own client is at its cap not holding back the others), plus the
// oldest holder of the budget when it cannot grow; any other growth that finds no room answers
// 503 at once. A waiter therefore never waits for a younger one that waits for it: requests
// cannot deadlock one another.
const (
	smallBody      = 32 << 10
	smallShareDiv  = 8  // smallShare = size / 8
	clientSmallDiv = 16 // a client's part of the small share: smallShare / 16, at least smallBody
	firstBodyChunk = 4 << 10
	maxBodyChunk   = 64 << 10
)

// bodyBudget bounds the request-body bytes that all requests together hold in memory, with the
// shares above.
type bodyBudget struct {
	size           int64
	smallShare     int64
	perClient      int64
	perClientSmall int64

	mu      sync.Mutex
	used    int64                  // all holdings
	large   int64                  // holdings of large requests
	clients map[string]*clientHold // by client key; an entry exists while it holds something
	holders list.List              // requests holding memory, oldest first (*bodyMemory)
	queue   []*budgetWaiter
}

// clientHold is what one client address holds.
type clientHold struct {
	held  int64 // in all
	small int64 // in small requests
}

type budgetWaiter struct {
	m     *bodyMemory
	n     int64
	ready chan struct{} // closed once n bytes are granted
}

// newBodyBudget makes a budget of size bytes of which one client address may hold perClient
// (at most size; non-positive means size).
func newBodyBudget(size, perClient int64) *bodyBudget {
	if perClient <= 0 || perClient > size {
		perClient = size
	}
	small := size / smallShareDiv
	return &bodyBudget{size: size, smallShare: small, perClient: perClient,
		perClientSmall: min(max(small/clientSmallDiv, smallBody), small), clients: map[string]*clientHold{}}
}

// verdict of fitsLocked.
type verdict uint8

const (
	fits       verdict = iota
	poolFull           // the budget or the large requests' part of it
	clientFull         // the request's client address is at its cap
)

// share is what m counts against its client: the larger of its claim (the declared length it
// was admitted with) and what it holds, while it holds anything.
func share(claim, held int64) int64 {
	if held <= 0 {
		return 0
	}
	return max(claim, held)
}

// fitsLocked tells whether m may hold k more bytes. Its client is charged its share (claims
// included: a client's own concurrent bodies queue at admission instead of failing midway);
// the budget and its large part only what is held.
func (b *bodyBudget) fitsLocked(m *bodyMemory, k int64) verdict {
	c := b.clients[m.client]
	var held, small int64
	if c != nil {
		held, small = c.held, c.small
	}
	next := m.held + k
	was, will := share(m.claim, m.held), share(m.claim, next)
	if held-was+will > b.perClient {
		return clientFull
	}
	if will <= smallBody {
		if was > smallBody {
			was = 0
		}
		if small-was+will > b.perClientSmall {
			return clientFull
		}
	}
	if b.used+k > b.size {
		return poolFull
	}
	if next > smallBody {
		add := next // turning large moves the whole holding into the large part
		if m.held > smallBody {
			add = k
		}
		if b.large+add > b.size-b.smallShare {
			return poolFull
		}
	}
	return fits
}

// applyLocked changes m's holding by k (negative: gives back) and keeps every account true.
func (b *bodyBudget) applyLocked(m *bodyMemory, k int64) {
	c := b.clients[m.client]
	if c == nil {
		c = &clientHold{}
		b.clients[m.client] = c
	}
	was := share(m.claim, m.held)
	if m.held > smallBody {
		b.large -= m.held
	}
	if was <= smallBody {
		c.small -= was
	}
	c.held -= was
	if m.held == 0 {
		m.elem = b.holders.PushBack(m)
	}
	m.held += k
	b.used += k
	will := share(m.claim, m.held)
	c.held += will
	if m.held > smallBody {
		b.large += m.held
	}
	if will <= smallBody {
		c.small += will
	}
	if c.held == 0 {
		delete(b.clients, m.client)
	}
	if m.held == 0 {
		b.holders.Remove(m.elem)
		m.elem = nil
	}
}

// passLocked tells whether m may take k now, ahead of the line: it fits, and either it stays
// small or no large waiter waits for room in the pool (a waiter blocked by its own client's cap
// holds nobody back).
func (b *bodyBudget) passLocked(m *bodyMemory, k int64) bool {
	if b.fitsLocked(m, k) != fits {
		return false
	}
	if m.held+k <= smallBody {
		return true
	}
	for _, w := range b.queue {
		if w.m.held+w.n > smallBody && b.fitsLocked(w.m, w.n) == poolFull {
			return false
		}
	}
	return true
}

// tryTake gives m k more bytes if they may pass now (passLocked), never waiting.
func (b *bodyBudget) tryTake(m *bodyMemory, k int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.passLocked(m, k) {
		return false
	}
	b.applyLocked(m, k)
	return true
}

// acquire gives m k more bytes, waiting in line until they fit, ctx ends or wait passes (the
// last two answer ErrServiceBusy). Only a request holding nothing, or the oldest holder, may
// wait (see Admission); anyone else is refused at once. The wait is a real timer: it bounds how
// long a client's connection sits unread, which the injected clock cannot drive.
func (b *bodyBudget) acquire(ctx context.Context, m *bodyMemory, k int64, wait time.Duration) error {
	b.mu.Lock()
	if b.passLocked(m, k) {
		b.applyLocked(m, k)
		b.mu.Unlock()
		return nil
	}
	if m.held > 0 && b.holders.Front() != m.elem {
		b.mu.Unlock()
		return ErrServiceBusy
	}
	w := &budgetWaiter{m: m, n: k, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var cause error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-timer.C:
		cause = errors.New("rpc: no room in the body memory budget")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted while giving up: keep it, the caller releases it with the request
		return nil
	default:
	}
	for i, q := range b.queue {
		if q == w {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			break
		}
	}
	b.grantLocked() // the waiter may have been what held the others back
	return ErrServiceBusy.Wrap(cause)
}

// give returns k bytes of m's holding and grants waiters.
func (b *bodyBudget) give(m *bodyMemory, k int64) {
	b.mu.Lock()
	b.applyLocked(m, -k)
	b.grantLocked()
	b.mu.Unlock()
}

// grantLocked grants waiters in order while they fit. A waiter whose own client is at its cap
// does not hold back the others; one that waits for room in the pool holds back the later ones
// that would take from the same part of it (large after large), so a large body is not
// overtaken for ever by later ones, while small ones still pass.
func (b *bodyBudget) grantLocked() {
	blockedLarge := false
	kept := b.queue[:0]
	for _, w := range b.queue {
		large := w.m.held+w.n > smallBody
		v := b.fitsLocked(w.m, w.n)
		if v == fits && !(large && blockedLarge) {
			b.applyLocked(w.m, w.n)
			close(w.ready)
			continue
		}
		if v == poolFull && large {
			blockedLarge = true
		}
		kept = append(kept, w)
	}
	clear(b.queue[len(kept):])
	b.queue = kept
}

// BodyHolder is implemented by a request body whose reader bounds how long a body may hold
// memory (package app's paced body: a total deadline of body_min_rate_grace +
// held / body_memory_rate from the body's start). While the engine reads a body into memory it
// calls Hold with what the request holds after each change, and Hold(0) when it stops reading
// into memory (the body's end, a handler that streams the rest, an error).
type BodyHolder interface {
	Hold(held int64)
}

// bodyMemory is one request's share of the budget. Only admission waits (admit, before the
// request holds anything that others might wait for; and the oldest holder's growth), so
// requests can never wait on each other in a cycle: growth beyond what admit took is taken only
// when it is free (take), and a refusal answers 503 at once or, for a multipart spool, sends the
// data to disk instead.
type bodyMemory struct {
	budget *bodyBudget
	client string        // clientKey of the request's client address
	hold   BodyHolder    // told of the holding while the body is read into memory; nil: none
	elem   *list.Element // in budget.holders while held > 0
	held   int64         // bytes charged to the budget (guarded by budget.mu)
	claim  int64         // the declared size it was admitted with, counted against its client
	used   int64         // bytes allocated out of held (may exceed held by a request alone in the budget)
}

// holding starts (h non-nil) or ends (nil) telling h of the request's holding.
func (m *bodyMemory) holding(h BodyHolder) {
	if m.hold != nil && h == nil {
		m.hold.Hold(0)
	}
	m.hold = h
	m.told()
}

func (m *bodyMemory) told() {
	if m.hold != nil {
		m.hold.Hold(m.held)
	}
}

// admit charges n more bytes, waiting for room up to wait (see bodyBudget.acquire). claim, when
// larger, is what the request's client is charged for it from now on (a declared length: the
// client's own bodies in flight are bounded by what they announced, so they wait here rather
// than fail midway; the budget itself is charged only for what arrives). Neither is ever more
// than one request may hold (see need).
func (m *bodyMemory) admit(ctx context.Context, n, claim int64, wait time.Duration) error {
	top := m.budget.maxHold()
	n = min(n, top-m.held)
	if n <= 0 {
		return nil
	}
	if m.held == 0 {
		m.claim = min(claim, top)
	}
	if err := m.budget.acquire(ctx, m, n, wait); err != nil {
		m.claim = 0
		return err
	}
	m.told()
	return nil
}

// take accounts for k bytes about to be allocated: out of what admit charged, else charged now
// if they may pass (never waiting); ErrServiceBusy when the budget has no room for them.
func (m *bodyMemory) take(k int64) error {
	m.used += k
	need := m.need()
	if need <= 0 {
		return nil
	}
	if !m.budget.tryTake(m, need) {
		m.used -= k
		return ErrServiceBusy
	}
	m.told()
	return nil
}

// grow is take for a body read into memory under ctx: the oldest holder of the budget may wait
// for room up to wait (the others are refused at once; see bodyBudget.acquire).
func (m *bodyMemory) grow(ctx context.Context, k int64, wait time.Duration) error {
	m.used += k
	need := m.need()
	if need <= 0 {
		return nil
	}
	if err := m.budget.acquire(ctx, m, need, wait); err != nil {
		m.used -= k
		return err
	}
	m.told()
	return nil
}

// need is what m must still be charged for what it allocated. One request is never charged
// more than one request may hold (its client's cap, the large part of the budget): a request
// alone at that bound allocates the rest unreserved (the protected transport's decrypted copy
// of a body of the limit), so a body the limit admits is never refused for its own size.
func (m *bodyMemory) need() int64 {
	return min(m.used, m.budget.maxHold()) - m.held
}

// maxHold is the most one request is charged: its client's cap, or the budget's large part.
func (b *bodyBudget) maxHold() int64 { return min(b.perClient, b.size-b.smallShare) }

// give returns k bytes allocated earlier that the request no longer references.
func (m *bodyMemory) give(k int64) {
	k = min(k, m.used)
	m.used -= k
	if back := m.held - min(m.used, m.budget.maxHold()); back > 0 {
		m.budget.give(m, back)
		m.told()
	}
}

// release returns everything the request holds, once its body is no longer referenced.
func (m *bodyMemory) release() {
	if m.held > 0 {
		m.budget.give(m, m.held)
	}
	m.holding(nil)
	m.used, m.claim = 0, 0
}

// readAll reads a body of declared length n (-1 when unknown), at most limit bytes, into memory
// charged as it arrives (fill), each byte charged 1+copies times (copies: other forms of the
// body its reader will hold). A declared length only bounds the read: nothing is charged for
// bytes not yet received. The first chunk's admission waits up to wait.
func (m *bodyMemory) readAll(ctx context.Context, r io.Reader, n, limit, copies int64, wait time.Duration) ([]byte, error) {
	if r == nil || n == 0 {
		return nil, nil
	}
	if n > 0 {
		limit = min(limit, n) // net/http ends such a body after n bytes
	}
	k := 1 + copies
	first := min(limit, firstBodyChunk)
	if err := m.admit(ctx, first*k, max(n, 0)*k, wait); err != nil {
		return nil, err
	}
	buf, err := fill(r, first, limit,
		func(c int64) error { return m.grow(ctx, c*k, wait) },
		func(c int64) { m.give(c * k) })
	if err == nil && n > 0 && int64(len(buf)) < n {
		err = io.ErrUnexpectedEOF // the client closed before the declared length
	}
	return fillResult(buf, err, bodyReadError)
}

// fill reads r to its end into memory charged as the data arrives: chunks of start bytes,
// doubling up to maxBodyChunk, never past limit, each charged with take before it is read into
// (so a request holds at most one chunk more than it received). A body that took several
// chunks is copied into one buffer of its size at the end, and the chunks' excess over it is
// given back (give): the chunks are then garbage, which the budget does not count, like the
// garbage of finished requests. More than limit bytes answer errOverflow (found by reading one
// byte into a stack buffer, so a body of exactly limit bytes costs limit bytes); a refused take
// or a failed read answer their error. With errOverflow or a refused take, the bytes read so
// far are returned too (the one past the limit appended), so a caller can carry on elsewhere.
func fill(r io.Reader, start, limit int64, take func(int64) error, give func(int64)) ([]byte, error) {
	start = min(max(start, 512), limit)
	if err := take(start); err != nil {
		return nil, err // nothing read yet
	}
	c := chunks{list: [][]byte{make([]byte, 0, start)}, charged: start, give: give}
	for {
		cur := c.list[len(c.list)-1]
		if len(cur) == cap(cur) {
			if c.total >= limit {
				var one [1]byte
				n, err := io.ReadFull(r, one[:])
				if n > 0 {
					return c.join(one[0]), errOverflow
				}
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return c.join(), nil
				}
				return nil, err
			}
			next := min(max(2*int64(cap(cur)), 512), maxBodyChunk, limit-c.total)
			if err := take(next); err != nil {
				return c.join(), err
			}
			c.charged += next
			c.list = append(c.list, make([]byte, 0, next))
			continue
		}
		n, err := r.Read(cur[len(cur):cap(cur)])
		c.list[len(c.list)-1] = cur[:len(cur)+n]
		c.total += int64(n)
		if err == io.EOF {
			return c.join(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// chunks is what fill has read: total bytes in list, charged bytes taken for them.
type chunks struct {
	list    [][]byte
	total   int64
	charged int64
	give    func(int64)
}

// join returns the bytes read (with extra appended) in one slice: the only chunk itself when
// there is one, else a copy whose size replaces the chunks' charge.
func (c *chunks) join(extra ...byte) []byte {
	if len(c.list) == 1 {
		return append(c.list[0], extra...)
	}
	out := make([]byte, 0, c.total+int64(len(extra)))
	for _, b := range c.list {
		out = append(out, b...)
	}
	out = append(out, extra...)
	if back := c.charged - int64(cap(out)); back > 0 {
		c.give(back)
		c.charged -= back
	}
	c.list = [][]byte{out}
	return out
}
