package rpc

import (
	"hash/maphash"
	"math"
	"sync"
	"time"
)

const (
	limiterShards = 64
	// sweepEvery is how often (on the injected clock) a shard drops its expired windows. Sweeps
	// are amortised: the first call that reaches a shard after this interval does it.
	sweepEvery = time.Minute
	// shrinkFloor: a shard map that fell below a quarter of its peak is rebuilt (Go maps never
	// give memory back on delete) once the peak was at least this large.
	shrinkFloor = 1024
)

// RateLimiter counts calls per key in an approximate sliding window, in memory, per node
// (wire-core §4). Each key keeps two fixed buckets, the current window and the previous one; a
// call is admitted while previous×(1−elapsed/period) + current < max. Windows start at a key's
// first call. Memory stays bounded: a key whose two buckets are over is deleted by a periodic,
// amortised sweep of its shard, and shrunken shard maps are rebuilt. Keys are hashed with a
// per-limiter random seed, so callers cannot aim collisions.
type RateLimiter struct {
	clock  func() time.Time
	seed   maphash.Seed
	shards [limiterShards]limiterShard
}

type limiterShard struct {
	mu        sync.Mutex
	windows   map[uint64]window
	peak      int
	nextSweep int64
	_         [64]byte // keep hot shards on separate cache lines
}

// window is the state of one key; times are Unix nanoseconds of the injected clock.
type window struct {
	start  int64 // start of the current bucket
	period int64
	prev   uint32
	curr   uint32
}

// RateDecision is the outcome of one call.
type RateDecision struct {
	// Allowed reports whether the call was admitted (and counted).
	Allowed bool
	// Limit is the window's maximum.
	Limit int
	// Remaining is how many more calls the window admits now (0 when refused).
	Remaining int
	// Reset is the time until the current bucket ends.
	Reset time.Duration
	// RetryAfter, when refused, is the time until a call would be admitted.
	RetryAfter time.Duration
}

// NewRateLimiter returns an empty limiter on clock (nil means time.Now).
func NewRateLimiter(clock func() time.Time) *RateLimiter {
	if clock == nil {
		clock = time.Now
	}
	l := &RateLimiter{clock: clock, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].windows = make(map[uint64]window)
	}
	return l
}

// Allow counts one call of key against limit. A non-positive Max or Period takes the engine
// defaults (DefaultRateLimitMax, DefaultRateLimitPeriod): a limit is never disabled.
func (l *RateLimiter) Allow(key string, limit Limit) RateDecision {
	return l.allow(maphash.String(l.seed, key), limit)
}

func (l *RateLimiter) allow(h uint64, limit Limit) RateDecision {
	max, period := limit.Max, int64(limit.Period)
	if max <= 0 {
		max = DefaultRateLimitMax
	}
	if period <= 0 {
		period = int64(DefaultRateLimitPeriod)
	}
	now := l.clock().UnixNano()
	sh := &l.shards[h%limiterShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if now >= sh.nextSweep {
		sh.sweep(now)
	}
	w, ok := sh.windows[h]
	if !ok || w.period != period || now < w.start {
		w = window{start: now, period: period}
	} else if elapsed := now - w.start; elapsed >= period {
		n := elapsed / period
		if n == 1 {
			w.prev = w.curr
		} else {
			w.prev = 0
		}
		w.curr = 0
		w.start += n * period
	}
	weight := 1 - float64(now-w.start)/float64(period)
	rate := float64(w.prev)*weight + float64(w.curr)
	d := RateDecision{Limit: max, Reset: time.Duration(w.start + period - now)}
	if rate >= float64(max) {
		d.RetryAfter = retryAfter(w, now, float64(max))
		sh.windows[h] = w
		return d
	}
	if w.curr < math.MaxUint32 {
		w.curr++
	}
	sh.windows[h] = w
	if len(sh.windows) > sh.peak {
		sh.peak = len(sh.windows)
	}
	d.Allowed = true
	d.Remaining = int(math.Floor(float64(max) - rate - 1))
	if d.Remaining < 0 {
		d.Remaining = 0
	}
	return d
}

// retryAfter is the time until the estimate falls below max. Within the current bucket only the
// previous bucket's weight decays; once the current bucket alone reaches max, the wait runs into
// the next bucket, where the current count becomes the decaying one.
func retryAfter(w window, now int64, max float64) time.Duration {
	p := float64(w.period)
	prev, curr := float64(w.prev), float64(w.curr)
	if curr < max && prev > 0 {
		// prev×(1−e/p) + curr < max  ⇔  e > p×(1 − (max−curr)/prev)
		e := p * (1 - (max-curr)/prev)
		return time.Duration(float64(w.start-now)+e) + 1
	}
	e := p * (1 - max/curr)
	return time.Duration(float64(w.start+w.period-now)+e) + 1
}

// sweep deletes windows whose two buckets are over, and rebuilds a map that shrank a lot.
func (sh *limiterShard) sweep(now int64) {
	sh.nextSweep = now + int64(sweepEvery)
	for k, w := range sh.windows {
		if now-w.start >= 2*w.period {
			delete(sh.windows, k)
		}
	}
	if sh.peak >= shrinkFloor && len(sh.windows) < sh.peak/4 {
		m := make(map[uint64]window, len(sh.windows))
		for k, w := range sh.windows {
			m[k] = w
		}
		sh.windows = m
		sh.peak = len(m)
	}
}

// Sweep drops every expired window now. Calls sweep their own shard periodically, so this is
// only needed to release memory of a limiter that went idle.
func (l *RateLimiter) Sweep() {
	now := l.clock().UnixNano()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		sh.sweep(now)
		sh.mu.Unlock()
	}
}

// Len returns the number of keys with a live window.
func (l *RateLimiter) Len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.windows)
		sh.mu.Unlock()
	}
	return n
}
