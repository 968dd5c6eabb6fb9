package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// sample is one operation of the load, attributed to the node that answered it (-1: none).
type sample struct {
	kind   string
	node   int
	start  time.Time
	dur    time.Duration
	status int // HTTP status, 0 when no answer came
	ok     bool
}

// fault is one injected fault: from start until healed (the fault itself is over), and
// recovered when every node answered /readyz and an authenticated read again.
type fault struct {
	kind   string
	target string
	// node is the index of the node the fault targets, -1 for a shared service (the database,
	// Redis, S3), which every node depends on.
	node   int
	start  time.Time
	healed time.Time
	// settled is when the last fault injected with this one healed (healed itself for a single
	// fault): its recovery is measured from there.
	settled   time.Time
	recovered time.Time
	// deadline is the recovery deadline of the fault's kind (recoveryDeadline).
	deadline time.Duration
	note     string
}

// windowEnd is the end of the fault's window: its measured recovery, capped at its recovery
// deadline (a fault that never heals does not excuse the rest of the run); now while it lasts.
func (f *fault) windowEnd() time.Time {
	switch {
	case f.healed.IsZero() || f.settled.IsZero():
		return time.Now()
	case f.recovered.IsZero() || f.recovery() > f.deadline:
		return f.settled.Add(f.deadline)
	}
	return f.recovered
}

// recovery is how long the cluster took to serve again once the fault (and any injected with
// it) was over; -1 when it did not.
func (f *fault) recovery() time.Duration {
	if f.recovered.IsZero() {
		return -1
	}
	return f.recovered.Sub(f.settled)
}

// overlaps reports whether [from, to] meets the fault's window.
func (f *fault) overlaps(from, to time.Time) bool {
	return !to.Before(f.start) && !from.After(f.windowEnd())
}

// explains reports whether the fault can explain a failed answer of s (issue #45 item 1): the
// answering node is the fault's target, or every node depends on the faulted service; an S3
// stop or cut only explains storage operations, the only ones that reach S3.
func (f *fault) explains(s sample) bool {
	if f.node >= 0 && s.node != f.node {
		return false
	}
	if (f.kind == "s3stop" || f.kind == "s3cut") && !strings.HasPrefix(s.kind, "storage.") {
		return false
	}
	return f.overlaps(s.start, s.start.Add(s.dur))
}

// recorder collects samples, faults, invariant checks and counters.
type recorder struct {
	mu       sync.Mutex
	began    time.Time
	ended    time.Time // the end of the loaded phase
	samples  []sample
	faults   []*fault
	checks   []check
	counters []counter
}

// check is one named invariant: how many items it looked at, the fewest it must look at to
// pass (no check passes on nothing), and how many broke it.
type check struct {
	name       string
	min        int
	checked    int
	violations int
	examples   []string
}

// counter is a number the run reports beside the checks without judging it: what the docs
// allow and the run wants visible (a documented fail-open, a documented repeat).
type counter struct {
	name, what string
	n          int
}

func (r *recorder) op(kind string, n *node, start time.Time, status int, err error) {
	i := -1
	if n != nil {
		i = n.id
	}
	r.mu.Lock()
	r.samples = append(r.samples, sample{kind: kind, node: i, start: start, dur: time.Since(start), status: status, ok: err == nil})
	r.mu.Unlock()
}

func (r *recorder) addFault(f *fault) {
	r.mu.Lock()
	r.faults = append(r.faults, f)
	r.mu.Unlock()
}

// inWindow reports whether the sample overlaps any fault window (for the latency table).
func (r *recorder) inWindow(s sample) bool {
	for _, f := range r.faults {
		if f.overlaps(s.start, s.start.Add(s.dur)) {
			return true
		}
	}
	return false
}

// excused reports whether a fault explains the failed sample s (fault.explains).
func (r *recorder) excused(s sample) bool {
	for _, f := range r.faults {
		if f.explains(s) {
			return true
		}
	}
	return false
}

// storeDown reports whether node n could not reach the database at t: a database restart, or
// a cut of n's own link, was under way (up to its recovery, or with healed only up to the end
// of the fault itself); since is when that began.
func (r *recorder) storeDown(n *node, t time.Time, healed bool) (since time.Time, down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		if f.kind != "dbrestart" && (f.kind != "dbcut" || f.node != n.id) {
			continue
		}
		in := f.overlaps(t, t)
		if healed {
			in = !t.Before(f.start) && (f.healed.IsZero() || !t.After(f.healed))
		}
		if in && (!down || f.start.Before(since)) {
			since, down = f.start, true
		}
	}
	return since, down
}

// hit reports whether a fault of one of kinds overlapped [from, to], aimed at node (-1: at any
// node or at a shared service).
func (r *recorder) hit(from, to time.Time, node int, kinds ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		if slices.Contains(kinds, f.kind) && (node < 0 || f.node == node) && f.overlaps(from, to) {
			return true
		}
	}
	return false
}

// resumed reports whether a pause of node ended within slack of t.
func (r *recorder) resumed(node int, t time.Time, slack time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		if f.kind == "pause" && f.node == node && !f.healed.IsZero() && f.healed.Sub(t).Abs() <= slack {
			return true
		}
	}
	return false
}

// windowShare is the share of the loaded phase inside the union of every fault window.
func (r *recorder) windowShare() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	type span struct{ a, b time.Time }
	var spans []span
	for _, f := range r.faults {
		a, b := f.start, f.windowEnd()
		if b.After(r.ended) {
			b = r.ended
		}
		if b.After(a) {
			spans = append(spans, span{a, b})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return x.a.Compare(y.a) })
	var in time.Duration
	var cur span
	for i, s := range spans {
		switch {
		case i == 0:
			cur = s
		case !s.a.After(cur.b):
			if s.b.After(cur.b) {
				cur.b = s.b
			}
		default:
			in += cur.b.Sub(cur.a)
			cur = s
		}
	}
	if len(spans) > 0 {
		in += cur.b.Sub(cur.a)
	}
	total := r.ended.Sub(r.began)
	if total <= 0 {
		return 0
	}
	return float64(in) / float64(total)
}

// count adds a counter to the report.
func (r *recorder) count(name, what string, n int) {
	r.mu.Lock()
	r.counters = append(r.counters, counter{name, what, n})
	r.mu.Unlock()
}

// addCheck records a finished check; one that looked at fewer items than its minimum fails.
func (r *recorder) addCheck(c check) {
	if c.checked < c.min {
		c.violations++
		c.examples = append(c.examples, fmt.Sprintf("checked %d items, fewer than its minimum %d: the run proved nothing here", c.checked, c.min))
	}
	r.mu.Lock()
	r.checks = append(r.checks, c)
	r.mu.Unlock()
}

// violations is the total over every check.
func (r *recorder) violations() int {
	n := 0
	for _, c := range r.checks {
		n += c.violations
	}
	return n
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*99/100)]
}

// report prints the tables of the run.
func (r *recorder) report(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type agg struct {
		n, errs, fivexx, fivexxOut int
		in, out                    []time.Duration
	}
	kinds := map[string]*agg{}
	for _, s := range r.samples {
		a := entry(kinds, s.kind)
		a.n++
		if !s.ok {
			a.errs++
		}
		inside := r.inWindow(s)
		if s.status >= 500 {
			a.fivexx++
			if !r.excused(s) {
				a.fivexxOut++
			}
		}
		if inside {
			a.in = append(a.in, s.dur)
		} else {
			a.out = append(a.out, s.dur)
		}
	}
	fmt.Fprintf(w, "\noperations\n%-22s %8s %7s %6s %9s %12s %12s\n", "kind", "ops", "errors", "5xx", "5xx-unexc", "p99-in-fault", "p99-outside")
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		a := kinds[k]
		fmt.Fprintf(w, "%-22s %8d %7d %6d %9d %12s %12s\n", k, a.n, a.errs, a.fivexx, a.fivexxOut,
			p99(a.in).Round(time.Millisecond), p99(a.out).Round(time.Millisecond))
	}
	type fagg struct {
		n   int
		rec []time.Duration
	}
	fk := map[string]*fagg{}
	fmt.Fprintf(w, "\nfault timeline (seconds from start)\n")
	for _, f := range r.faults {
		a := entry(fk, f.kind)
		a.n++
		rec := f.recovery()
		if rec >= 0 {
			a.rec = append(a.rec, rec)
		}
		fmt.Fprintf(w, "  %7.1f %-12s %-8s lasted %5.1fs, recovered %5.1fs after (deadline %s) %s\n", f.start.Sub(r.began).Seconds(), f.kind, f.target,
			f.healed.Sub(f.start).Seconds(), rec.Seconds(), f.deadline, f.note)
	}
	fmt.Fprintf(w, "\nfaults\n%-12s %5s %14s %14s\n", "kind", "count", "recovery-max", "recovery-mean")
	for _, k := range slices.Sorted(maps.Keys(fk)) {
		a := fk[k]
		var sum, mx time.Duration
		for _, d := range a.rec {
			sum += d
			mx = max(mx, d)
		}
		mean := time.Duration(0)
		if len(a.rec) > 0 {
			mean = sum / time.Duration(len(a.rec))
		}
		fmt.Fprintf(w, "%-12s %5d %14s %14s\n", k, a.n, mx.Round(time.Millisecond), mean.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "\ncounters (reported, not judged)\n")
	for _, c := range r.counters {
		fmt.Fprintf(w, "%-40s %9d  %s\n", c.name, c.n, c.what)
	}
	fmt.Fprintf(w, "\ninvariants\n%-40s %9s %7s %10s\n", "check", "checked", "minimum", "violations")
	for _, c := range r.checks {
		fmt.Fprintf(w, "%-40s %9d %7d %10d\n", c.name, c.checked, c.min, c.violations)
		for _, e := range c.examples {
			fmt.Fprintf(w, "    e.g. %s\n", e)
		}
	}
}

// newCheck starts a named check that must look at min items at least.
func newCheck(name string, min int) *check { return &check{name: name, min: min} }

// fail counts a violation and keeps the first few examples.
func (c *check) fail(format string, args ...any) {
	c.violations++
	if len(c.examples) < 5 {
		c.examples = append(c.examples, fmt.Sprintf(format, args...))
	}
}

// entry is m[k], created empty when missing.
func entry[T any](m map[string]*T, k string) *T {
	v := m[k]
	if v == nil {
		v = new(T)
		m[k] = v
	}
	return v
}
