// Command integration benchmarks the integration module on the real server (issue #21):
//
//   - inbound: deliveries POSTed to /integration/inbound/BENCH/bench.op over TCP through a
//     small adapter (return dispatch(JSON.parse(request.body))) into a Go handler; target
//     >= 2 000 deliveries/s with p99 <= 50 ms;
//
//   - outbound: Invoker.Invoke from host code, each run making one HTTP call to a local server;
//     target >= 1 500 invocations/s.
//
//     go run ./bench/integration -mode inbound -c 32 -d 15s
//     go run ./bench/integration -mode outbound -c 32 -d 15s
//     go run ./bench/integration -mode inbound -db postgres   # needs SVC_TEST_POSTGRES_DSN
//
// The server runs on SQLite in a temporary directory (or PostgreSQL), log mode "errors" (the
// default: successes are counted, not logged). The load generator runs in the same process and
// shares the CPU. See bench/integration/run.sh for recorded numbers.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/rpc"
)

func main() {
	mode := flag.String("mode", "inbound", "inbound or outbound")
	kind := flag.String("db", "sqlite", "sqlite or postgres (SVC_TEST_POSTGRES_DSN)")
	conc := flag.Int("c", 32, "concurrent callers")
	dur := flag.Duration("d", 15*time.Second, "measured window")
	warm := flag.Duration("warmup", 3*time.Second, "warm-up before the window")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*mode, *kind, *conc, *warm, *dur); err != nil {
		log.Print(err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

type order struct {
	ID    int    `json:"id"`
	Items []item `json:"items"`
}

type item struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

func run(mode, kind string, conc int, warm, dur time.Duration) error {
	dir, err := os.MkdirTemp("", "svc-bench-itg")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := config.Default()
	cfg.App.Port = 1
	cfg.Security.Secret = strings.Repeat("b", 64)
	cfg.Storage.Provider = config.StorageMemory
	cfg.Integration.AutoMigrate = true
	cfg.Integration.Inbound.RateLimit = config.RateLimit{Max: 1 << 30, Period: time.Minute}
	cfg.API.RateLimit = config.RateLimit{Max: 1 << 30, Period: time.Minute}
	ds := config.DataSource{Type: config.SQLite, Path: filepath.Join(dir, "svc.db")}
	if kind == "postgres" {
		u, err := url.Parse(os.Getenv("SVC_TEST_POSTGRES_DSN"))
		if err != nil || u.Host == "" {
			return fmt.Errorf("SVC_TEST_POSTGRES_DSN is not set")
		}
		pw, _ := u.User.Password()
		ds = config.DataSource{Type: config.Postgres, Host: u.Hostname(), User: u.User.Username(), Password: pw,
			Database: strings.TrimPrefix(u.Path, "/"), Schema: fmt.Sprintf("bench_itg_%d", time.Now().UnixNano())}
	}
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: ds}
	handler := integration.NewInboundHandler("bench.op", func(_ context.Context, o order) (map[string]any, error) {
		return map[string]any{"accepted": o.ID, "lines": len(o.Items)}, nil
	})
	srv, err := svc.New(cfg, svc.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		svc.WithIntegration(integration.Options{InboundHandlers: []integration.InboundHandler{handler}}))
	if err != nil {
		return err
	}
	ctx := context.Background()
	running, err := srv.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Stop(context.Background())
	if ds.Schema != "" {
		defer running.DB().ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+ds.Schema+" CASCADE")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: running.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"ref":"R-1"}`))
	}))
	defer upstream.Close()
	if err := define(ctx, running, upstream.URL); err != nil {
		return err
	}
	body, _ := json.Marshal(order{ID: 7, Items: []item{{"A-1", 2}, {"B-2", 1}}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc * 2}}
	target := "http://" + ln.Addr().String() + "/integration/inbound/BENCH/bench.op"
	call := func() error {
		if mode == "outbound" {
			_, err := running.Integration().Invoke(ctx, "bench.op", order{ID: 7, Items: []item{{"A-1", 2}}}, integration.WithSystem("BENCH"))
			return err
		}
		res, err := client.Post(target, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}
	if err := call(); err != nil {
		return fmt.Errorf("first call: %w", err)
	}
	n, errs, lat := load(call, conc, warm, dur)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	fmt.Printf("%s db=%s c=%d window=%s: %d ok (%.0f/s), %d errors, latency p50=%s p99=%s max=%s\n",
		mode, kind, conc, dur, n, float64(n)/dur.Seconds(), errs, pct(0.50).Round(10*time.Microsecond),
		pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
	return nil
}

// load runs call from conc goroutines for warm + dur and returns the successes, errors and
// latencies measured in the window.
func load(call func() error, conc int, warm, dur time.Duration) (int64, int64, []time.Duration) {
	var ok, bad atomic.Int64
	var measuring atomic.Bool
	var mu sync.Mutex
	var lat []time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for {
				select {
				case <-stop:
					mu.Lock()
					lat = append(lat, local...)
					mu.Unlock()
					return
				default:
				}
				t := time.Now()
				err := call()
				if !measuring.Load() {
					continue
				}
				if err != nil {
					bad.Add(1)
					continue
				}
				ok.Add(1)
				local = append(local, time.Since(t))
			}
		}()
	}
	time.Sleep(warm)
	measuring.Store(true)
	time.Sleep(dur)
	measuring.Store(false)
	close(stop)
	wg.Wait()
	return ok.Load(), bad.Load(), lat
}

// define stores the benchmark's system, contract and both adapters.
func define(ctx context.Context, srv *svc.Running, upstream string) error {
	now := crud.NewTime(time.Now())
	aud := func() crud.Audited {
		return crud.Audited{ID: rpc.NewID(), CreatedAt: now, UpdatedAt: now, CreatedBy: "system", UpdatedBy: "system"}
	}
	sys := &integration.System{Audited: aud(), Code: "BENCH", Name: "bench", BaseURL: upstream, IsEnabled: true,
		InboundAuth: &integration.AuthConfig{Scheme: "none"}}
	c := &integration.Contract{Audited: aud(), Code: "bench.op", Name: "bench", IsEnabled: true,
		InputSchema: json.RawMessage(`{"type":"object","required":["id"]}`)}
	out := &integration.Adapter{Audited: aud(), SystemID: sys.ID, ContractID: c.ID, Direction: integration.DirectionOutbound, IsEnabled: true,
		Script: `const r = http.post('/orders', {id: input.id, lines: input.items.length}); return r.json()`}
	in := &integration.Adapter{Audited: aud(), SystemID: sys.ID, ContractID: c.ID, Direction: integration.DirectionInbound, IsEnabled: true,
		Script: `return dispatch(JSON.parse(request.body))`}
	for _, m := range []any{sys, c, out, in} {
		if _, err := srv.DB().NewInsert().Model(m).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
