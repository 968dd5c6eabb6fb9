package rpc

import (
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

// bodyBudget bounds the request-body bytes that all requests together hold in memory. It is a
// weighted semaphore in bytes with a FIFO queue of admissions: a large body waiting for room is
// not overtaken by later large ones. Two kinds of request may pass it while room is free: small
// admissions (up to smallAdmission, so ordinary API calls are not stuck behind a burst of
// large bodies) and the growth of requests already admitted (which never wait; see bodyMemory).
type bodyBudget struct {
	size int64

	mu    sync.Mutex
	used  int64
	queue []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed once n bytes are granted
}

func newBodyBudget(size int64) *bodyBudget { return &bodyBudget{size: size} }

// smallAdmission: admissions up to this may pass queued ones while room is free.
const smallAdmission = 64 << 10

// tryAcquire takes n bytes when they are free, queued admissions or not; it never waits.
func (b *bodyBudget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n <= b.size {
		b.used += n
		return true
	}
	return false
}

// acquire takes n bytes (at most size), waiting in line until they are free, ctx ends or wait
// passes; the last two answer ErrServiceBusy. The wait is a real timer: it bounds how long a
// client's connection sits unread, which the injected clock cannot drive.
func (b *bodyBudget) acquire(ctx context.Context, n int64, wait time.Duration) error {
	b.mu.Lock()
	if (len(b.queue) == 0 || n <= smallAdmission) && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
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
	b.grantLocked() // the head may have been what held the others back
	return ErrServiceBusy.Wrap(cause)
}

// release returns n bytes and grants waiters in order while they fit.
func (b *bodyBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.grantLocked()
	b.mu.Unlock()
}

func (b *bodyBudget) grantLocked() {
	for len(b.queue) > 0 {
		w := b.queue[0]
		if b.used+w.n > b.size {
			return
		}
		b.used += w.n
		close(w.ready)
		b.queue[0] = nil
		b.queue = b.queue[1:]
	}
}

// bodyMemory is one request's share of the budget. Only admission waits (admit, before the
// request holds anything that others might wait for), so requests can never wait on each other
// in a cycle: growth beyond what admit reserved is taken only when it is free (take), and a
// refusal answers 503 at once or, for a multipart spool, sends the data to disk instead.
type bodyMemory struct {
	budget *bodyBudget
	held   int64 // bytes reserved from the budget
	used   int64 // bytes allocated out of held (may exceed held by a request alone in the budget)
}

// admit reserves n more bytes, waiting for room up to wait. One request never reserves more
// than the whole budget: what it needs beyond that it allocates unreserved, as take does.
func (m *bodyMemory) admit(ctx context.Context, n int64, wait time.Duration) error {
	n = min(n, m.budget.size-m.held)
	if n <= 0 {
		return nil
	}
	if err := m.budget.acquire(ctx, n, wait); err != nil {
		return err
	}
	m.held += n
	return nil
}

// take accounts for k bytes about to be allocated: out of what admit reserved, else reserved
// now if free (never waiting); ErrServiceBusy when the budget has no room.
func (m *bodyMemory) take(k int64) error {
	m.used += k
	need := min(m.used, m.budget.size) - m.held
	if need <= 0 {
		return nil
	}
	if !m.budget.tryAcquire(need) {
		m.used -= k
		return ErrServiceBusy
	}
	m.held += need
	return nil
}

// release returns everything the request reserved, once its body is no longer referenced.
func (m *bodyMemory) release() {
	if m.held > 0 {
		m.budget.release(m.held)
	}
	m.held, m.used = 0, 0
}

// readAll reads a body of declared length n (-1 when unknown), at most limit bytes, into memory
// paid from the budget, each byte paid 1+copies times (copies: other forms of the body its
// reader will hold). A declared length is admitted and allocated at once (net/http ends such a
// body after n bytes); an unknown one is admitted at unknownBodyEstimate and grows with the
// data that arrives (fill). Admission waits up to wait.
func (m *bodyMemory) readAll(ctx context.Context, r io.Reader, n, limit, copies int64, wait time.Duration) ([]byte, error) {
	if r == nil || n == 0 {
		return nil, nil
	}
	if err := m.admit(ctx, estimate(n, unknownBodyEstimate)*(1+copies), wait); err != nil {
		return nil, err
	}
	if n > 0 {
		// Admission reserved n: allocating it at once costs no more of the budget, and growing
		// a buffer instead would leave as much again behind as garbage.
		if err := m.take(n * (1 + copies)); err != nil {
			return nil, err
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, bodyReadError(err)
		}
		return buf, nil
	}
	buf, err := fill(r, 512, limit, func(k int64) error { return m.take(k * (1 + copies)) })
	return fillResult(buf, err, bodyReadError)
}

// fill reads r to its end into a buffer that grows with the data that actually arrives: from
// start bytes, doubling, up to limit, each new buffer paid for whole with take (so a body that
// grew to n bytes has taken about 2n). More than limit bytes
// answer errOverflow (found by reading one byte into a stack buffer, so a body of exactly limit
// bytes costs limit bytes); a refused take or a failed read answer their error. With errOverflow
// or a refused take, the bytes read so far are returned too (the one past the limit appended),
// so a caller can carry on elsewhere.
func fill(r io.Reader, start, limit int64, take func(int64) error) ([]byte, error) {
	start = min(max(start, 512), limit)
	if err := take(start); err != nil {
		return nil, err // nothing read yet
	}
	buf := make([]byte, 0, start)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= limit {
				var one [1]byte
				n, err := io.ReadFull(r, one[:])
				if n > 0 {
					return append(buf, one[0]), errOverflow
				}
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return buf, nil
				}
				return nil, err
			}
			// The outgrown buffer stays counted: it is garbage the collector has not yet
			// reclaimed, and the budget bounds what requests in flight made the heap hold.
			next := min(2*int64(cap(buf)), limit)
			if err := take(next); err != nil {
				return buf, err
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
