// Command faults is the fault-injection run of issue #33: three `svc serve` nodes built from the
// tree on one private PostgreSQL (or MariaDB), Redis and S3 server, under mixed load through
// /api and the other routes (cron http.request jobs to a sink, logins and logouts, resumable
// uploads, push sockets, approval instances decided on every node, inbound integration
// deliveries; events checked through the outbox, the inbox and the sockets), while a seeded
// schedule kills, pauses and cuts nodes and restarts the services under them. At the end it checks the invariants the docs promise and prints a report; it exits 1
// when any invariant was violated.
//
//	go run ./bench/faults -db postgres -duration 3m -seed 1
//	go run ./bench/faults -db mysql -duration 30m            # random seed, printed
//
// See docs/testing.md ("Fault-injection run") for what it loads, injects and checks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// harness is one run.
type harness struct {
	c     *cluster
	rec   *recorder
	admin string
	sink  *sink
	start time.Time
}

func (h *harness) log(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(h.start).Seconds(), fmt.Sprintf(format, args...))
}

type options struct {
	db        string
	duration  time.Duration
	seed      uint64
	gap       time.Duration
	faults    string
	schedules int
	svcBin    string
	s3Bin     string
	keep      bool
}

func main() {
	var o options
	flag.StringVar(&o.db, "db", "postgres", "postgres or mysql")
	flag.DurationVar(&o.duration, "duration", 3*time.Minute, "length of the loaded phase")
	flag.Uint64Var(&o.seed, "seed", 0, "seed of the fault schedule and the load (0: random, printed)")
	flag.DurationVar(&o.gap, "gap", 8*time.Second, "mean pause between two faults")
	flag.StringVar(&o.faults, "faults", strings.Join(faultKinds, ","), "fault kinds to draw from")
	flag.IntVar(&o.schedules, "schedules", 12, "cron schedules firing every second")
	flag.StringVar(&o.svcBin, "svc", "", "svc binary to run (default: go build ./cmd/svc from this tree)")
	flag.StringVar(&o.s3Bin, "versitygw", "", "versitygw binary (default: .cache/bin/versitygw, built by scripts/services.sh)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (logs, data) after the run")
	flag.Parse()
	if o.seed == 0 {
		o.seed = rand.Uint64()%1_000_000 + 1
	}
	violations, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(2)
	}
	if violations > 0 {
		fmt.Printf("FAIL: %d invariant violations (seed %d, replay: go run ./bench/faults -db %s -seed %d -duration %s)\n", violations, o.seed, o.db, o.seed, o.duration)
		os.Exit(1)
	}
	fmt.Printf("PASS: no invariant violations (seed %d, db %s, %s)\n", o.seed, o.db, o.duration)
}

// repoRoot is the directory of the module's go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/svc-framework/svc\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the svc source tree")
		}
		dir = parent
	}
}

func run(o options) (int, error) {
	root, err := repoRoot()
	if err != nil {
		return 0, err
	}
	for _, k := range strings.Split(o.faults, ",") {
		if k != "" && !contains(faultKinds, k) {
			return 0, fmt.Errorf("unknown fault kind %q (have %s)", k, strings.Join(faultKinds, ","))
		}
	}
	dir, err := os.MkdirTemp("", "svc-faults-")
	if err != nil {
		return 0, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return 0, err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	h := &harness{rec: &recorder{}, start: time.Now()}
	h.log("seed %d, db %s, duration %s, faults %s, work dir %s", o.seed, o.db, o.duration, o.faults, dir)
	if o.svcBin == "" {
		o.svcBin = filepath.Join(dir, "svc")
		build := command(nil, "go", "build", "-o", o.svcBin, "./cmd/svc")
		build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 0, fmt.Errorf("go build ./cmd/svc: %w", err)
		}
	}
	if o.s3Bin == "" {
		o.s3Bin = filepath.Join(root, ".cache", "bin", "versitygw")
	}
	if _, err := os.Stat(o.s3Bin); err != nil {
		return 0, fmt.Errorf("no S3 server binary (%w): run scripts/services.sh, which builds it", err)
	}
	c, err := newCluster(dir, o.svcBin, o.s3Bin, o.db, 3)
	h.c = c
	defer func() {
		c.stop()
		if o.keep {
			fmt.Println("logs and data kept in", dir)
		}
	}()
	if err != nil {
		return 0, fmt.Errorf("start the cluster: %w (logs in %s; -keep keeps them)", err, dir)
	}
	h.log("cluster up: 3 nodes on %s :%d, redis :%d, s3 :%d", o.db, c.db.port, c.redisPt, c.s3Port)
	if err := c.addUser("admin", adminPassword, "admin"); err != nil {
		return 0, err
	}
	ctx := context.Background()
	if h.admin, _, _, err = c.login(ctx, c.nodes[0], "admin", adminPassword); err != nil {
		return 0, fmt.Errorf("admin login: %w", err)
	}
	base := rand.New(rand.NewPCG(o.seed, 0x5eed))
	sk, err := newSink(800 * time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer sk.srv.Close()
	h.sink = sk
	cl := &cronLoad{h: h, sink: sk, schedules: o.schedules}
	if err := cl.setup(ctx); err != nil {
		return 0, err
	}
	al := &authLoad{h: h}
	if err := al.setup(); err != nil {
		return 0, err
	}
	ul := &uploadLoad{h: h}
	pl := &pushLoad{h: h, ul: ul}
	pl.setup()
	db, err := c.db.open()
	if err != nil {
		return 0, err
	}
	defer db.Close()
	apl := &approvalLoad{h: h}
	if err := apl.setup(ctx, db); err != nil {
		return 0, fmt.Errorf("approval setup: %w", err)
	}
	il := &inboundLoad{h: h}
	if err := il.setup(ctx); err != nil {
		return 0, err
	}
	baseline := h.sampleRuntime()

	h.rec.began = time.Now()
	loadCtx, stopLoad := context.WithTimeout(ctx, o.duration)
	defer stopLoad()
	// No new fault in the last part of the run: the cluster settles under load.
	faultCtx, stopFaults := context.WithTimeout(ctx, max(o.duration-20*time.Second, o.duration/2))
	defer stopFaults()
	var wg sync.WaitGroup
	wg.Go(func() {
		h.injectFaults(faultCtx, rand.New(rand.NewPCG(base.Uint64(), 1)), strings.Split(o.faults, ","), o.gap)
	})
	loads := []func(context.Context, *rand.Rand){cl.run, al.run, ul.run, pl.run, apl.run, il.run}
	for _, l := range loads {
		r := rand.New(rand.NewPCG(base.Uint64(), 2))
		wg.Go(func() { l(loadCtx, r) })
	}
	wg.Wait()
	h.log("load over")

	// The cluster must be ready again within the bound after the last fault.
	ready := newCheck("cluster.ready_after_last_fault")
	ready.checked = len(c.nodes)
	if took, err := c.allReady(recoveryBound, h.admin); err != nil {
		ready.fail("not ready %s after the last fault: %v", recoveryBound, err)
	} else {
		h.log("all nodes ready (%.1fs)", took.Seconds())
	}
	h.rec.addCheck(*ready)
	if err := cl.stop(ctx); err != nil {
		return 0, err
	}
	if err := cl.check(db); err != nil {
		return 0, fmt.Errorf("cron check: %w", err)
	}
	al.check(ctx)
	if err := ul.check(ctx, db, rand.New(rand.NewPCG(o.seed, 3))); err != nil {
		return 0, fmt.Errorf("storage check: %w", err)
	}
	pl.check()
	if err := apl.check(ctx); err != nil {
		return 0, fmt.Errorf("approval check: %w", err)
	}
	if err := h.checkEvents(ctx, db, apl, pl); err != nil {
		return 0, fmt.Errorf("events check: %w", err)
	}
	if err := il.check(ctx, db); err != nil {
		return 0, fmt.Errorf("integration check: %w", err)
	}
	h.checkRuntime(baseline)
	h.check5xx()
	h.rec.report(os.Stdout)
	fmt.Printf("\nseed %d, db %s, duration %s\n", o.seed, o.db, o.duration)
	return h.rec.violations(), nil
}

const adminPassword = "faults-Admin-Password-1"

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// runtimeSample is one node's goroutines and resident memory.
type runtimeSample struct{ goroutines, rss float64 }

func (h *harness) sampleRuntime() []runtimeSample {
	out := make([]runtimeSample, len(h.c.nodes))
	for i, n := range h.c.nodes {
		out[i] = runtimeSample{h.c.metric(n, "go_goroutines"), h.c.metric(n, "process_resident_memory_bytes")}
	}
	return out
}

// Growth bounds across a run, per node, against the largest baseline of the three (a restarted
// node starts over, so its own baseline is gone).
const (
	goroutineGrowth = 200
	rssGrowth       = 200 << 20
)

func (h *harness) checkRuntime(baseline []runtimeSample) {
	var g, m float64
	for _, b := range baseline {
		g, m = max(g, b.goroutines), max(m, b.rss)
	}
	gc, mc := newCheck("cluster.goroutine_growth_bounded"), newCheck("cluster.memory_growth_bounded")
	for i, s := range h.sampleRuntime() {
		gc.checked++
		mc.checked++
		if s.goroutines == 0 || s.goroutines > g+goroutineGrowth {
			gc.fail("node%d: %v goroutines, baseline %v (+%d allowed)", i, s.goroutines, g, goroutineGrowth)
		}
		if s.rss == 0 || s.rss > m+rssGrowth {
			mc.fail("node%d: RSS %.0f MiB, baseline %.0f MiB (+%d MiB allowed)", i, s.rss/(1<<20), m/(1<<20), rssGrowth>>20)
		}
	}
	h.log("runtime: baseline max %v goroutines, %.0f MiB", g, m/(1<<20))
	h.rec.addCheck(*gc)
	h.rec.addCheck(*mc)
}

// check5xx counts 5xx answers and unanswered requests outside every fault window.
func (h *harness) check5xx() {
	c := newCheck("cluster.5xx_only_in_fault_windows")
	u := newCheck("cluster.answered_outside_fault_windows")
	h.rec.mu.Lock()
	for _, s := range h.rec.samples {
		c.checked++
		u.checked++
		if h.rec.inWindow(s) {
			continue
		}
		if s.status >= 500 {
			c.fail("%s at %.1fs answered %d", s.kind, s.start.Sub(h.rec.began).Seconds(), s.status)
		}
		if s.status == 0 && !s.ok {
			u.fail("%s at %.1fs got no answer", s.kind, s.start.Sub(h.rec.began).Seconds())
		}
	}
	h.rec.mu.Unlock()
	h.rec.addCheck(*c)
	h.rec.addCheck(*u)
}
