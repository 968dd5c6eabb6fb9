package integration_test

import (
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
)

// maxDelivery is the gateway's largest body (integration's maxInboundBody).
const maxDelivery = 16 << 20

// zeros is an endless reader of zero bytes that allocates nothing, so the client side of the
// memory test costs no memory.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// rss is the process's resident set in bytes (/proc/self/statm), or 0 where there is none.
func rss(t *testing.T) int64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		t.Fatalf("statm %q", raw)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// peakRSS samples rss until stop is called and answers the highest value seen.
func peakRSS(t *testing.T) (stop func() int64) {
	var peak atomic.Int64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := rss(t); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// TestInboundMemoryWithoutCredentials is issue #31 item 6's attack: 64 parallel deliveries of
// the largest body with no or wrong credentials (unknown system, none, wrong bearer token, the
// right token for a contract that does not exist, a script scheme that must read the body)
// keep the process's resident memory within idle + 200 MiB: what the headers decide is
// answered without reading the body, and the rest reads under the shared body memory budget
// (the old gateway read every body whole first, outside any budget: 24 such requests took
// 123 → 827 MB). No delivery is accepted.
func TestInboundMemoryWithoutCredentials(t *testing.T) {
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Fatalf("the resident set cannot be measured: %v (this test needs Linux's /proc)", err)
	}
	var calls atomic.Int64
	srv := inboundServer(t, config.SQLite, &calls, func(c *config.Config) {
		c.Integration.Inbound.RateLimit = config.RateLimit{Max: 10000, Period: time.Minute}
	})
	contract := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p"})
	for _, sys := range []map[string]any{
		{"code": "BEARER", "name": "b", "inboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "right"}}},
		{"code": "SCRIPTED", "name": "s", "inboundAuth": map[string]any{"scheme": "script", "params": map[string]any{"k": "right"},
			"script": "return request.headers['x-k'] === params.k && request.body.length > 0"}},
	} {
		id := create(t, srv, systemR, sys)
		create(t, srv, adapterR, map[string]any{"systemId": id, "contractId": contract, "direction": "inbound", "script": dispatchScript})
	}
	attacks := []struct {
		name, system, contract string
		headers                map[string]string
	}{
		{"unknown system", "nope", "patient.sync", nil},
		{"no credentials", "BEARER", "patient.sync", nil},
		{"wrong token", "BEARER", "patient.sync", map[string]string{"Authorization": "Bearer wrong"}},
		{"unknown contract", "BEARER", "missing.contract", map[string]string{"Authorization": "Bearer right"}},
		{"script scheme, wrong key", "SCRIPTED", "patient.sync", map[string]string{"X-K": "wrong"}},
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableKeepAlives: true}}
	defer client.CloseIdleConnections()

	debug.FreeOSMemory() // what earlier tests left behind is not counted as idle
	idle := rss(t)
	stop := peakRSS(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]map[int]int{} // attack → status → count (-1: the connection ended first)
	for i := range 64 {
		a := attacks[i%len(attacks)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/integration/inbound/"+a.system+"/"+a.contract, io.LimitReader(zeros{}, maxDelivery))
			req.ContentLength = maxDelivery
			req.Header.Set("Content-Type", "application/json")
			for k, v := range a.headers {
				req.Header.Set(k, v)
			}
			status := -1
			if res, err := client.Do(req); err == nil {
				status = res.StatusCode
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if answers[a.name] == nil {
				answers[a.name] = map[int]int{}
			}
			answers[a.name][status]++
		}()
	}
	wg.Wait()
	peak := stop()
	t.Logf("resident set: idle %d MiB, peak %d MiB (+%d MiB); answers %v", idle>>20, peak>>20, (peak-idle)>>20, answers)
	// Under the race detector the growth is the detector's too (measured +250–280 MiB where a
	// plain build grows +86 MiB): the bound is the server's and is checked by the plain run of
	// this test that scripts/test.sh makes beside the -race suite.
	if grew := peak - idle; !raceDetector && grew > 200<<20 {
		t.Errorf("64 unauthenticated maximal deliveries grew the resident set by %d MiB, want at most 200 MiB", grew>>20)
	}
	for name, byStatus := range answers {
		if byStatus[http.StatusOK] > 0 {
			t.Errorf("%s: %d deliveries accepted", name, byStatus[http.StatusOK])
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the handler ran %d times, want 0", n)
	}
}
