package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"
)

// faultKinds are the faults the schedule draws from, in a fixed order (the seed replays).
var faultKinds = []string{"kill", "pause", "dbcut", "dbrestart", "redisrestart", "s3stop"}

// recoveryBound is how long the cluster may take to be ready again after a fault ends.
const recoveryBound = 60 * time.Second

// injectFaults runs faults one after another, a random gap apart, until ctx ends.
func (h *harness) injectFaults(ctx context.Context, rng *rand.Rand, kinds []string, gap time.Duration) {
	sleep(ctx, gap/2)
	for ctx.Err() == nil {
		kind := kinds[rng.IntN(len(kinds))]
		n := h.c.nodes[rng.IntN(len(h.c.nodes))]
		if kind == "pause" || kind == "dbcut" {
			// Aim at the node with cron runs in flight: its work must be taken over and its
			// late completions refused.
			if i := h.sink.busiest(h.c.nodes); i >= 0 {
				n = h.c.nodes[i]
			}
		}
		hold := longestLease + time.Duration(1000+rng.IntN(2000))*time.Millisecond
		f := &fault{kind: kind, start: time.Now()}
		h.rec.addFault(f)
		switch kind {
		case "kill":
			f.target = n.proc.name
			n.proc.kill()
			time.Sleep(time.Duration(500+rng.IntN(2000)) * time.Millisecond)
			if err := n.proc.start(); err != nil {
				f.note = err.Error()
			}
		case "pause":
			f.target = n.proc.name
			n.proc.signal(syscall.SIGSTOP)
			time.Sleep(hold)
			n.proc.signal(syscall.SIGCONT)
		case "dbcut":
			f.target = n.proc.name
			n.proxy.setCut(true)
			time.Sleep(hold)
			n.proxy.setCut(false)
		case "dbrestart":
			f.target = h.c.db.kind
			outage(f, h.c.db.crash, time.Duration(500+rng.IntN(1500))*time.Millisecond, h.c.db.start)
		case "redisrestart":
			f.target = "redis"
			outage(f, h.c.redis.kill, time.Duration(500+rng.IntN(1500))*time.Millisecond, h.c.redis.start)
		case "s3stop":
			f.target = "s3"
			outage(f, h.c.s3.kill, hold, h.c.s3.start)
		}
		f.healed = time.Now()
		if _, err := h.c.allReady(recoveryBound, h.admin); err != nil {
			f.note += fmt.Sprintf("not recovered: %v", err)
			h.log("fault %s %s: %v", f.kind, f.target, err)
			return
		}
		f.recovered = time.Now()
		h.log("fault %-12s %-8s %5.1fs, ready again after %.1fs", f.kind, f.target, f.healed.Sub(f.start).Seconds(), f.recovered.Sub(f.healed).Seconds())
		sleep(ctx, gap/2+time.Duration(rng.Int64N(int64(gap))))
	}
}

// outage stops a service, waits, and starts it again, noting a failed start on the fault.
func outage(f *fault, stop func(), down time.Duration, start func() error) {
	stop()
	time.Sleep(down)
	if err := start(); err != nil {
		f.note = err.Error()
	}
}
