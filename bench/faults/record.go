package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// sample is one operation of the load.
type sample struct {
	kind   string
	start  time.Time
	dur    time.Duration
	status int // HTTP status, 0 when no answer came
	ok     bool
}

// fault is one injected fault: from start until healed (the fault itself is over), and
// recovered when every node answered /readyz again.
type fault struct {
	kind      string
	target    string
	start     time.Time
	healed    time.Time
	recovered time.Time
	note      string
}

// recorder collects samples, faults and invariant checks.
type recorder struct {
	mu      sync.Mutex
	began   time.Time
	samples []sample
	faults  []*fault
	checks  []check
}

// check is one named invariant: how many items it looked at and how many broke it.
type check struct {
	name       string
	checked    int
	violations int
	examples   []string
}

func (r *recorder) op(kind string, start time.Time, status int, err error) {
	r.mu.Lock()
	r.samples = append(r.samples, sample{kind: kind, start: start, dur: time.Since(start), status: status, ok: err == nil})
	r.mu.Unlock()
}

func (r *recorder) addFault(f *fault) {
	r.mu.Lock()
	r.faults = append(r.faults, f)
	r.mu.Unlock()
}

// grace after a fault's recovery during which errors still count as inside its window (clients'
// pooled connections, a request that started just before recovery).
const windowGrace = 3 * time.Second

// inWindow reports whether the sample overlaps a fault window (start … recovered + grace). A
// fault still open counts up to now.
func (r *recorder) inWindow(s sample) bool {
	end := s.start.Add(s.dur)
	for _, f := range r.faults {
		rec := f.recovered
		if rec.IsZero() {
			rec = time.Now()
		}
		if !end.Before(f.start) && !s.start.After(rec.Add(windowGrace)) {
			return true
		}
	}
	return false
}

// storeDown reports whether node n could not reach the database at t: a database restart, or
// a cut of n's own link, was under way (up to its recovery and the grace).
func (r *recorder) storeDown(n *node, t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		if f.kind != "dbrestart" && (f.kind != "dbcut" || f.target != n.proc.name) {
			continue
		}
		rec := f.recovered
		if rec.IsZero() {
			rec = time.Now()
		}
		if !t.Before(f.start) && !t.After(rec.Add(windowGrace)) {
			return true
		}
	}
	return false
}

func (r *recorder) addCheck(c check) {
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
			if !inside {
				a.fivexxOut++
			}
		}
		if inside {
			a.in = append(a.in, s.dur)
		} else {
			a.out = append(a.out, s.dur)
		}
	}
	fmt.Fprintf(w, "\noperations\n%-22s %8s %7s %6s %9s %12s %12s\n", "kind", "ops", "errors", "5xx", "5xx-out", "p99-in-fault", "p99-outside")
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
		rec := time.Duration(-1)
		if !f.recovered.IsZero() {
			rec = f.recovered.Sub(f.healed)
			a.rec = append(a.rec, rec)
		}
		fmt.Fprintf(w, "  %7.1f %-12s %-8s lasted %5.1fs, recovered %5.1fs after %s\n", f.start.Sub(r.began).Seconds(), f.kind, f.target,
			f.healed.Sub(f.start).Seconds(), rec.Seconds(), f.note)
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
	fmt.Fprintf(w, "\ninvariants\n%-40s %9s %10s\n", "check", "checked", "violations")
	for _, c := range r.checks {
		fmt.Fprintf(w, "%-40s %9d %10d\n", c.name, c.checked, c.violations)
		for _, e := range c.examples {
			fmt.Fprintf(w, "    e.g. %s\n", e)
		}
	}
}

// newCheck starts a named check.
func newCheck(name string) *check { return &check{name: name} }

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
