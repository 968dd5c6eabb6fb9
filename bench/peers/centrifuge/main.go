// Command centrifuge is the peer comparison of bench/push: the same three figures — memory per
// idle WebSocket connection, broadcast latency to every connection, pushes to single users at a
// given rate — measured on github.com/centrifugal/centrifuge, the well-known Go library for
// real-time fan-out, on this machine. It is a module of its own (go.mod here, with a replace to
// the repository root for bench/internal) so centrifuge never becomes a dependency of svc.
//
//	cd bench/peers/centrifuge && go build -o /tmp/cf . && /tmp/cf -n 2000 -rate 20000 -seconds 3
//
// The process re-executes itself as the server (-serve ADDR: the node, its WebSocket handler at
// /connection/websocket and three bench routes like bench/push/server's) so the server's memory
// and CPU are its own; the load side opens the connections (each subscribes to "all" and to its
// own channel u<i>, the analogue of svc's broadcast and push to one user) and prints the figures
// in bench/push/load's words.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/centrifugal/centrifuge"
	"github.com/coder/websocket"
	"github.com/svc-framework/svc/bench/internal/procstat"
)

func main() {
	serve := flag.String("serve", "", "run the server on this address (used by the load side)")
	addr := flag.String("addr", "127.0.0.1:18099", "server address")
	n := flag.Int("n", 2000, "connections")
	broadcasts := flag.Int("broadcasts", 5, "broadcasts to measure")
	rate := flag.Int("rate", 20000, "pushes a second to single users")
	seconds := flag.Int("seconds", 3, "duration of the single-user run")
	flag.Parse()
	if *serve != "" {
		if err := runServer(*serve); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := runLoad(*addr, *n, *broadcasts, *rate, *seconds); err != nil {
		log.Fatal(err)
	}
}

// runServer runs a centrifuge node: every connection is accepted as user "bench" and may
// subscribe to any channel.
func runServer(addr string) error {
	node, err := centrifuge.New(centrifuge.Config{LogLevel: centrifuge.LogLevelNone})
	if err != nil {
		return err
	}
	node.OnConnecting(func(context.Context, centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		return centrifuge.ConnectReply{Credentials: &centrifuge.Credentials{UserID: "bench"}}, nil
	})
	node.OnConnect(func(c *centrifuge.Client) {
		c.OnSubscribe(func(_ centrifuge.SubscribeEvent, cb centrifuge.SubscribeCallback) {
			cb(centrifuge.SubscribeReply{}, nil)
		})
	})
	if err := node.Run(); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/connection/websocket", centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{}))
	mux.HandleFunc("GET /bench/stats", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		_ = json.NewEncoder(w).Encode(stats{Connections: node.Hub().NumClients(), HeapInuse: m.HeapInuse,
			StackInuse: m.StackInuse, RSS: procstat.RSS(), CPU: procstat.CPUSeconds()})
	})
	mux.HandleFunc("POST /bench/broadcast", func(w http.ResponseWriter, _ *http.Request) {
		if _, err := node.Publish("all", payload()); err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	mux.HandleFunc("POST /bench/users", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		rate, _ := strconv.Atoi(q.Get("rate"))
		secs, _ := strconv.Atoi(q.Get("seconds"))
		users, _ := strconv.Atoi(q.Get("users"))
		start := time.Now()
		sent, next, total := 0, 0, rate*secs
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for sent < total {
			due := min(int(time.Since(start).Seconds()*float64(rate)), total)
			for ; sent < due; sent++ {
				_, _ = node.Publish("u"+strconv.Itoa(next), payload())
				next = (next + 1) % users
			}
			<-tick.C
		}
		_ = json.NewEncoder(w).Encode(map[string]int{"sent": sent})
	})
	return http.ListenAndServe(addr, mux)
}

type stats struct {
	Connections           int
	HeapInuse, StackInuse uint64
	RSS                   uint64
	CPU                   float64
}

func payload() []byte { return []byte(`{"t":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `}`) }

// recorder collects what the connections receive.
type recorder struct {
	mu        sync.Mutex
	latencies []time.Duration
	singles   atomic.Int64
}

func runLoad(addr string, n, broadcasts, rate, seconds int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	srv := exec.Command(self, "-serve", addr)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	base := "http://" + addr
	var before stats
	if !waitFor(func() bool { return get(base, &before) == nil }, 10*time.Second) {
		return fmt.Errorf("server did not answer on %s", addr)
	}
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := make([]*websocket.Conn, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 200)
	var failed atomic.Int64
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := connect(ctx, addr, i)
			if err != nil {
				failed.Add(1)
				log.Print(err)
				return
			}
			conns[i] = c
			go read(ctx, c, rec)
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		return fmt.Errorf("%d connections failed", failed.Load())
	}
	fmt.Printf("opened %d connections in %v\n", n, time.Since(start).Round(time.Millisecond))
	var idle stats
	waitFor(func() bool { return get(base, &idle) == nil && idle.Connections >= n }, 30*time.Second)
	time.Sleep(time.Second)
	_ = get(base, &idle)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) / 1024 }
	fmt.Printf("memory per idle connection: heap+stack %.1f KiB (heap %.1f, stack %.1f), RSS %.1f KiB\n",
		per(idle.HeapInuse+idle.StackInuse, before.HeapInuse+before.StackInuse), per(idle.HeapInuse, before.HeapInuse),
		per(idle.StackInuse, before.StackInuse), per(idle.RSS, before.RSS))

	cpu0 := idle.CPU
	for i := range broadcasts {
		if err := post(base + "/bench/broadcast"); err != nil {
			return err
		}
		want := n * (i + 1)
		waitFor(func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.latencies) >= want }, 10*time.Second)
		time.Sleep(200 * time.Millisecond) // the same pacing as bench/push/load
	}
	rec.mu.Lock()
	lat := slices.Clone(rec.latencies)
	rec.mu.Unlock()
	slices.Sort(lat)
	var after stats
	_ = get(base, &after)
	cpu := (after.CPU - cpu0) / float64(broadcasts)
	fmt.Printf("broadcast to %d x %d: delivered %d, p50 %v, p99 %v, max %v; server CPU %.0f ms per broadcast (%.1f µs per delivery)\n",
		n, broadcasts, len(lat), pct(lat, 0.50), pct(lat, 0.99), pct(lat, 1), cpu*1000, cpu*1e6/float64(n))

	s0 := after
	t0 := time.Now()
	resp, err := http.Post(fmt.Sprintf("%s/bench/users?rate=%d&seconds=%d&users=%d", base, rate, seconds, n), "", nil)
	if err != nil {
		return err
	}
	var sent struct{ Sent int64 }
	err = json.NewDecoder(resp.Body).Decode(&sent)
	resp.Body.Close()
	if err != nil {
		return err
	}
	waitFor(func() bool { return rec.singles.Load() >= sent.Sent }, 10*time.Second)
	elapsed := time.Since(t0)
	var s1 stats
	_ = get(base, &s1)
	fmt.Printf("single users: sent %d, received %d in %.2fs = %.0f msgs/s (target %d/s), connections %d of %d; server CPU %.1f µs per push\n",
		sent.Sent, rec.singles.Load(), elapsed.Seconds(), float64(rec.singles.Load())/elapsed.Seconds(), rate, s1.Connections, n,
		(s1.CPU-s0.CPU)*1e6/float64(max(sent.Sent, 1)))
	for _, c := range conns {
		_ = c.CloseNow()
	}
	return nil
}

// connect opens one connection and subscribes it to "all" and "u<i>" with centrifuge's JSON
// protocol, waiting for the three replies.
func connect(ctx context.Context, addr string, i int) (*websocket.Conn, error) {
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/connection/websocket", nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	cmds := fmt.Sprintf(`{"id":1,"connect":{}}`+"\n"+`{"id":2,"subscribe":{"channel":"all"}}`+"\n"+`{"id":3,"subscribe":{"channel":"u%d"}}`, i)
	if err := c.Write(ctx, websocket.MessageText, []byte(cmds)); err != nil {
		return nil, err
	}
	for replies := 0; replies < 3; {
		_, b, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			if strings.Contains(line, `"error"`) {
				return nil, fmt.Errorf("connection %d: %s", i, line)
			}
			if strings.HasPrefix(line, `{"id":`) {
				replies++
			}
		}
	}
	return c, nil
}

// read records the latency of broadcasts and counts single-user pushes; it answers the
// server's pings ({}) with pongs.
func read(ctx context.Context, c *websocket.Conn, rec *recorder) {
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		now := time.Now()
		for line := range bytes.SplitSeq(bytes.TrimSpace(b), []byte("\n")) {
			if string(line) == "{}" {
				_ = c.Write(ctx, websocket.MessageText, []byte("{}"))
				continue
			}
			var m struct {
				Push struct {
					Channel string `json:"channel"`
					Pub     struct {
						Data struct {
							T int64 `json:"t"`
						} `json:"data"`
					} `json:"pub"`
				} `json:"push"`
			}
			if json.Unmarshal(line, &m) != nil || m.Push.Pub.Data.T == 0 {
				continue
			}
			if m.Push.Channel == "all" {
				rec.mu.Lock()
				rec.latencies = append(rec.latencies, now.Sub(time.Unix(0, m.Push.Pub.Data.T)))
				rec.mu.Unlock()
			} else {
				rec.singles.Add(1)
			}
		}
	}
}

func get(base string, v any) error {
	resp, err := http.Get(base + "/bench/stats")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func post(url string) error {
	resp, err := http.Post(url, "", nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func waitFor(ok func() bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	return lat[int(p*float64(len(lat)-1))].Round(100 * time.Microsecond)
}
