package rpc

import (
	"hash/maphash"
	"strconv"
	"time"
)

// rateLimit is step 6 (wire-core §4): the key is resource:version:action:clientIP:principalID
// (the anonymous principal's id for public operations), hashed without building the string. A
// refused call answers 429/1401 with Retry-After; an admitted one carries X-RateLimit-Limit,
// X-RateLimit-Remaining and X-RateLimit-Reset (seconds) on whatever response follows.
func (e *Engine) rateLimit(q *request) error {
	rt := q.route
	var h maphash.Hash
	h.SetSeed(e.limiter.seed)
	h.WriteString(rt.resource)
	h.WriteByte(':')
	h.WriteString(rt.version)
	h.WriteByte(':')
	h.WriteString(rt.action)
	h.WriteByte(':')
	h.WriteString(q.clientIP)
	h.WriteByte(':')
	h.WriteString(q.principal.ID)
	d := e.limiter.allow(h.Sum64(), rt.limit)
	hdr := q.w.Header()
	if !d.Allowed {
		hdr["Retry-After"] = intHeader(ceilSeconds(d.RetryAfter))
		return ErrTooManyRequests
	}
	hdr["X-Ratelimit-Limit"] = rt.limitHeader
	hdr["X-Ratelimit-Remaining"] = intHeader(d.Remaining)
	hdr["X-Ratelimit-Reset"] = intHeader(ceilSeconds(d.Reset))
	return nil
}

// ceilSeconds rounds d up to whole seconds, at least 1.
func ceilSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		return 1
	}
	return s
}

// smallInts holds shared header values for the numbers rate-limit headers usually carry, so an
// admitted response sets them without allocating. Header values are never modified in place by
// net/http; callers must not either.
var smallInts = func() [1024][]string {
	var t [1024][]string
	for i := range t {
		t[i] = []string{strconv.Itoa(i)}
	}
	return t
}()

// intHeader returns a header value for n.
func intHeader(n int) []string {
	if n >= 0 && n < len(smallInts) {
		return smallInts[n]
	}
	return []string{strconv.Itoa(n)}
}
