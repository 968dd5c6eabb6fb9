package security

import (
	"runtime"
	"runtime/metrics"
	"sync"
)

// hashReclaim bounds the garbage of argon2id hashing (issue #13: a login burst must keep the
// process within idle + 32 MiB, issue #34). Every hash allocates its whole memory (9 MiB by default) as
// one fresh block and drops it when done; the Go collector only starts a cycle when the heap has
// grown by GOGC % of the live heap, and in-flight hashes count as live, so a burst lets several
// dropped blocks pile up before any is reused. hashReclaim counts the hash memory released since
// the last cycle and runs one cycle when that garbage exceeds the rest of the live heap, with one
// hash's memory as the floor. A slot whose hash ends while another slot's cycle runs starts its
// own too (runtime.GC waits for the running cycle and completes a new one): that cycle may have
// begun marking before this hash's block became garbage, and skipping it let one block per
// slot pile up (issue #34: a 64-connection burst took idle + 46 MiB with 2 slots of 9 MiB). The cycle runs before the finished hash gives
// back its slot, so no new hash allocates while the old blocks wait to be reclaimed, whatever the
// machine's load: the bound holds under CPU starvation too, at the price of a few milliseconds
// on that one login's answer. The cost stays proportional:
// a cycle marks the live heap once per as many bytes of hash garbage, the argon2 blocks
// themselves hold no pointers, so on the shipped binary a cycle is a small fraction of a hash.
type hashReclaim struct {
	hashBytes uint64 // memory of one hash
	inFlight  uint64 // hash memory that may be live at a cycle: slots × hashBytes

	mu      sync.Mutex
	samples [2]metrics.Sample
	cycles  uint64 // GC cycles completed when since was last reset
	since   uint64 // hash memory released since then
}

func newHashReclaim(hashBytes uint64, slots int) *hashReclaim {
	r := &hashReclaim{hashBytes: hashBytes, inFlight: hashBytes * uint64(slots)}
	r.samples[0].Name = "/gc/heap/live:bytes"
	r.samples[1].Name = "/gc/cycles/total:gc-cycles"
	return r
}

// released records one finished hash and may run a collection; the caller still holds its slot.
func (r *hashReclaim) released() {
	if r == nil {
		return
	}
	r.mu.Lock()
	metrics.Read(r.samples[:])
	live, cycles := r.samples[0].Value.Uint64(), r.samples[1].Value.Uint64()
	if cycles != r.cycles {
		r.cycles, r.since = cycles, 0
	}
	r.since += r.hashBytes
	threshold := max(live-min(live, r.inFlight), r.hashBytes)
	start := r.since >= threshold
	if start {
		r.since = 0
	}
	r.mu.Unlock()
	if start {
		runtime.GC()
	}
}
