// Command load is the load generator of bench/push/run.sh: it opens -n WebSocket connections
// (user u<i>, a JWT minted with the server's secret) to the push endpoint, then measures the
// server's memory per idle connection, the delivery latency of broadcasts to every connection
// and the rate of pushes to single users, through the server's /bench routes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
)

type stats struct {
	Connections int     `json:"connections"`
	Dropped     int64   `json:"dropped"`
	Goroutines  int     `json:"goroutines"`
	HeapInuse   float64 `json:"heapInuse"`
	StackInuse  float64 `json:"stackInuse"`
	RSS         float64 `json:"rss"`
	CPU         float64 `json:"cpu"`
}

// recorder collects what the clients receive.
type recorder struct {
	mu        sync.Mutex
	latencies []time.Duration // broadcast deliveries
	singles   atomic.Int64
}

func main() {
	cfgPath := flag.String("config", "", "the server's application.toml")
	n := flag.Int("n", 10000, "connections")
	broadcasts := flag.Int("broadcasts", 20, "broadcasts to measure")
	rate := flag.Int("rate", 50000, "pushes a second to single users")
	seconds := flag.Int("seconds", 10, "duration of the single-user run")
	flag.Parse()
	cfg, _, err := config.Load(config.LoadOptions{Path: *cfgPath})
	if err != nil {
		log.Fatal(err)
	}
	base := fmt.Sprintf("127.0.0.1:%d", cfg.App.Port)
	before := getStats(base)
	rec := &recorder{}
	conns := connect(cfg, base, *n, rec)
	idle := waitIdle(base, *n)
	perConn := func(after, before float64) float64 { return (after - before) / float64(*n) / 1024 }
	fmt.Printf("connections: %d open (server goroutines %d)\n", idle.Connections, idle.Goroutines)
	fmt.Printf("memory per idle connection: heap+stack %.1f KiB (heap %.1f, stack %.1f), RSS %.1f KiB\n",
		perConn(idle.HeapInuse+idle.StackInuse, before.HeapInuse+before.StackInuse),
		perConn(idle.HeapInuse, before.HeapInuse), perConn(idle.StackInuse, before.StackInuse), perConn(idle.RSS, before.RSS))

	cpu0 := getStats(base).CPU
	for i := range *broadcasts { // one at a time: each is measured alone
		post(base, "/bench/broadcast")
		want := *n * (i + 1)
		waitFor(func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.latencies) >= want }, 10*time.Second)
		time.Sleep(200 * time.Millisecond) // pacing between broadcasts, not synchronisation of a test
	}
	rec.mu.Lock()
	lat := slices.Clone(rec.latencies)
	rec.mu.Unlock()
	slices.Sort(lat)
	cpu := (getStats(base).CPU - cpu0) / float64(*broadcasts)
	fmt.Printf("broadcast to %d x %d: delivered %d, p50 %v, p99 %v, max %v; server CPU %.0f ms per broadcast (%.1f µs per delivery)\n",
		*n, *broadcasts, len(lat), pct(lat, 0.50), pct(lat, 0.99), pct(lat, 1), cpu*1000, cpu*1e6/float64(*n))

	s0 := getStats(base)
	start := time.Now()
	res := post(base, fmt.Sprintf("/bench/users?rate=%d&seconds=%d&users=%d", *rate, *seconds, *n))
	var sent struct{ Sent int64 }
	if err := json.Unmarshal(res, &sent); err != nil {
		log.Fatalf("/bench/users answered %q: %v", res, err)
	}
	waitFor(func() bool { return rec.singles.Load() >= sent.Sent }, 10*time.Second)
	elapsed := time.Since(start)
	got := rec.singles.Load()
	s1 := getStats(base)
	fmt.Printf("single users: sent %d, received %d in %.2fs = %.0f msgs/s (target %d/s), connections dropped %d; server CPU %.1f µs per push\n",
		sent.Sent, got, elapsed.Seconds(), float64(got)/elapsed.Seconds(), *rate, s1.Dropped-s0.Dropped, (s1.CPU-s0.CPU)*1e6/float64(max(sent.Sent, 1)))
	for _, c := range conns {
		_ = c.CloseNow()
	}
}

// connect opens n connections, 200 handshakes at a time, each with its reader goroutine.
func connect(cfg *config.Config, base string, n int, rec *recorder) []*websocket.Conn {
	conns := make([]*websocket.Conn, n)
	sem := make(chan struct{}, 200)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			p := &rpc.Principal{Type: rpc.PrincipalUser, ID: "u" + strconv.Itoa(i), Name: "u", Roles: []string{}}
			tok, err := security.MintAccessToken(cfg, p, time.Now())
			if err != nil {
				log.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws://"+base+cfg.Push.Path+"?__accessToken="+tok, nil)
			if err != nil {
				log.Fatalf("dial %d: %v", i, err)
			}
			conns[i] = c
			go read(c, rec)
		}()
	}
	wg.Wait()
	fmt.Printf("opened %d connections in %v\n", n, time.Since(start).Round(time.Millisecond))
	return conns
}

// read records each frame: the latency of broadcasts, the count of single-user pushes.
func read(c *websocket.Conn, rec *recorder) {
	for {
		_, b, err := c.Read(context.Background())
		if err != nil {
			return
		}
		now := time.Now()
		if bytes.Contains(b, []byte(`"type":"one"`)) {
			rec.singles.Add(1)
			continue
		}
		var m struct{ Payload struct{ T int64 } }
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		rec.mu.Lock()
		rec.latencies = append(rec.latencies, now.Sub(time.Unix(0, m.Payload.T)))
		rec.mu.Unlock()
	}
}

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(q*float64(len(sorted))), len(sorted)-1)
	return sorted[i].Round(100 * time.Microsecond)
}

// waitIdle waits until the server counts n connections and returns its stats.
func waitIdle(base string, n int) stats {
	var s stats
	waitFor(func() bool { s = getStats(base); return s.Connections >= n }, time.Minute)
	time.Sleep(2 * time.Second) // let the handshakes' garbage settle before the measuring GC
	return getStats(base)
}

func waitFor(cond func() bool, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

func getStats(base string) stats {
	resp, err := http.Get("http://" + base + "/bench/stats")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var s stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		log.Fatal(err)
	}
	return s
}

func post(base, path string) []byte {
	resp, err := http.Post("http://"+base+path, "application/json", strings.NewReader("{}"))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		k, err := resp.Body.Read(buf)
		b.Write(buf[:k])
		if err != nil {
			break
		}
	}
	return []byte(b.String())
}
