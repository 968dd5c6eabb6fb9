package rpc

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

func rlResource() Resource {
	return Resource{Name: "rl", Ops: []Op{
		Handle("limited", echo, RateLimit(2, time.Minute)),
		Handle("limited", echo, RateLimit(2, time.Minute), Version("v2")),
		Handle("other", echo, RateLimit(2, time.Minute)),
		Handle("public", echo, RateLimit(2, time.Minute), Public()),
		Handle("default", echo),
		Handle("non_positive", echo, RateLimit(0, 0)),
		Handle("negative", echo, RateLimit(-5, -time.Second)),
		Handle("own_max", echo, RateLimit(3, 0)),
	}}
}

// rlCall calls rl/<action> as token from ip.
func rlCall(t *testing.T, e *Engine, action, version, token, ip string) result {
	t.Helper()
	r := post(envelopeJSON("rl", action, version, ""), "Authorization", "Bearer "+token)
	r = r.WithContext(WithRequestInfo(r.Context(), RequestInfo{ID: "r", ClientIP: ip}))
	return serve(t, e, r)
}

func TestRateLimitRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		defaults  Limit
		action    string
		wantMax   int
		wantReset int // X-RateLimit-Reset of the first call, seconds
	}{
		{"engine default", Limit{}, "default", 100, 300},
		{"configured default", Limit{Max: 4, Period: time.Minute}, "default", 4, 60},
		{"per-op override", Limit{Max: 4, Period: time.Minute}, "limited", 2, 60},
		{"non-positive max keeps default", Limit{Max: 4, Period: 10 * time.Minute}, "non_positive", 4, 600},
		{"negative max and period keep default", Limit{Max: 4, Period: 10 * time.Minute}, "negative", 4, 600},
		{"own max inherits engine period", Limit{Max: 4, Period: 10 * time.Minute}, "own_max", 3, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			e := newEngine(t, EngineConfig{Clock: clock.Now, DefaultLimit: tt.defaults}, rlResource())
			for i := 1; i <= tt.wantMax; i++ {
				res := rlCall(t, e, tt.action, "v1", "alice", "10.0.0.1")
				if res.Code != 0 {
					t.Fatalf("call %d: code = %d, want 0", i, res.Code)
				}
				wantHeaders := map[string]int{
					"X-RateLimit-Limit":     tt.wantMax,
					"X-RateLimit-Remaining": tt.wantMax - i,
					"X-RateLimit-Reset":     tt.wantReset,
				}
				for h, want := range wantHeaders {
					if got := res.Header.Get(h); got != strconv.Itoa(want) {
						t.Errorf("call %d: %s = %q, want %d", i, h, got, want)
					}
				}
			}
			res := rlCall(t, e, tt.action, "v1", "alice", "10.0.0.1")
			if res.Status != http.StatusTooManyRequests || res.Code != CodeTooManyRequests || res.Message != "Too many requests" {
				t.Fatalf("over the limit: %d %d %q, want 429 1401", res.Status, res.Code, res.Message)
			}
			if got := res.Header.Get("Retry-After"); got != strconv.Itoa(tt.wantReset+1) {
				t.Errorf("Retry-After = %q, want %d", got, tt.wantReset+1)
			}
			if got := res.Header.Get("X-RateLimit-Remaining"); got != "" {
				t.Errorf("a refused call carries X-RateLimit-Remaining %q", got)
			}
		})
	}
}

// TestRateLimitKey: the key is resource:version:action:clientIP:principalID (wire-core §4).
func TestRateLimitKey(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEngine(t, EngineConfig{Clock: clock.Now}, rlResource())
	for range 2 {
		rlCall(t, e, "limited", "v1", "alice", "10.0.0.1")
		rlCall(t, e, "public", "v1", "", "10.0.0.1")
	}
	tests := []struct {
		name                   string
		action, version, token string
		ip                     string
		wantCode               int
	}{
		{"same key", "limited", "v1", "alice", "10.0.0.1", CodeTooManyRequests},
		{"other principal", "limited", "v1", "bob", "10.0.0.1", 0},
		{"other ip", "limited", "v1", "alice", "10.0.0.2", 0},
		{"other version", "limited", "v2", "alice", "10.0.0.1", 0},
		{"other action", "other", "v1", "alice", "10.0.0.1", 0},
		{"public: anonymous shares per ip", "public", "v1", "", "10.0.0.1", CodeTooManyRequests},
		{"public: a token does not change the key", "public", "v1", "alice", "10.0.0.1", CodeTooManyRequests},
		{"public: other ip", "public", "v1", "", "10.0.0.3", 0},
	}
	for _, tt := range tests {
		if res := rlCall(t, e, tt.action, tt.version, tt.token, tt.ip); res.Code != tt.wantCode {
			t.Errorf("%s: code = %d, want %d", tt.name, res.Code, tt.wantCode)
		}
	}
}

func TestRateLimitSlidingWindow(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEngine(t, EngineConfig{Clock: clock.Now}, rlResource())
	call := func() result { return rlCall(t, e, "limited", "v1", "alice", "10.0.0.1") }
	call()
	clock.Add(15 * time.Second)
	if res := call(); res.Header.Get("X-RateLimit-Reset") != "45" || res.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("second call: reset %q remaining %q, want 45 and 0", res.Header.Get("X-RateLimit-Reset"), res.Header.Get("X-RateLimit-Remaining"))
	}
	clock.Add(45 * time.Second) // next window: the previous 2 still weigh fully
	if res := call(); res.Code != CodeTooManyRequests {
		t.Fatalf("at the window edge: code = %d, want 1401", res.Code)
	}
	clock.Add(30 * time.Second) // previous window weighs 1/2: estimate 1 < 2
	if res := call(); res.Code != 0 {
		t.Fatalf("half way: code = %d, want 0", res.Code)
	}
	res := call() // estimate 2×1/2 + 1 = 2
	if res.Code != CodeTooManyRequests || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("refused: code %d Retry-After %q, want 1401 and 1", res.Code, res.Header.Get("Retry-After"))
	}
	clock.Add(time.Second)
	if res := call(); res.Code != 0 {
		t.Errorf("after Retry-After: code = %d, want 0", res.Code)
	}
	clock.Add(3 * time.Minute)
	if res := call(); res.Code != 0 || res.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("after two idle windows: code %d remaining %q, want 0 and 1", res.Code, res.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestRateLimitAfterAuthentication(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEngine(t, EngineConfig{Clock: clock.Now}, rlResource())
	for range 5 {
		res := rlCall(t, e, "limited", "v1", "forged", "10.0.0.1")
		if res.Code != CodeTokenInvalid || res.Header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("401: code %d, X-RateLimit-Limit %q; want 1003 and none", res.Code, res.Header.Get("X-RateLimit-Limit"))
		}
	}
	if res := rlCall(t, e, "limited", "v1", "alice", "10.0.0.1"); res.Code != 0 {
		t.Errorf("failed authentications consumed the budget: code %d", res.Code)
	}
}

// TestRateLimiterMemoryBounded inserts a million distinct keys, advances the clock past two
// windows and checks the sweep empties (and shrinks) the shards.
func TestRateLimiterMemoryBounded(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := NewRateLimiter(clock.Now)
	limit := Limit{Max: 10, Period: time.Minute}
	const n = 1_000_000
	for i := range n {
		if d := l.allow(uint64(i)*0x9E3779B97F4A7C15, limit); !d.Allowed {
			t.Fatalf("key %d refused", i)
		}
	}
	if got := l.Len(); got != n {
		t.Fatalf("Len = %d, want %d", got, n)
	}
	clock.Add(2*time.Minute + time.Second)
	// Amortised sweep: the next calls sweep every shard they reach.
	for i := range 10_000 {
		l.Allow("fresh-"+strconv.Itoa(i), limit)
	}
	if got := l.Len(); got > 10_000 {
		t.Errorf("after amortised sweeps Len = %d, want at most the 10000 fresh keys", got)
	}
	clock.Add(2*time.Minute + time.Second)
	l.Sweep()
	if got := l.Len(); got != 0 {
		t.Errorf("after Sweep Len = %d, want 0", got)
	}
	for i := range l.shards {
		if sh := &l.shards[i]; sh.peak >= shrinkFloor {
			t.Errorf("shard %d still sized for %d keys", i, sh.peak)
		}
	}
}

func TestRateLimiterLiveKeysSurviveSweep(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := NewRateLimiter(clock.Now)
	limit := Limit{Max: 2, Period: time.Hour}
	l.Allow("k", limit)
	l.Allow("k", limit)
	clock.Add(90 * time.Minute) // the previous window (2 calls) weighs 1/2
	l.Sweep()
	if got := l.Len(); got != 1 {
		t.Fatalf("Len after sweep = %d, want 1", got)
	}
	if d := l.Allow("k", limit); !d.Allowed {
		t.Fatalf("estimate 1 < 2 refused")
	}
	if d := l.Allow("k", limit); d.Allowed || d.RetryAfter <= 0 {
		t.Errorf("estimate 2 admitted (%+v): the sweep forgot the previous window", d)
	}
}

// TestRateLimitKeyString: the engine's hashed key is the hash of the documented string form, so
// RateLimiter.Allow with that string counts in the same window.
func TestRateLimitKeyString(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEngine(t, EngineConfig{Clock: clock.Now}, rlResource())
	rlCall(t, e, "limited", "v1", "alice", "10.0.0.1")
	d := e.limiter.Allow("rl:v1:limited:10.0.0.1:u-alice", Limit{Max: 2, Period: time.Minute})
	if !d.Allowed || d.Remaining != 0 {
		t.Fatalf("Allow(string key) = %+v, want the second call of the window", d)
	}
	if res := rlCall(t, e, "limited", "v1", "alice", "10.0.0.1"); res.Code != CodeTooManyRequests {
		t.Errorf("engine after Allow: code %d, want 1401", res.Code)
	}
}
