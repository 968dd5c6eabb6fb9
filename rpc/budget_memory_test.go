package rpc

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBodyMemoryUnderLoad is issue #11's attack, over real TCP: 64 parallel bodies of the maximum
// size (32 MiB, the default svc.app.body_limit) and 64 parallel gzip bombs (64 MiB inflated
// each) at the same time keep the heap within 200 MiB of idle. The default budget (64 MiB)
// admits the bodies a few at a time; a bomb answers 413 (alone, always; under load, 503 while
// the budget is full), never inflated past the limit. Peak heap is sampled with runtime.ReadMemStats; the test
// is not parallel, so no other test's allocations count.
func TestBodyMemoryUnderLoad(t *testing.T) {
	const (
		clients  = 64
		maxHeap  = 200 << 20
		bodySize = DefaultBodyLimit
	)
	e := newEngine(t, EngineConfig{}, testResource())
	srv := httptest.NewServer(e)
	defer srv.Close()
	// The client's bodies are generated as they are sent, so only the server's memory counts.
	block := repeatReader(bytes.Repeat([]byte("x"), 64<<10))
	plain := func() io.Reader { return io.LimitReader(block, bodySize) } // not JSON: read whole, then 400
	bomb := gzipBomb(t, 64)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableKeepAlives: true}}
	defer client.CloseIdleConnections()

	// The bound is about what the requests hold, not about when the collector runs: a soft memory
	// limit under the bound makes it collect the refused bodies' garbage before it piles up (at
	// GOGC 100 alone the peak moved between 150 and 217 MiB from run to run), while bodies the
	// budget failed to bound would still be live and push the heap past maxHeap.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(160 << 20))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	idle := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	var mu sync.Mutex
	statuses := map[string]int{}
	var wg sync.WaitGroup
	send := func(kind string, body io.Reader, size int64, encoding string) {
		defer wg.Done()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api", body)
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		if encoding != "" {
			req.Header.Set(HeaderBodyEncoding, encoding)
		}
		res, err := client.Do(req)
		key := kind + " "
		if err != nil {
			key += "transport error" // the server may close a refused body's connection early
		} else {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			key += fmt.Sprint(res.StatusCode)
		}
		mu.Lock()
		statuses[key]++
		mu.Unlock()
	}
	// Alone, a bomb is inflated up to the limit and refused as too large.
	wg.Add(1)
	send("alone bomb", bytes.NewReader(bomb), int64(len(bomb)), EncodingGzipBase64)
	if statuses["alone bomb 413"] != 1 {
		t.Fatalf("a gzip bomb alone: %v, want 413", statuses)
	}
	for range clients {
		wg.Add(2)
		go send("plain", plain(), bodySize, "")
		go send("bomb", bytes.NewReader(bomb), int64(len(bomb)), EncodingGzipBase64)
	}
	wg.Wait()
	close(stop)
	<-sampled

	grew := int64(peak.Load()) - int64(idle)
	t.Logf("heap in use: idle %d MiB, peak %d MiB (+%d MiB); answers %v", idle>>20, peak.Load()>>20, grew>>20, statuses)
	if grew > maxHeap {
		t.Errorf("heap grew by %d MiB under load, want at most %d MiB", grew>>20, maxHeap>>20)
	}
	for key := range statuses {
		switch key {
		case "alone bomb 413", "plain 400", "plain 503", "plain transport error", "bomb 413", "bomb 503", "bomb transport error":
			// 503 and a closed connection (the server refuses and closes while the client still
			// writes) are the budget's refusals.
		default:
			t.Errorf("unexpected answer %q (%d times)", key, statuses[key])
		}
	}
	if statuses["plain 400"] == 0 {
		t.Errorf("answers %v: want some maximum-size bodies read whole (400)", statuses)
	}
	if e.budget.used != 0 {
		t.Errorf("budget used after the load = %d, want 0", e.budget.used)
	}
}

// repeatReader is an endless stream of one byte, copied from a small block.
type repeatReader []byte

func (r repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], r)
	}
	return n, nil
}
