// Command server is `svc serve` with push enabled plus three benchmark routes used by
// bench/push/run.sh: GET /bench/stats (connections, drops and the process's memory after a
// GC), POST /bench/broadcast (one broadcast whose payload carries the send time) and
// POST /bench/users?rate=R&seconds=S&users=N (R pushes a second to single users, round robin,
// for S seconds, each payload carrying its send time).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/bench/internal/procstat"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/push"
)

func main() {
	cfgPath := flag.String("config", "", "application.toml")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: *cfgPath})
	if err != nil {
		log.Fatal(err)
	}
	var pushes *push.Service // set once Start returned, before the listener serves
	routes := func(app.Deps) (app.Module, error) {
		return app.Module{Name: "bench", Routes: []app.Route{
			{Pattern: "GET /bench/stats", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stats(w, pushes) })},
			{Pattern: "POST /bench/broadcast", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { broadcast(w, r, pushes) })},
			{Pattern: "POST /bench/users", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { users(w, r, pushes) })},
		}}, nil
	}
	srv, err := svc.New(cfg, svc.WithModule(routes))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", cfg.App.ListenAddress())
	if err != nil {
		log.Fatal(err)
	}
	running, err := srv.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	pushes = running.Push()
	if err := app.Serve(ctx, ln, running.Handler(), svc.ShutdownGrace, srv.Logger()); err != nil {
		log.Print(err)
	}
	if err := srv.Stop(context.WithoutCancel(ctx)); err != nil {
		log.Print(err)
	}
}

// stats answers the node's connections, drops and memory after a full GC.
func stats(w http.ResponseWriter, p *push.Service) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"connections": p.Connections(), "dropped": p.Dropped(), "goroutines": runtime.NumGoroutine(),
		"heapInuse": m.HeapInuse, "stackInuse": m.StackInuse, "sys": m.Sys, "rss": procstat.RSS(), "cpu": procstat.CPUSeconds(),
	})
}

func payload() map[string]int64 { return map[string]int64{"t": time.Now().UnixNano()} }

func broadcast(w http.ResponseWriter, r *http.Request, p *push.Service) {
	if err := p.Push(r.Context(), push.NewMessage("bcast", payload()), push.Broadcast()); err != nil {
		http.Error(w, err.Error(), 500)
	}
}

// users sends rate pushes a second for seconds, each to one user of u0..u<users-1>, paced every
// millisecond, and answers how many it sent and how long that took.
func users(w http.ResponseWriter, r *http.Request, p *push.Service) {
	q := r.URL.Query()
	rate, _ := strconv.Atoi(q.Get("rate"))
	secs, _ := strconv.Atoi(q.Get("seconds"))
	n, _ := strconv.Atoi(q.Get("users"))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "u" + strconv.Itoa(i)
	}
	start := time.Now()
	sent, next := 0, 0
	total := rate * secs
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for sent < total {
		due := min(int(time.Since(start).Seconds()*float64(rate)), total)
		for ; sent < due; sent++ {
			_ = p.Push(context.Background(), push.NewMessage("one", payload()), push.ToUsers(ids[next]))
			next = (next + 1) % n
		}
		<-tick.C
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"sent": sent, "seconds": time.Since(start).Seconds()})
}
