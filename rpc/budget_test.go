package rpc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestBodyBudgetShares is the admission rule of issue #42 item 2 on the budget itself: a
// client address holds at most perClient whatever its number of requests, large requests
// together hold at most size − smallShare, the small share stays for small requests, a client
// holds at most its part of the small share, and giving back restores every account.
func TestBodyBudgetShares(t *testing.T) {
	t.Parallel()
	const size = 1 << 20 // small share 128 KiB, a client's part of it 32 KiB
	b := newBodyBudget(size, 256<<10)
	mem := func(client string) *bodyMemory { return &bodyMemory{budget: b, client: client} }
	ctx := context.Background()
	// grow takes 64 KiB at a time up to what one request may hold; refused, it gives up and
	// releases all, as the engine does when it answers 503.
	grow := func(m *bodyMemory) bool {
		for m.held < b.maxHold() {
			if m.take(64<<10) != nil {
				m.release()
				return false
			}
		}
		return true
	}
	// One address: its requests together stop at perClient, however many there are.
	var held int64
	var a []*bodyMemory
	for i := 0; i < 64; i++ {
		m := mem("10.0.0.1")
		if err := m.admit(ctx, 4<<10, 0, time.Millisecond); err != nil {
			break
		}
		grow(m)
		a = append(a, m)
	}
	for _, m := range a {
		held += m.held
	}
	if held > 256<<10 || b.clients["10.0.0.1"].held != held {
		t.Errorf("one address holds %d (account %d), want at most 256 KiB", held, b.clients["10.0.0.1"].held)
	}
	// Many addresses: large requests stop at size − smallShare.
	for i := 2; i < 40; i++ {
		m := mem(fmt.Sprintf("10.0.0.%d", i))
		if m.admit(ctx, 4<<10, 0, time.Millisecond) == nil {
			grow(m)
		}
	}
	if b.large > size-b.smallShare {
		t.Errorf("large requests hold %d, want at most %d", b.large, size-b.smallShare)
	}
	// The small share is left: a small request of a new address passes at once; one address's
	// small requests stop at its part of the share.
	var smalls int64
	for i := 0; i < 64; i++ {
		m := mem("10.1.0.1")
		if m.admit(ctx, 1<<10, 0, time.Millisecond) != nil {
			break
		}
		smalls += m.held
	}
	if smalls < b.perClientSmall-1<<10 || smalls > b.perClientSmall {
		t.Errorf("one address's small requests hold %d, want about %d", smalls, b.perClientSmall)
	}
	login := mem("10.2.0.1")
	if err := login.admit(ctx, 1<<10, 0, time.Millisecond); err != nil {
		t.Errorf("a small request with every large request holding: %v, want room", err)
	}
	login.release()
	for _, m := range a {
		m.release()
	}
	if _, ok := b.clients["10.0.0.1"]; ok {
		t.Error("a client that holds nothing keeps an account")
	}
}

// TestBodyBudgetQueue: a request that holds nothing waits in line and is granted when room
// frees up; a waiter whose wait or context ends answers ErrServiceBusy and leaves the line; a
// holder that is not the oldest is refused at once instead of waiting (no cycles).
func TestBodyBudgetQueue(t *testing.T) {
	t.Parallel()
	b := newBodyBudget(64<<10, 0) // small share 8 KiB, large part 56 KiB
	ctx := context.Background()
	old := &bodyMemory{budget: b, client: "a"}
	if err := old.admit(ctx, 56<<10, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	young := &bodyMemory{budget: b, client: "b"}
	if err := young.admit(ctx, 4<<10, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := young.grow(ctx, 60<<10, time.Minute); !errors.Is(err, ErrServiceBusy) || time.Since(start) > 10*time.Second {
		t.Errorf("growth of a younger holder with no room = %v after %s, want ErrServiceBusy at once", err, time.Since(start))
	}
	if err := (&bodyMemory{budget: b, client: "c"}).admit(ctx, 40<<10, 0, 10*time.Millisecond); !errors.Is(err, ErrServiceBusy) {
		t.Errorf("admission with no room and a short wait = %v, want ErrServiceBusy", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := (&bodyMemory{budget: b, client: "c"}).admit(cctx, 40<<10, 0, time.Minute); !errors.Is(err, ErrServiceBusy) {
		t.Errorf("admission with an ended context = %v, want ErrServiceBusy", err)
	}
	if len(b.queue) != 0 {
		t.Errorf("queue = %d after the waiters gave up, want 0", len(b.queue))
	}
	done := make(chan error, 1)
	waiter := &bodyMemory{budget: b, client: "c"}
	go func() { done <- waiter.admit(ctx, 40<<10, 0, time.Minute) }()
	svcEventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) == 1 })
	old.release()
	if err := <-done; err != nil {
		t.Errorf("admission after a release = %v, want nil", err)
	}
	waiter.release()
	young.release()
	if b.used != 0 || b.large != 0 || len(b.clients) != 0 || b.holders.Len() != 0 {
		t.Errorf("after every release: used %d, large %d, clients %d, holders %d; want all 0", b.used, b.large, len(b.clients), b.holders.Len())
	}
}

// svcEventually polls cond for up to 10 s.
func svcEventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFill: a body of exactly the limit fits; one byte more answers errOverflow with every byte
// read; a refused growth answers its error with the bytes read so far; what is charged follows
// what arrived (chunks), and joining the chunks gives back their excess.
func TestFill(t *testing.T) {
	t.Parallel()
	var paid int64
	take := func(k int64) error { paid += k; return nil }
	give := func(k int64) { paid -= k }
	data := bytes.Repeat([]byte("abcdefgh"), 100000)
	got, err := fill(bytes.NewReader(data), 1, int64(len(data)), take, give)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("fill at the limit = %d bytes, %v; want %d, nil", len(got), err, len(data))
	}
	if paid != int64(cap(got)) {
		t.Errorf("charged %d after the join, want the buffer's %d", paid, cap(got))
	}
	paid = 0
	got, err = fill(bytes.NewReader(data), 1, int64(len(data))-1, take, give)
	if err != errOverflow || !bytes.Equal(got, data) {
		t.Fatalf("fill over the limit = %d bytes, %v; want all %d bytes, errOverflow", len(got), err, len(data))
	}
	paid = 0
	stingy := func(k int64) error {
		if paid+k > 2048 {
			return ErrServiceBusy
		}
		paid += k
		return nil
	}
	// 512 + 1024 taken, the next chunk (2048) would pass 2048: refused after 1536 bytes.
	got, err = fill(bytes.NewReader(data), 512, 1<<20, stingy, give)
	if !errors.Is(err, ErrServiceBusy) || !bytes.Equal(got, data[:len(got)]) || len(got) != 1536 {
		t.Fatalf("fill with a refused growth = %d bytes, %v; want the first 1536, ErrServiceBusy", len(got), err)
	}
	// A body is charged as it arrives: 10 bytes of a declared megabyte, then the client is
	// gone, cost one first chunk.
	paid = 0
	cut := io.MultiReader(bytes.NewReader(data[:10]), iotest.ErrReader(io.ErrUnexpectedEOF))
	if _, err := fill(cut, firstBodyChunk, 1<<20, take, give); err == nil || paid > firstBodyChunk {
		t.Errorf("a body cut after 10 bytes: %v, charged %d; want its error and at most %d", err, paid, firstBodyChunk)
	}
}

// TestBodyBudgetBusy: with the budget taken, a request waits BodyMemoryWait and answers
// 503/1900 with Retry-After; once room frees up, the same request succeeds.
func TestBodyBudgetBusy(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{BodyLimit: 64 << 10, BodyMemoryBudget: 64 << 10, BodyMemoryWait: 20 * time.Millisecond}, testResource())
	env := envelopeJSON("test/things", "public_echo", "v1", `{"id":7}`)
	// Two other addresses hold the budget: one its large part, one the small share.
	hog := bodyMemory{budget: e.budget, client: "198.51.100.1"}
	if err := hog.admit(context.Background(), e.budget.size-e.budget.smallShare, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	hogSmall := bodyMemory{budget: e.budget, client: "198.51.100.2"}
	if err := hogSmall.admit(context.Background(), e.budget.smallShare, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, encoding, body string }{
		{"plain", "", env},
		{"gzip+base64", EncodingGzipBase64, b64(gz(t, env))},
	} {
		res := serve(t, e, post(tc.body, HeaderBodyEncoding, tc.encoding))
		if res.Status != http.StatusServiceUnavailable || res.Code != CodeUnknown || !strings.Contains(res.Message, "busy") {
			t.Errorf("%s with the budget taken: %d %d %q, want 503 1900 busy", tc.name, res.Status, res.Code, res.Message)
		}
		if got := res.Header.Get("Retry-After"); got != "1" {
			t.Errorf("%s: Retry-After = %q, want 1", tc.name, got)
		}
	}
	hog.release()
	hogSmall.release()
	if res := serve(t, e, post(env)); res.Status != 200 || res.Code != 0 {
		t.Errorf("with room: %d %d %q, want 200 0", res.Status, res.Code, res.Message)
	}
	if e.budget.used != 0 {
		t.Errorf("budget used after the requests = %d, want 0", e.budget.used)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gzipBomb is the base64 text of mib MiB of zeros, gzipped as one member per MiB (a gzip reader
// reads concatenated members as one stream), so building a large bomb costs one compression.
func gzipBomb(t testing.TB, mib int) []byte {
	t.Helper()
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(make([]byte, 1<<20))
	w.Close()
	return []byte(b64(bytes.Repeat(z.Bytes(), mib)))
}

// TestGzipBombStopsAtLimit: a gzip+base64 body inflating to 256 MiB answers 413 having read only
// the beginning of the encoded text: inflating stops as soon as the decoded bytes cross the
// limit, the bomb is never expanded (nor even read whole).
func TestGzipBombStopsAtLimit(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	e := newEngine(t, EngineConfig{BodyLimit: limit}, testResource())
	bomb := gzipBomb(t, 256)
	body := &countingReader{r: bytes.NewReader(bomb)}
	r := post("", HeaderBodyEncoding, EncodingGzipBase64)
	r.Body, r.ContentLength = io.NopCloser(body), -1 // unknown length: only the stream can tell
	res := serve(t, e, r)
	if res.Status != http.StatusRequestEntityTooLarge || res.Code != CodeBadRequest {
		t.Fatalf("gzip bomb: %d %d %q, want 413 1400", res.Status, res.Code, res.Message)
	}
	if body.n >= limit/2 {
		t.Errorf("read %d of %d encoded bytes before answering 413, want a small prefix", body.n, len(bomb))
	}
}

// TestReadBodySharesBudget: ReadBody (the integration gateway's reader) pays from the engine's
// one budget, copies included, under the same shares: while its body holds the large part of
// the budget a large /api body finds no room (503) but a small call still passes; once
// released /api passes; a declared length over the limit is refused before any read, and
// refusals carry /api's headers.
func TestReadBodySharesBudget(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{BodyLimit: 64 << 10, BodyMemoryBudget: 96 << 10, BodyMemoryPerClient: 96 << 10,
		BodyMemoryWait: 20 * time.Millisecond}, testResource())
	body := strings.Repeat("x", 28<<10)
	r := httptest.NewRequest(http.MethodPost, "/in", strings.NewReader(body))
	got, release, err := e.ReadBody(httptest.NewRecorder(), r, 0, 2)
	if err != nil || string(got) != body {
		t.Fatalf("ReadBody = %d bytes, %v; want the body", len(got), err)
	}
	if e.budget.used != 84<<10 {
		t.Errorf("budget used = %d, want %d (the body and two copies)", e.budget.used, 84<<10)
	}
	env := envelopeJSON("test/things", "public_echo", "v1", `{"id":7}`)
	if res := serve(t, e, post(env)); res.Status != 200 {
		t.Errorf("a small /api call while ReadBody holds the large part: %d, want 200 (the small share)", res.Status)
	}
	large := envelopeJSON("test/things", "public_echo", "v1", `{"id":7,"pad":"`+strings.Repeat("y", 40<<10)+`"}`)
	if res := serve(t, e, post(large)); res.Status != http.StatusServiceUnavailable {
		t.Errorf("a large /api body while ReadBody holds the large part: %d, want 503", res.Status)
	}
	w := httptest.NewRecorder()
	if _, rel, err := e.ReadBody(w, httptest.NewRequest(http.MethodPost, "/in", strings.NewReader(strings.Repeat("z", 40<<10))), 0, 0); !errors.Is(err, ErrServiceBusy) || w.Header().Get("Retry-After") != "1" {
		t.Errorf("second large ReadBody with no room = %v, Retry-After %q; want ErrServiceBusy, 1", err, w.Header().Get("Retry-After"))
	} else {
		rel()
	}
	release()
	if res := serve(t, e, post(large)); res.Status != 200 {
		t.Errorf("large /api body after release: %d, want 200", res.Status)
	}
	big := &countingReader{r: strings.NewReader(strings.Repeat("x", 100))}
	r = httptest.NewRequest(http.MethodPost, "/in", big)
	r.ContentLength = 100
	w = httptest.NewRecorder()
	if _, rel, err := e.ReadBody(w, r, 50, 0); !errors.Is(err, ErrBodyTooLarge) || big.n != 0 || w.Header().Get("Connection") != "close" {
		t.Errorf("declared 100 over a limit of 50 = %v after reading %d bytes, Connection %q; want ErrBodyTooLarge, 0, close", err, big.n, w.Header().Get("Connection"))
	} else {
		rel()
	}
	if e.budget.used != 0 {
		t.Errorf("budget used at the end = %d, want 0", e.budget.used)
	}
}
