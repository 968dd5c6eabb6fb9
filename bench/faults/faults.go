package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"time"
)

// faultKinds are the faults the schedule draws from, in a fixed order (the seed replays).
var faultKinds = []string{"kill", "pause", "dbcut", "dbrestart", "redisrestart", "s3stop", "rediscut", "s3cut"}

// recoveryBound is how long the harness waits for the cluster to be ready again after a fault
// ends (to measure a late recovery); the deadline a fault must meet is recoveryDeadline.
const recoveryBound = 60 * time.Second

// recoveryFigure is the longest recovery (fault over → every node serving) per fault kind in
// the recorded runs of docs/testing.md, rounded up.
var recoveryFigure = map[string]time.Duration{
	"kill":         500 * time.Millisecond,
	"pause":        250 * time.Millisecond,
	"dbcut":        350 * time.Millisecond,
	"dbrestart":    250 * time.Millisecond,
	"redisrestart": 1200 * time.Millisecond,
	"s3stop":       1200 * time.Millisecond,
	// Not yet in a recorded run: as the restart of the same service.
	"rediscut": 1200 * time.Millisecond,
	"s3cut":    1200 * time.Millisecond,
	// A node's restart onto the upgraded build: a graceful stop and a cold start (with the
	// migration, for the first), as a killed node's restart.
	"upgrade": 500 * time.Millisecond,
}

// Recovery deadline of a fault (issue #45 item 2): its kind's recorded figure × recoveryMargin,
// and never less than recoveryFloor (the machine is shared: with eight jobs on two cores a
// killed node's cold start took 6 s and a healed cut 4 s in the runs of 2026-12-07), counted
// from the moment the fault and any injected with it are over. A fault not recovered by then
// fails faults.recovered_by_deadline, and its window ends at the deadline instead of stretching
// to the end of the run.
const (
	recoveryMargin = 10
	recoveryFloor  = 10 * time.Second
)

func recoveryDeadline(kind string) time.Duration {
	return max(recoveryFigure[kind]*recoveryMargin, recoveryFloor)
}

// nodeFault reports whether a fault kind aims at one node (the others aim at a shared service).
func nodeFault(kind string) bool {
	return kind == "kill" || kind == "pause" || kind == "dbcut" || kind == "rediscut" || kind == "s3cut"
}

// injectFaults runs faults one after another, a random gap apart, until ctx ends. With
// probability double a second fault runs at the same time (issue #45 item 5): one aimed at a
// node and one at a shared service, so the two never fight over one process.
//
// At upgradeAt (unless zero) it runs the rolling upgrade instead of the next fault.
func (h *harness) injectFaults(ctx context.Context, rng *rand.Rand, kinds []string, gap time.Duration, double float64, upgradeAt time.Time) {
	sleep(ctx, gap/2)
	for ctx.Err() == nil {
		if !upgradeAt.IsZero() && time.Now().After(upgradeAt) {
			upgradeAt = time.Time{}
			h.rollingUpgrade()
			sleep(ctx, gap/2+time.Duration(rng.Int64N(int64(gap))))
			continue
		}
		faults := []*fault{h.draw(rng, kinds)}
		if rng.Float64() < double {
			var other []string
			for _, k := range kinds {
				if nodeFault(k) != nodeFault(faults[0].kind) {
					other = append(other, k)
				}
			}
			if len(other) > 0 {
				faults = append(faults, h.draw(rng, other))
			}
		}
		var wg sync.WaitGroup
		for _, f := range faults {
			hold := longestLease + time.Duration(1000+rng.IntN(2000))*time.Millisecond
			short := time.Duration(500+rng.IntN(1500)) * time.Millisecond
			wg.Go(func() { h.inject(f, hold, short) })
		}
		wg.Wait()
		h.rec.mu.Lock()
		settled := faults[0].healed
		for _, f := range faults {
			if f.healed.After(settled) {
				settled = f.healed
			}
		}
		for _, f := range faults {
			f.settled = settled
		}
		h.rec.mu.Unlock()
		err := h.recover(faults)
		h.rec.mu.Lock()
		for _, f := range faults {
			if err == nil {
				f.recovered = time.Now()
			} else {
				f.note += fmt.Sprintf("not recovered: %v", err)
			}
		}
		h.rec.mu.Unlock()
		for _, f := range faults {
			if err != nil {
				h.log("fault %s %s: not recovered within %s: %v", f.kind, f.target, recoveryBound, err)
				continue
			}
			h.log("fault %-12s %-8s %5.1fs, ready again after %.1fs", f.kind, f.target, f.healed.Sub(f.start).Seconds(), f.recovery().Seconds())
		}
		if err != nil {
			return
		}
		sleep(ctx, gap/2+time.Duration(rng.Int64N(int64(gap))))
	}
}

// recover waits until every node serves again, up to recoveryBound. Like a service manager, it
// starts again a node whose process exited (a node refuses to start while S3 is unreachable:
// a kill during an S3 stop), noting it on the faults.
func (h *harness) recover(faults []*fault) error {
	deadline := time.Now().Add(recoveryBound)
	for {
		for _, n := range h.c.nodes {
			if !n.proc.exited() {
				continue
			}
			note := fmt.Sprintf("%s exited, started again; ", n.proc.name)
			if err := n.proc.start(); err != nil {
				note += err.Error() + "; "
			}
			h.log("%s", note)
			h.rec.mu.Lock()
			for _, f := range faults {
				f.note += note
			}
			h.rec.mu.Unlock()
		}
		_, err := h.c.allReady(min(5*time.Second, time.Until(deadline)), h.admin)
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// draw picks a fault of one of kinds and its target; pause and dbcut aim at the node with cron
// runs in flight (its work must be taken over and its late completions refused).
func (h *harness) draw(rng *rand.Rand, kinds []string) *fault {
	kind := kinds[rng.IntN(len(kinds))]
	n := rng.IntN(len(h.c.nodes))
	if kind == "pause" || kind == "dbcut" {
		if i := h.sink.busiest(h.c.nodes); i >= 0 {
			n = i
		}
	}
	f := &fault{kind: kind, node: -1, deadline: recoveryDeadline(kind)}
	switch {
	case nodeFault(kind):
		f.node, f.target = n, h.c.nodes[n].proc.name
	case kind == "dbrestart":
		f.target = h.c.db.kind
	case kind == "redisrestart":
		f.target = "redis"
	default:
		f.target = "s3"
	}
	return f
}

// inject runs one fault until it is healed: hold is how long a pause, a cut or an S3 stop lasts,
// short how long a killed node or a restarted database or Redis stays down.
func (h *harness) inject(f *fault, hold, short time.Duration) {
	f.start = time.Now()
	h.rec.addFault(f)
	var n *node
	if f.node >= 0 {
		n = h.c.nodes[f.node]
	}
	switch f.kind {
	case "kill":
		n.proc.kill()
		time.Sleep(short)
		if err := n.proc.start(); err != nil {
			f.note = err.Error()
		}
		// The harness's pooled connections to the killed node are dead; a client that saw its
		// server restart reconnects.
		h.c.client.CloseIdleConnections()
	case "pause":
		n.proc.signal(syscall.SIGSTOP)
		time.Sleep(hold)
		n.proc.signal(syscall.SIGCONT)
	case "dbcut", "rediscut", "s3cut":
		// A partition between one node and the database, or Redis or S3 only: the other nodes
		// and the other services stay reachable.
		link := map[string]*proxy{"dbcut": n.proxy, "rediscut": n.redis, "s3cut": n.s3}[f.kind]
		link.setCut(true)
		time.Sleep(hold)
		link.setCut(false)
	case "dbrestart":
		outage(f, h.c.db.crash, short, h.c.db.start)
	case "redisrestart":
		outage(f, h.c.redis.kill, short, h.c.redis.start)
	case "s3stop":
		outage(f, h.c.s3.kill, hold, h.c.s3.start)
	}
	h.rec.mu.Lock()
	f.healed = time.Now()
	h.rec.mu.Unlock()
}

// outage stops a service, waits, and starts it again, noting a failed start on the fault.
func outage(f *fault, stop func(), down time.Duration, start func() error) {
	stop()
	time.Sleep(down)
	if err := start(); err != nil {
		f.note = err.Error()
	}
}
