package security

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/svc-framework/svc/config"
)

// LockoutStore keeps failure counters (wire-core §5.6). The memory store serves one node; the
// Redis store makes every node agree. Times come from the caller so tests drive them.
type LockoutStore interface {
	// Blocked returns how long key is still blocked at now (0 = not blocked).
	Blocked(ctx context.Context, key string, now time.Time) (time.Duration, error)
	// Fail records a failure of key at now and returns the block it starts (0 = none yet).
	Fail(ctx context.Context, key string, now time.Time) (time.Duration, error)
	// Reset forgets key (a successful login).
	Reset(ctx context.Context, key string) error
}

// lockoutRule is the counting rule shared by the memory and Redis stores.
type lockoutRule struct {
	maxFailures int
	window      time.Duration
	backoff     bool
	lock        time.Duration
	base        time.Duration
	backoffMax  time.Duration
}

func newLockoutRule(c config.Lockout) lockoutRule {
	return lockoutRule{maxFailures: max(c.MaxFailures, 1), window: c.Window, backoff: c.Strategy == config.LockoutBackoff,
		lock: c.LockDuration, base: c.BackoffBase, backoffMax: c.BackoffMax}
}

// delay is the block after the count-th failure within the window: none below max_failures;
// lock_duration for strategy lock; backoff_base doubled per failure past the threshold, capped
// at backoff_max, for strategy backoff.
func (r lockoutRule) delay(count int) time.Duration {
	if count < r.maxFailures {
		return 0
	}
	if !r.backoff {
		return r.lock
	}
	shift := min(count-r.maxFailures, 40)
	d := r.base << shift
	if d <= 0 || d > r.backoffMax || shift >= 40 {
		return r.backoffMax
	}
	return d
}

// lockoutState is one key's counter.
type lockoutState struct {
	count int
	last  time.Time
	until time.Time
}

// fail applies one failure at now: a counter idle for longer than window starts over.
func (r lockoutRule) fail(s lockoutState, now time.Time) lockoutState {
	if s.count > 0 && now.Sub(s.last) > r.window {
		s = lockoutState{}
	}
	s.count++
	s.last = now
	if d := r.delay(s.count); d > 0 {
		s.until = now.Add(d)
	}
	return s
}

// MemoryLockout is the single-node LockoutStore.
type MemoryLockout struct {
	rule lockoutRule

	mu    sync.Mutex
	state map[string]lockoutState
}

var _ LockoutStore = (*MemoryLockout)(nil)

// NewMemoryLockout returns an in-memory store applying cfg.
func NewMemoryLockout(cfg config.Lockout) *MemoryLockout {
	return &MemoryLockout{rule: newLockoutRule(cfg), state: map[string]lockoutState{}}
}

// Blocked implements LockoutStore.
func (m *MemoryLockout) Blocked(_ context.Context, key string, now time.Time) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.state[key]; ok && now.Before(s.until) {
		return s.until.Sub(now), nil
	}
	return 0, nil
}

// Fail implements LockoutStore.
func (m *MemoryLockout) Fail(_ context.Context, key string, now time.Time) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.state) > 100_000 {
		m.prune(now)
	}
	s := m.rule.fail(m.state[key], now)
	m.state[key] = s
	if now.Before(s.until) {
		return s.until.Sub(now), nil
	}
	return 0, nil
}

// Reset implements LockoutStore.
func (m *MemoryLockout) Reset(_ context.Context, key string) error {
	m.mu.Lock()
	delete(m.state, key)
	m.mu.Unlock()
	return nil
}

// prune drops counters that can no longer block or count (bounded memory under a spray).
func (m *MemoryLockout) prune(now time.Time) {
	for k, s := range m.state {
		if !now.Before(s.until) && now.Sub(s.last) > m.rule.window {
			delete(m.state, k)
		}
	}
}

// guard applies svc.security.lockout around login and resolve_challenge: Check before
// authenticating, Fail after rejected credentials, Succeed after accepted ones. Store errors
// fail open and are logged.
//
// It keeps two counters per identity. The login counter (lockKey) is the original's: a verified
// password clears it, before any challenge (wire-core §5.6). Alone, that would let someone who
// knows the password guess challenge codes without end, max_failures - 1 per password login.
// The challenge counter (challengeKey) also counts failed challenge responses, and only a
// completed login clears it; when it is blocked, resolve_challenge answers 1023.
type guard struct {
	enabled bool
	key     config.LockoutKey
	store   LockoutStore
	now     func() time.Time
	logger  *slog.Logger
	events  *emitter
}

// lockKey is the counter key of wire-core §5.6: user:<id>, ip:<ip> or user:<id>|ip:<ip>. The
// identifier is normalized, so case and surrounding white space cannot dodge the counter.
func (g *guard) lockKey(identifier, ip string) string {
	id := NormalizeUsername(identifier)
	switch g.key {
	case config.LockoutKeyUser:
		return "user:" + id
	case config.LockoutKeyIP:
		return "ip:" + ip
	default:
		return "user:" + id + "|ip:" + ip
	}
}

// challengeKey is the counter of failed challenge responses of the identity lockKey names.
func (g *guard) challengeKey(identifier, ip string) string {
	return "challenge|" + g.lockKey(identifier, ip)
}

// check returns ErrAccountLocked with the wait in minutes when the counter key is blocked, and
// then sets Retry-After on h (when not nil) to the exact wait in seconds, as the engine does for
// 429/1401 (svc addition: the original sends none on 1023).
func (g *guard) check(ctx context.Context, key string, h http.Header) error {
	if !g.enabled {
		return nil
	}
	wait, err := g.store.Blocked(ctx, key, g.now())
	if err != nil {
		g.logger.WarnContext(ctx, "lockout store unavailable, failing open", slog.Any("error", err))
		return nil
	}
	if wait > 0 {
		if h != nil {
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		}
		return lockedError(wait)
	}
	return nil
}

// Reasons of account-locked events: which counter started the block.
const (
	lockReasonLogin     = "max_failures"
	lockReasonChallenge = "challenge_failures"
)

// fail records a rejected credential under key; when it starts a block, an account-locked event
// with reason follows.
func (g *guard) fail(ctx context.Context, key, reason, identifier, loginType string) {
	if !g.enabled {
		return
	}
	wait, err := g.store.Fail(ctx, key, g.now())
	if err != nil {
		g.logger.WarnContext(ctx, "lockout store unavailable, failure not counted", slog.Any("error", err))
		return
	}
	if wait > 0 {
		g.events.emit(ctx, Event{Type: EventAccountLocked, LoginType: loginType, Identifier: NormalizeUsername(identifier),
			Reason: reason, RetryAfter: wait})
	}
}

// succeed clears the counter of the key.
func (g *guard) succeed(ctx context.Context, key string) {
	if !g.enabled {
		return
	}
	if err := g.store.Reset(ctx, key); err != nil {
		g.logger.WarnContext(ctx, "lockout store unavailable, counter not reset", slog.Any("error", err))
	}
}

// lockedError is ErrAccountLocked with {{minutes}} = the wait rounded up, at least 1.
func lockedError(wait time.Duration) error {
	minutes := max(int(math.Ceil(wait.Minutes())), 1)
	return ErrAccountLocked.WithArgs("minutes", strconv.Itoa(minutes))
}
