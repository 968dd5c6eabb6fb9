package integration

import (
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// heapMetric is the live heap as runtime/metrics reports it (objects not yet swept included).
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapWatch is the memory layer goja lacks: while at least one script runs it samples the
// process's live heap and, over the limit, interrupts every run in flight with errMemoryLimit.
// It cannot tell which run allocated, so concurrent innocent runs stop too; that is the price
// of keeping the process alive, and a heap that high is an emergency anyway.
type heapWatch struct {
	limit uint64
	every time.Duration

	mu      sync.Mutex
	running map[*goja.Runtime]struct{}
	active  bool
}

func newHeapWatch(l Limits) *heapWatch {
	return &heapWatch{limit: l.HeapLimit, every: l.HeapSampleEvery, running: map[*goja.Runtime]struct{}{}}
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
	s := []metrics.Sample{{Name: heapMetric}}
	t := time.NewTicker(h.every)
	defer t.Stop()
	for range t.C {
		metrics.Read(s)
		over := s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > h.limit
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
