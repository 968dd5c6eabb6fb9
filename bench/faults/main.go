// Command faults is the fault-injection run of issue #33: three `svc serve` nodes built from the
// tree on one private PostgreSQL (or MariaDB), Redis and S3 server, under mixed load through
// /api and the other routes (cron http.request jobs to a sink, logins and logouts, resumable
// uploads, push sockets, approval instances decided on every node, inbound integration
// deliveries; events checked through the outbox, the inbox and the sockets), while a seeded
// schedule kills, pauses and cuts nodes (from the database, Redis or S3) and restarts the
// services under them, sometimes two faults at once; half-way it restarts the nodes one by one
// onto a build with one more migration (a rolling upgrade), and one node runs with its clock
// off by 2 s. At the end it checks the invariants the docs promise and prints a report; it
// exits 1 when any invariant was violated.
//
//	go run ./bench/faults -db postgres -duration 3m -seed 1
//	go run ./bench/faults -db mysql -duration 30m            # random seed, printed
//
// Each load implements load (setup, run, check) and main runs the list in one loop. A failed
// answer is excused only by a fault on the node that gave it (or on a shared service it needs),
// within the fault's window (the fault plus its measured recovery, capped at its kind's
// deadline); every check has a minimum sample; what the docs allow is counted apart.
// bench/faults/mutants/run.sh is the mutation run that proves the checks can fail.
//
// See docs/testing.md ("Fault-injection run") for what it loads, injects and checks.
package main

import (
	"context"
	"database/sql"
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
	db    *sql.DB // the harness's own handle on the run's database, for the checks
	seed  uint64
	start time.Time
	// builds are the run's svc binaries (buildAll); upgraded is set once the rolling upgrade
	// is done (under rec.mu).
	builds   *builds
	upgraded bool
	// skew is how far node skewNode's clock is off.
	skew time.Duration
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
	double    float64
	svcBin    string
	overlay   string
	skew      time.Duration
	upgrade   bool
	s3Bin     string
	keep      bool
	// revocationMode is svc.security.revocation.fail_mode of every node ("" leaves the key out).
	revocationMode string
	maxFeedAge     time.Duration
	// revocationClosed turns on security.closed_refuses_stale_feed (needs fail_mode = closed in
	// the binary: issue #45 item 7).
	revocationClosed bool
}

func main() {
	var o options
	flag.StringVar(&o.db, "db", "postgres", "postgres or mysql")
	flag.DurationVar(&o.duration, "duration", 3*time.Minute, "length of the loaded phase")
	flag.Uint64Var(&o.seed, "seed", 0, "seed of the fault schedule and the load (0: random, printed)")
	flag.DurationVar(&o.gap, "gap", 8*time.Second, "mean pause between two faults")
	flag.StringVar(&o.faults, "faults", strings.Join(faultKinds, ","), "fault kinds to draw from")
	flag.Float64Var(&o.double, "double", 0.2, "probability that a second fault (one on a node, one on a shared service) runs at the same time")
	flag.IntVar(&o.schedules, "schedules", 12, "cron schedules firing every second")
	flag.StringVar(&o.svcBin, "svc", "", "svc binary to run instead of the builds from this tree (needs -skew 0 -upgrade=false: both need the harness's own builds)")
	flag.StringVar(&o.overlay, "overlay", "", "a go build -overlay file applied to every svc build of the run (the mutation run's broken file)")
	flag.DurationVar(&o.skew, "skew", 2*time.Second, "clock skew of node2 (its sign drawn from the seed; 0: none)")
	flag.BoolVar(&o.upgrade, "upgrade", true, "restart the nodes one by one onto a build with one more migration, half-way through the faults")
	flag.StringVar(&o.s3Bin, "versitygw", "", "versitygw binary (default: .cache/bin/versitygw, built by scripts/services.sh)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (logs, data) after the run")
	flag.StringVar(&o.revocationMode, "revocation-mode", "", `svc.security.revocation.fail_mode of the nodes: "open" or "closed" ("": the binary's default, key left out)`)
	flag.DurationVar(&o.maxFeedAge, "max-feed-age", 0, "svc.security.revocation.max_feed_age of the nodes (0: the binary's default, key left out)")
	flag.BoolVar(&o.revocationClosed, "check-closed", false, "check the closed mode: no token accepted on a node whose feed is older than -max-feed-age + 2 s (needs -revocation-mode closed and -max-feed-age)")
	flag.Parse()
	if o.seed == 0 {
		o.seed = rand.Uint64()%1_000_000 + 1
	}
	if o.seed%2 == 0 {
		o.skew = -o.skew // even seeds: node2 behind, odd: ahead
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

// revocationTOML is the [svc.security.revocation] section the options ask for ("" for none).
func (o options) revocationTOML() string {
	t := ""
	if o.revocationMode != "" {
		t += fmt.Sprintf("fail_mode = %q\n", o.revocationMode)
	}
	if o.maxFeedAge > 0 {
		t += fmt.Sprintf("max_feed_age = %q\n", o.maxFeedAge.String())
	}
	if t == "" {
		return ""
	}
	return "[svc.security.revocation]\n" + t
}

func run(o options) (int, error) {
	if o.revocationClosed && (o.revocationMode != "closed" || o.maxFeedAge <= 0) {
		return 0, errors.New("-check-closed needs -revocation-mode closed and -max-feed-age")
	}
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
	if o.svcBin != "" {
		if o.skew != 0 || o.upgrade || o.overlay != "" {
			return 0, errors.New("-svc needs -skew 0 -upgrade=false and no -overlay (the skew and the upgrade need the harness's own builds)")
		}
		h.builds = &builds{svc: o.svcBin}
	} else if h.builds, err = buildAll(root, dir, o.db, o.overlay, o.skew != 0, o.upgrade); err != nil {
		return 0, err
	}
	if o.s3Bin == "" {
		o.s3Bin = filepath.Join(root, ".cache", "bin", "versitygw")
	}
	if _, err := os.Stat(o.s3Bin); err != nil {
		return 0, fmt.Errorf("no S3 server binary (%w): run scripts/services.sh, which builds it", err)
	}
	var skewEnv []string
	if o.skew != 0 {
		skewEnv = []string{skewVar + "=" + o.skew.String()}
		h.log("node%d's clock is off by %s", skewNode, o.skew)
	}
	c, err := newCluster(dir, h.builds.svc, o.s3Bin, o.db, 3, o.revocationTOML(), skewEnv)
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
	if h.db, err = c.db.open(); err != nil {
		return 0, err
	}
	defer h.db.Close()
	h.seed = o.seed
	h.skew = o.skew
	loads := h.loads(o)
	for _, l := range loads {
		if err := l.setup(ctx); err != nil {
			return 0, fmt.Errorf("%s setup: %w", l.name(), err)
		}
	}
	baseline := h.sampleRuntime()

	h.rec.began = time.Now()
	loadCtx, stopLoad := context.WithTimeout(ctx, o.duration)
	defer stopLoad()
	// No new fault in the last part of the run: the cluster settles under load.
	faultCtx, stopFaults := context.WithTimeout(ctx, max(o.duration-20*time.Second, o.duration/2))
	defer stopFaults()
	var wg sync.WaitGroup
	var upgradeAt time.Time
	if h.builds.upgraded != "" {
		// Half-way through the faults: faults before it and after it.
		upgradeAt = h.rec.began.Add(max(o.duration-20*time.Second, o.duration/2) / 2)
	}
	wg.Go(func() {
		h.injectFaults(faultCtx, rand.New(rand.NewPCG(base.Uint64(), 1)), strings.Split(o.faults, ","), o.gap, o.double, upgradeAt)
	})
	for _, l := range loads {
		r := rand.New(rand.NewPCG(base.Uint64(), 2))
		wg.Go(func() { l.run(loadCtx, r) })
	}
	wg.Wait()
	h.rec.ended = time.Now()
	h.log("load over")

	// The cluster must be ready again within the bound after the last fault.
	ready := newCheck("cluster.ready_after_last_fault", len(c.nodes))
	ready.checked = len(c.nodes)
	if took, err := c.allReady(recoveryBound, h.admin); err != nil {
		ready.fail("not ready %s after the last fault: %v", recoveryBound, err)
	} else {
		h.log("all nodes ready (%.1fs)", took.Seconds())
	}
	h.rec.addCheck(*ready)
	h.checkRecovery()
	if err := h.checkUpgrade(ctx); err != nil {
		return 0, fmt.Errorf("upgrade check: %w", err)
	}
	for _, l := range loads {
		if err := l.check(ctx); err != nil {
			return 0, fmt.Errorf("%s check: %w", l.name(), err)
		}
	}
	h.checkRuntime(baseline)
	h.check5xx()
	share := h.rec.windowShare()
	h.rec.report(os.Stdout)
	fmt.Printf("\nseed %d, db %s, duration %s, %d faults, %.1f %% of the run inside fault windows (fault start … measured recovery)\n",
		o.seed, o.db, o.duration, len(h.rec.faults), 100*share)
	return h.rec.violations(), nil
}

// load is one kind of work the run puts on the cluster (issue #44 item 5): setup before the
// clock starts, run until the loaded phase ends, check once the cluster has recovered (adding
// its checks and counters to the recorder; an error is the harness's own failure, not a
// violation).
type load interface {
	name() string
	setup(ctx context.Context) error
	run(ctx context.Context, rng *rand.Rand)
	check(ctx context.Context) error
}

// loads are the run's loads, checked in this order (the events checks read what the approval
// and upload loads caused, so they come after them; the user pushes after the events check
// drained the inbox).
func (h *harness) loads(o options) []load {
	ul := &uploadLoad{h: h}
	pl := &pushLoad{h: h, ul: ul}
	apl := &approvalLoad{h: h}
	loads := []load{
		&cronLoad{h: h, sink: h.sink, schedules: o.schedules},
		&authLoad{h: h, closed: o.revocationClosed, maxFeedAge: o.maxFeedAge},
		&userLoad{h: h},
		ul, pl, apl,
		&eventsLoad{h: h, al: apl, pl: pl},
		&userPushLoad{h: h, al: apl},
		&inboundLoad{h: h},
		&backupLoad{h: h, ul: ul},
	}
	if o.skew != 0 {
		loads = append(loads, &skewLoad{h: h, skew: o.skew})
	}
	return loads
}

// checkRecovery fails every fault that was not healed within its kind's recovery deadline.
func (h *harness) checkRecovery() {
	c := newCheck("faults.recovered_by_deadline", 1)
	h.rec.mu.Lock()
	for _, f := range h.rec.faults {
		c.checked++
		if f.recovered.IsZero() || f.recovery() > f.deadline {
			took := "never"
			if !f.recovered.IsZero() {
				took = f.recovery().Round(time.Millisecond).String()
			}
			c.fail("%s %s at %.1fs recovered %s, deadline %s", f.kind, f.target, f.start.Sub(h.rec.began).Seconds(), took, f.deadline)
		}
	}
	h.rec.mu.Unlock()
	h.rec.addCheck(*c)
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
	gc, mc := newCheck("cluster.goroutine_growth_bounded", len(h.c.nodes)), newCheck("cluster.memory_growth_bounded", len(h.c.nodes))
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

// check5xx fails every 5xx answer and unanswered request that no fault explains: the node
// that answered (or failed to) must be the target of a fault under way, or depend on the
// faulted shared service (fault.explains).
func (h *harness) check5xx() {
	c := newCheck("cluster.5xx_only_in_fault_windows", 100)
	u := newCheck("cluster.answered_outside_fault_windows", 100)
	h.rec.mu.Lock()
	for _, s := range h.rec.samples {
		c.checked++
		u.checked++
		if (s.status >= 500 || (s.status == 0 && !s.ok)) && h.rec.excused(s) {
			continue
		}
		if s.status >= 500 {
			c.fail("%s on node%d at %.1fs answered %d, no fault explains it", s.kind, s.node, s.start.Sub(h.rec.began).Seconds(), s.status)
		}
		if s.status == 0 && !s.ok {
			u.fail("%s on node%d at %.1fs got no answer, no fault explains it", s.kind, s.node, s.start.Sub(h.rec.began).Seconds())
		}
	}
	h.rec.mu.Unlock()
	h.rec.addCheck(*c)
	h.rec.addCheck(*u)
}
