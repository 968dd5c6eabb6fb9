package integration

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// heapMetric is the heap's objects as runtime/metrics reports them, those dead but not yet
// swept included.
const heapMetric = "/memory/classes/heap/objects:bytes"

// confirmEvery is how many samples apart the watchdog may force a collection: at most one
// every 10 periods (50 ms by default), so a heap that stays high cannot make it collect in a
// loop. It bounds how late a run growing the heap step by step is stopped.
const confirmEvery = 10

// heapWatch is the second memory layer (see Limits): while at least one script runs it samples
// the process's heap and, when the live heap is over the limit, interrupts every run in flight
// with errMemoryLimit. It cannot tell which run allocated, so concurrent innocent runs stop too;
// that is the price of keeping the process alive, and a heap that high is an emergency anyway.
//
// The cheap reading counts objects that are dead but not yet swept: a finished run's garbage
// can keep it over the limit until the next collection, which with a quiet heap may be minutes
// away — and every run started meanwhile would be stopped for memory it does not use (issue #31
// item 7). So a reading over the limit is only a suspicion: the watchdog confirms it with a
// collection (runtime.GC returns once the heap is swept, so the reading after it is the live
// heap) and stops the runs only if the heap is still over; a suspicion within confirmEvery
// samples of the last forced collection waits for the next one. A benign run pays nothing: the
// collection happens only while the heap reads over the limit. The script cache's bytes are not the
// scripts' (they have their own cap), so they are subtracted.
type heapWatch struct {
	limit    uint64
	every    time.Duration
	excluded func() uint64

	mu      sync.Mutex
	running map[*goja.Runtime]struct{}
	active  bool
	// sinceGC counts samples since the watchdog last forced a collection.
	sinceGC int
}

func newHeapWatch(l Limits, excluded func() uint64) *heapWatch {
	return &heapWatch{limit: l.HeapLimit, every: l.HeapSampleEvery, excluded: excluded,
		running: map[*goja.Runtime]struct{}{}, sinceGC: confirmEvery}
}

// track registers vm until the returned function is called; the sampler runs while any vm is
// registered.
func (h *heapWatch) track(vm *goja.Runtime) func() {
	h.mu.Lock()
	h.running[vm] = struct{}{}
	if !h.active {
		h.active = true
		go h.sample()
	}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.running, vm)
		h.mu.Unlock()
	}
}

func (h *heapWatch) sample() {
	t := time.NewTicker(h.every)
	defer t.Stop()
	for range t.C {
		over := h.over()
		h.mu.Lock()
		if len(h.running) == 0 {
			h.active = false
			h.mu.Unlock()
			return
		}
		if over {
			for vm := range h.running {
				vm.Interrupt(errMemoryLimit)
			}
		}
		h.mu.Unlock()
	}
}

// over reports whether the live heap, less the excluded bytes, is over the limit: a reading
// under the limit is final; over it, only a reading right after a forced collection is.
func (h *heapWatch) over() bool {
	h.sinceGC++
	if h.read() <= h.limit || h.sinceGC < confirmEvery {
		return false
	}
	h.sinceGC = 0
	runtime.GC()
	return h.read() > h.limit
}

// read is the heap's objects less the excluded bytes.
func (h *heapWatch) read() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	v, x := s[0].Value.Uint64(), h.excluded()
	if x >= v {
		return 0
	}
	return v - x
}
