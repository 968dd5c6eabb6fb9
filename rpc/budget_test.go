package rpc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBodyBudgetQueue: waiters are served first come, first served as room frees up; a waiter
// whose wait or context ends answers ErrServiceBusy and leaves the line.
func TestBodyBudgetQueue(t *testing.T) {
	t.Parallel()
	b := newBodyBudget(100)
	if !b.tryAcquire(80) {
		t.Fatal("tryAcquire(80) of an empty budget of 100 refused")
	}
	if b.tryAcquire(30) {
		t.Fatal("tryAcquire(30) with 20 free succeeded")
	}
	if err := b.acquire(context.Background(), 30, 10*time.Millisecond); !errors.Is(err, ErrServiceBusy) {
		t.Fatalf("acquire(30) with 20 free and a short wait = %v, want ErrServiceBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.acquire(ctx, 30, time.Minute); !errors.Is(err, ErrServiceBusy) {
		t.Fatalf("acquire with an ended context = %v, want ErrServiceBusy", err)
	}

	// Queued waiters are granted in order while they fit.
	big := &budgetWaiter{n: 60, ready: make(chan struct{})}
	small := &budgetWaiter{n: 10, ready: make(chan struct{})}
	huge := &budgetWaiter{n: 50, ready: make(chan struct{})}
	b.queue = []*budgetWaiter{big, small, huge}
	b.release(80) // 100 free: the 60 and the 10 fit, the 50 does not
	if !closed(big.ready) || !closed(small.ready) || closed(huge.ready) {
		t.Errorf("granted 60, 10, 50 = %v, %v, %v; want true, true, false", closed(big.ready), closed(small.ready), closed(huge.ready))
	}
	if b.used != 70 || len(b.queue) != 1 {
		t.Errorf("used = %d, queue = %d; want 70, 1", b.used, len(b.queue))
	}

	// Growth (tryAcquire) and small admissions pass the queued 50 while room is free; a large
	// admission queues behind it.
	if !b.tryAcquire(10) {
		t.Error("tryAcquire(10) with 30 free refused because of the queue")
	}
	if err := b.acquire(context.Background(), 10, time.Millisecond); err != nil {
		t.Errorf("small acquire(10) with 20 free = %v, want it to pass the queue", err)
	}
	large := newBodyBudget(1 << 20)
	large.queue = []*budgetWaiter{{n: 1 << 20, ready: make(chan struct{})}}
	if err := large.acquire(context.Background(), smallAdmission+1, time.Millisecond); !errors.Is(err, ErrServiceBusy) {
		t.Errorf("large acquire with room but a queue = %v, want ErrServiceBusy after waiting", err)
	}
	b.queue = nil
	b.release(20)

	// A waiter is granted when room frees up while it waits.
	done := make(chan error, 1)
	go func() { done <- b.acquire(context.Background(), 60, time.Minute) }()
	b.release(70)
	if err := <-done; err != nil {
		t.Errorf("acquire after a release = %v, want nil", err)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestBodyMemoryTake: growth is paid from the admission first, then only from free room; one
// request never reserves more than the whole budget.
func TestBodyMemoryTake(t *testing.T) {
	t.Parallel()
	b := newBodyBudget(100)
	m := bodyMemory{budget: b}
	if err := m.admit(context.Background(), 40, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := m.take(30); err != nil || b.used != 40 {
		t.Fatalf("take(30) within the admission = %v, used %d; want nil, 40", err, b.used)
	}
	if err := m.take(30); err != nil || b.used != 60 {
		t.Fatalf("take(30) past the admission = %v, used %d; want nil, 60", err, b.used)
	}
	other := bodyMemory{budget: b}
	if err := other.admit(context.Background(), 40, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := m.take(1); !errors.Is(err, ErrServiceBusy) {
		t.Fatalf("take(1) of a full budget = %v, want ErrServiceBusy", err)
	}
	other.release()
	if err := m.take(1000); err != nil || b.used != 100 {
		t.Fatalf("take(1000) alone = %v, used %d; want nil and the whole budget", err, b.used)
	}
	m.release()
	if b.used != 0 {
		t.Errorf("used after release = %d, want 0", b.used)
	}
}

// TestFill: a body of exactly the limit fits; one byte more answers errOverflow with every byte
// read; a refused growth answers its error with the bytes read so far.
func TestFill(t *testing.T) {
	t.Parallel()
	free := func(int64) error { return nil }
	data := bytes.Repeat([]byte("abcdefgh"), 1000)
	got, err := fill(bytes.NewReader(data), 1, int64(len(data)), free)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("fill at the limit = %d bytes, %v; want %d, nil", len(got), err, len(data))
	}
	got, err = fill(bytes.NewReader(data), 1, int64(len(data))-1, free)
	if err != errOverflow || !bytes.Equal(got, data) {
		t.Fatalf("fill over the limit = %d bytes, %v; want all %d bytes, errOverflow", len(got), err, len(data))
	}
	var paid int64
	stingy := func(k int64) error {
		if paid+k > 2048 {
			return ErrServiceBusy
		}
		paid += k
		return nil
	}
	// 512 + 1024 + 2048 bytes taken would pass 2048: the growth to 2048 is refused.
	got, err = fill(bytes.NewReader(data), 512, 1<<20, stingy)
	if !errors.Is(err, ErrServiceBusy) || !bytes.Equal(got, data[:len(got)]) || len(got) != 1024 {
		t.Fatalf("fill with a refused growth = %d bytes, %v; want the first 1024, ErrServiceBusy", len(got), err)
	}
}

// TestBodyBudgetBusy: with the budget taken, a request waits BodyMemoryWait and answers
// 503/1900 with Retry-After; once room frees up, the same request succeeds.
func TestBodyBudgetBusy(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{BodyLimit: 64 << 10, BodyMemoryBudget: 64 << 10, BodyMemoryWait: 20 * time.Millisecond}, testResource())
	env := envelopeJSON("test/things", "public_echo", "v1", `{"id":7}`)
	hog := bodyMemory{budget: e.budget}
	if err := hog.admit(context.Background(), 64<<10, time.Second); err != nil {
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
// one budget, copies included: while its body is held, /api finds no room and answers 503, and
// once released /api passes; a declared length over the limit is refused before any read, and
// refusals carry /api's headers.
func TestReadBodySharesBudget(t *testing.T) {
	t.Parallel()
	e := newEngine(t, EngineConfig{BodyLimit: 64 << 10, BodyMemoryBudget: 96 << 10, BodyMemoryWait: 20 * time.Millisecond}, testResource())
	body := strings.Repeat("x", 32<<10)
	r := httptest.NewRequest(http.MethodPost, "/in", strings.NewReader(body))
	got, release, err := e.ReadBody(httptest.NewRecorder(), r, 0, 2)
	if err != nil || string(got) != body {
		t.Fatalf("ReadBody = %d bytes, %v; want the body", len(got), err)
	}
	if e.budget.used != 96<<10 {
		t.Errorf("budget used = %d, want %d (the body and two copies)", e.budget.used, 96<<10)
	}
	env := envelopeJSON("test/things", "public_echo", "v1", `{"id":7}`)
	if res := serve(t, e, post(env)); res.Status != http.StatusServiceUnavailable {
		t.Errorf("/api while ReadBody holds the budget: %d, want 503", res.Status)
	}
	w := httptest.NewRecorder()
	if _, rel, err := e.ReadBody(w, httptest.NewRequest(http.MethodPost, "/in", strings.NewReader("{}")), 0, 0); !errors.Is(err, ErrServiceBusy) || w.Header().Get("Retry-After") != "1" {
		t.Errorf("second ReadBody with no room = %v, Retry-After %q; want ErrServiceBusy, 1", err, w.Header().Get("Retry-After"))
	} else {
		rel()
	}
	release()
	if res := serve(t, e, post(env)); res.Status != 200 {
		t.Errorf("/api after release: %d, want 200", res.Status)
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
