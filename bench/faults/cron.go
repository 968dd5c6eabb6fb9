package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Cron load: schedules firing every second with the built-in http.request job, calling the
// sink, which records every delivery with the run id the job sends (X-Svc-Cron-Run-Id). Half
// of them answer slowly, so that runs are in flight on every node most of the time and a
// pause or a cut catches some.

const cronPrefix = "faults-"

// delivery is one request the sink received.
type delivery struct {
	runID       string
	schedule    string
	scheduledAt int64
}

// sink is the HTTP receiver of the http.request job.
type sink struct {
	mu  sync.Mutex
	got []delivery
	// inflight counts the requests being answered per remote address.
	inflight map[string]int
	slow     time.Duration
	srv      *http.Server
	port     int
}

func newSink(slow time.Duration) (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{slow: slow, port: ln.Addr().(*net.TCPAddr).Port, inflight: map[string]int{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	at, _ := strconv.ParseInt(r.Header.Get("X-Svc-Cron-Scheduled-At"), 10, 64)
	s.mu.Lock()
	s.got = append(s.got, delivery{runID: r.Header.Get("X-Svc-Cron-Run-Id"), schedule: r.Header.Get("X-Svc-Cron-Schedule"), scheduledAt: at})
	s.inflight[r.RemoteAddr]++
	s.mu.Unlock()
	if r.URL.Path == "/slow" {
		time.Sleep(s.slow)
	}
	s.mu.Lock()
	if s.inflight[r.RemoteAddr]--; s.inflight[r.RemoteAddr] == 0 {
		delete(s.inflight, r.RemoteAddr)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// busiest is the index of the node with the most requests in flight at the sink (its cron
// runs are executing), or -1 when none has any.
func (s *sink) busiest(nodes []*node) int {
	s.mu.Lock()
	remotes := make([]string, 0, len(s.inflight))
	for r := range s.inflight {
		remotes = append(remotes, r)
	}
	s.mu.Unlock()
	pids := make([]int, len(nodes))
	for i, n := range nodes {
		if n.proc.cmd != nil {
			pids[i] = n.proc.cmd.Process.Pid
		}
	}
	count := make([]int, len(nodes))
	for _, r := range remotes {
		pid := pidOfPeer(r, pids)
		for i, p := range pids {
			if p != 0 && p == pid {
				count[i]++
			}
		}
	}
	best := -1
	for i, c := range count {
		if c > 0 && (best < 0 || c > count[best]) {
			best = i
		}
	}
	return best
}

func (s *sink) deliveries() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.got...)
}

// cronLoad creates the schedules and keeps querying the journal through /api.
type cronLoad struct {
	h         *harness
	sink      *sink
	schedules int
	first     map[string]int64 // the first cursor of each schedule
}

func (l *cronLoad) setup(ctx context.Context) error {
	l.first = map[string]int64{}
	for i := range l.schedules {
		name := fmt.Sprintf("%s%02d", cronPrefix, i)
		path := "/fast"
		if i%2 == 0 {
			path = "/slow"
		}
		params := map[string]any{
			"name": name, "jobName": "http.request",
			"trigger":       map[string]any{"kind": "interval", "everyMs": 1000},
			"params":        map[string]any{"method": "POST", "url": fmt.Sprintf("http://127.0.0.1:%d%s", l.sink.port, path), "timeout": "20s"},
			"misfirePolicy": "fire_now", "concurrencyPolicy": "forbid", "recover": true,
		}
		var out struct {
			NextFireAtUnixMs *int64 `json:"nextFireAtUnixMs"`
		}
		start := time.Now()
		n := l.h.c.nodes[i%len(l.h.c.nodes)]
		st, err := l.h.c.call(ctx, n, l.h.admin, "sys/cron/schedule", "create", params, &out)
		l.h.rec.op("cron.create", n, start, st, err)
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		if out.NextFireAtUnixMs == nil {
			return fmt.Errorf("create %s: no nextFireAtUnixMs", name)
		}
		l.first[name] = *out.NextFireAtUnixMs
	}
	return nil
}

// run queries the run journal from random nodes until ctx ends.
func (l *cronLoad) run(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		n := l.h.c.nodes[rng.IntN(len(l.h.c.nodes))]
		start := time.Now()
		st, err := l.h.c.call(ctx, n, l.h.admin, "sys/cron/run", "find_page", map[string]any{"meta": map[string]any{"page": 1, "size": 20}}, nil)
		if ctx.Err() == nil {
			l.h.rec.op("cron.query", n, start, st, err)
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// stop pauses every schedule (retrying on other nodes) so that their cursors stay put.
func (l *cronLoad) stop(ctx context.Context) error {
	for name := range l.first {
		var err error
		for attempt := range 20 {
			n := l.h.c.nodes[attempt%len(l.h.c.nodes)]
			if _, err = l.h.c.call(ctx, n, l.h.admin, "sys/cron/schedule", "pause", map[string]any{"name": name}, nil); err == nil {
				break
			}
			sleep(ctx, 500*time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("pause %s: %w", name, err)
		}
	}
	return nil
}

type runRow struct {
	id, schedule, status, node string
	at                         int64
	missed                     int
}

func (l *cronLoad) name() string { return "cron" }

// check pauses every schedule, then verifies the cron invariants.
func (l *cronLoad) check(ctx context.Context) error {
	if err := l.stop(ctx); err != nil {
		return err
	}
	return l.verify(l.h.db)
}

// verify checks the cron invariants on the journal and the sink.
func (l *cronLoad) verify(db *sql.DB) error {
	// Let every run in flight end (or be abandoned) first.
	deadline := time.Now().Add(3 * cronAbandoned * 4)
	for {
		var running int
		if err := db.QueryRow("SELECT COUNT(*) FROM crn_run WHERE status = 'running'").Scan(&running); err != nil {
			return err
		}
		if running == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	cursor := map[string]int64{}
	rows, err := db.Query(l.h.c.db.q("SELECT name, next_fire_at_unix_ms FROM crn_schedule WHERE name LIKE ?"), cronPrefix+"%")
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		var next sql.NullInt64
		if err := rows.Scan(&name, &next); err != nil {
			return err
		}
		cursor[name] = next.Int64
	}
	rows.Close()
	var runs []runRow
	rows, err = db.Query(l.h.c.db.q("SELECT r.id, s.name, r.status, r.node_id, r.scheduled_at_unix_ms, r.missed_count FROM crn_run r JOIN crn_schedule s ON s.id = r.schedule_id WHERE s.name LIKE ?"), cronPrefix+"%")
	if err != nil {
		return err
	}
	for rows.Next() {
		var r runRow
		if err := rows.Scan(&r.id, &r.schedule, &r.status, &r.node, &r.at, &r.missed); err != nil {
			return err
		}
		runs = append(runs, r)
	}
	rows.Close()

	statuses, nodes := map[string]int{}, map[string]int{}
	for _, r := range runs {
		statuses[r.status]++
		nodes[r.node]++
	}
	l.h.log("cron journal: %d runs by status %v, by node %v, %d sink deliveries", len(runs), statuses, nodes, len(l.sink.deliveries()))
	type occ struct {
		schedule string
		at       int64
	}
	fired := map[occ]int{}
	retries := map[occ]int{} // abandoned or canceled rows: each allows one more delivery
	covered := map[occ]bool{}
	byID := map[string]runRow{}
	stuck := newCheck("cron.no_run_left_running", 100)
	for _, r := range runs {
		byID[r.id] = r
		o := occ{r.schedule, r.at}
		switch r.status {
		case "running", "succeeded", "failed":
			fired[o]++
		case "abandoned", "canceled":
			retries[o]++
		case "missed":
			step := int64(1000)
			for k := range r.missed {
				covered[occ{r.schedule, r.at + int64(k)*step}] = true
			}
			continue
		}
		covered[o] = true
		stuck.checked++
		if r.status == "running" {
			stuck.fail("run %s of %s at %d still running after the drain", r.id, r.schedule, r.at)
		}
	}
	once := newCheck("cron.fired_at_most_once", 100)
	for o, n := range fired {
		once.checked++
		if n > 1 {
			once.fail("%s at %d fired %d times", o.schedule, o.at, n)
		}
	}
	lost := newCheck("cron.every_occurrence_journaled", 100)
	for name, first := range l.first {
		for t := first; t < cursor[name]; t += 1000 {
			lost.checked++
			if !covered[occ{name, t}] {
				lost.fail("%s at %d: no run, missed or skipped row", name, t)
			}
		}
	}
	unknown := newCheck("cron.sink_run_journaled", 100)
	perRun := map[string]int{}
	perOcc := map[occ]int{}
	for _, d := range l.sink.deliveries() {
		unknown.checked++
		r, ok := byID[d.runID]
		if !ok || r.schedule != d.schedule || r.at != d.scheduledAt {
			unknown.fail("delivery of run %q (%s at %d) matches no journaled run", d.runID, d.schedule, d.scheduledAt)
		}
		perRun[d.runID]++
		perOcc[occ{d.schedule, d.scheduledAt}]++
	}
	dup := newCheck("cron.sink_once_per_run", 100)
	for id, n := range perRun {
		dup.checked++
		if n > 1 {
			dup.fail("run %s delivered %d times", id, n)
		}
	}
	extra := newCheck("cron.sink_retries_documented", 100)
	for o, n := range perOcc {
		extra.checked++
		if n > 1+retries[o] {
			extra.fail("%s at %d delivered %d times, %d takeovers explain %d", o.schedule, o.at, n, retries[o], 1+retries[o])
		}
	}
	done := newCheck("cron.succeeded_was_delivered", 100)
	for _, r := range runs {
		if r.status == "succeeded" {
			done.checked++
			if perRun[r.id] == 0 {
				done.fail("run %s (%s at %d) succeeded without reaching the sink", r.id, r.schedule, r.at)
			}
		}
	}
	for _, c := range []*check{once, lost, stuck, unknown, dup, extra, done} {
		l.h.rec.addCheck(*c)
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
