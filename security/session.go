package security

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
)

// Revocation reasons of SessionRevocation and EventSessionRevoked.
const (
	// RevokeReasonLogout: the session's owner called logout.
	RevokeReasonLogout = "logout"
	// RevokeReasonEvicted: a newer login of the same user went over session.max_concurrent
	// with on_exceed evict_oldest.
	RevokeReasonEvicted = "evicted"
	// RevokeReasonForced: an operator or host code revoked it (Sessions.Revoke, RevokeUser,
	// `svc session revoke`).
	RevokeReasonForced = "forced"
)

// sessionPurgeInterval is how often the database store deletes expired sessions.
const sessionPurgeInterval = time.Hour

// userLockStripes is the number of per-node login locks (a user maps to one by hash).
const userLockStripes = 64

// Session is one opaque-token login session (token_type opaque_token, wire-core §5.5). The
// server keeps only the token's hash: ID is hex(SHA-256(access token)), so a stored session never
// reveals a usable token, and whoever holds a token can compute its ID with SessionID.
type Session struct {
	// ID is hex(SHA-256(access token)).
	ID string `json:"id"`
	// UserID is the principal's id.
	UserID string `json:"userId"`
	// Principal is the snapshot taken at login; the bearer strategy answers with it.
	Principal *rpc.Principal `json:"principal"`
	// ClientIP is the address the login came from.
	ClientIP string `json:"clientIp,omitempty"`
	// CreatedAt is the login time.
	CreatedAt time.Time `json:"createdAt"`
	// LastSeenAt is the last time the session's expiry slid (at most one slide step old).
	LastSeenAt time.Time `json:"lastSeenAt"`
	// ExpiresAt is when the session ends unless used again (sliding).
	ExpiresAt time.Time `json:"expiresAt"`
	// MaxExpiresAt is CreatedAt + session.max_lifetime, the cap of every slide.
	MaxExpiresAt time.Time `json:"maxExpiresAt"`
}

// SessionRevocation tells a RevocationHook which session ended and why.
type SessionRevocation struct {
	// SessionID is the revoked session (SessionID of its token).
	SessionID string
	// UserID is the session's principal id.
	UserID string
	// Reason is RevokeReasonLogout, RevokeReasonEvicted or RevokeReasonForced.
	Reason string
}

// RevocationHook is called after a session was revoked on this node (logout, eviction, forced
// revocation through Sessions), so live connections authenticated by it can be closed: the push
// module registers one to kick WebSocket connections and relays the kick to other nodes. It runs
// synchronously on the revoking request, so it must not block; a panic is recovered and logged.
// It may be called more than once for one session when revocations race. Revocations made by
// another process (the CLI) do not reach it: consumers recheck live sessions with Sessions.Get.
type RevocationHook func(ctx context.Context, r SessionRevocation)

// sessionLimit is session.max_concurrent with on_exceed, as the stores apply it.
type sessionLimit struct {
	max    int  // 0 = unlimited
	reject bool // reject the new login instead of evicting the oldest
}

// sessionStore keeps sessions: the primary database, or Redis when svc.kvstore.enabled. Times
// come from the caller (the injected clock).
type sessionStore interface {
	// precision is the unit in which the store keeps times (CreatedAt is compared with the
	// principal's ValidAfter at it).
	precision() time.Duration
	// create stores s, first applying limit to the user's live sessions: it returns the sessions
	// it evicted, or ErrTooManyConcurrentSessions with limit.reject.
	create(ctx context.Context, s Session, limit sessionLimit, now time.Time) ([]Session, error)
	// get returns the session with id, or nil when there is none (expiry is the caller's check).
	get(ctx context.Context, id string) (*Session, error)
	// touch moves the session's expiry forward to expires (never backward) and records seen.
	touch(ctx context.Context, id string, seen, expires time.Time) error
	// remove deletes the session and returns it, or nil when it was already gone: of racing
	// removals exactly one gets it. The database store records the change at now.
	remove(ctx context.Context, id string, now time.Time) (*Session, error)
	// list returns the user's live sessions at now, oldest first.
	list(ctx context.Context, userID string, now time.Time) ([]Session, error)
	// purge deletes sessions expired at now and returns how many (0 where the store expires
	// them itself).
	purge(ctx context.Context, now time.Time) (int64, error)
}

// Sessions is the opaque-session layer: the token service's state and the Go API for forced
// logout. Service.Sessions returns it when token_type is opaque_token; OpenSessions builds one
// for tools (the `svc session` CLI).
//
// In a server (Build), sessions in the database read by id are served from an in-memory cache:
// a revocation records a row in sys_security_change in its own transaction, which every
// server's change feed applies within the bound of security/doc.go (this process at once).
// Sessions in Redis, and those of OpenSessions (tools, the CLI), are read on each request.
type Sessions struct {
	store  sessionStore
	cfg    config.Session
	now    func() time.Time
	state  *token.State
	events *emitter
	logger *slog.Logger
	seed   maphash.Seed
	locks  [userLockStripes]sync.Mutex
	cache  *token.Cache[*Session] // server with the database store only; nil *Session = no such session
	feed   *token.Feed
	// failClosed, maxFeedAge: svc.security.revocation (closed mode gates the cache on the feed)
	failClosed bool
	maxFeedAge time.Duration

	mu    sync.RWMutex
	hooks []RevocationHook
}

// OpenSessions returns the sessions of cfg: in Redis when kv is not nil (svc.kvstore.enabled),
// else in the primary database d (its table comes from Migrations()). now nil means time.Now.
func OpenSessions(cfg *config.Config, d *db.DB, kv *redis.Client, now func() time.Time) *Sessions {
	if now == nil {
		now = time.Now
	}
	s := &Sessions{cfg: cfg.Security.Session, now: now, logger: slog.New(slog.DiscardHandler), seed: maphash.MakeSeed()}
	if kv != nil {
		s.store = newRedisSessions(kv, cfg.App.Name, cfg.Security.Session.MaxLifetime)
	} else {
		s.store = &dbSessions{db: d}
	}
	return s
}

// load returns the session with id, from the cache when it holds a live one. A cached session
// that looks expired is read again: another server may have slid its expiry.
func (s *Sessions) load(ctx context.Context, id string, now time.Time) (*Session, error) {
	sess, err := s.cache.Load(ctx, id, func(ctx context.Context) (*Session, error) { return s.store.get(ctx, id) })
	if err != nil || sess == nil || now.Before(sess.ExpiresAt) {
		return sess, err
	}
	if s.cache == nil {
		return sess, nil
	}
	s.cache.Forget(id)
	return s.cache.Load(ctx, id, func(ctx context.Context) (*Session, error) { return s.store.get(ctx, id) })
}

// forget drops session id from the cache (a revocation of this process or from the change
// feed).
func (s *Sessions) forget(id string) { s.cache.Forget(id) }

// SessionID returns the session id of an opaque access token: hex(SHA-256(token)). Consumers that
// authenticated a connection with a token (push) match revocations with it.
func SessionID(accessToken string) string { return digest(accessToken) }

// digest is hex(SHA-256(s)): how tokens, codes and User-Agents are kept without keeping them.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// OnRevoke registers a hook called after every revocation made through these sessions.
func (s *Sessions) OnRevoke(h RevocationHook) {
	if h == nil {
		return
	}
	s.mu.Lock()
	s.hooks = append(s.hooks, h)
	s.mu.Unlock()
}

// List returns the live sessions of a principal id, oldest first.
func (s *Sessions) List(ctx context.Context, userID string) ([]Session, error) {
	return s.store.list(ctx, userID, s.now())
}

// Get returns the session with id while it is live, or nil once it expired, was revoked or was
// created before its principal's password change or disable: the decision of verify, which
// /api makes on every request. Its principal carries a built-in user's current roles, as
// verify's does. It does not slide the expiry (for rechecks of long-lived connections).
func (s *Sessions) Get(ctx context.Context, id string) (*Session, error) {
	now := s.now()
	sess, err := s.load(ctx, id, now)
	if err != nil || sess == nil || !now.Before(sess.ExpiresAt) {
		return nil, err
	}
	roles, err := s.state.Check(ctx, sess.UserID, sess.CreatedAt, false)
	if err != nil {
		return nil, nil
	}
	c := *sess
	c.Principal = token.ClonePrincipal(sess.Principal)
	if roles != nil && c.Principal != nil {
		c.Principal.Roles = token.WithRoles(roles)
	}
	return &c, nil
}

// Revoke ends the session with id on every node at once (forced logout) and reports whether it
// was live.
func (s *Sessions) Revoke(ctx context.Context, id string) (bool, error) {
	return s.revoke(ctx, id, RevokeReasonForced)
}

// RevokeUser ends every live session of a principal id and returns how many it ended.
func (s *Sessions) RevokeUser(ctx context.Context, userID string) (int, error) {
	live, err := s.List(ctx, userID)
	if err != nil {
		return 0, err
	}
	return revokeEach(ctx, live, func(s Session) string { return s.ID }, s.Revoke)
}

// revokeEach revokes every login of live with revoke and returns how many were still live.
func revokeEach[T any](ctx context.Context, live []T, id func(T) string, revoke func(context.Context, string) (bool, error)) (int, error) {
	n := 0
	for _, l := range live {
		ok, err := revoke(ctx, id(l))
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (s *Sessions) revoke(ctx context.Context, id, reason string) (bool, error) {
	sess, err := s.store.remove(ctx, id, s.now())
	s.forget(id)
	if err != nil || sess == nil {
		return false, err
	}
	s.feed.Publish(ctx, token.ChangeSession, id)
	if !s.now().Before(sess.ExpiresAt) { // expired but not purged yet: removed, was not live
		return false, nil
	}
	s.revoked(ctx, sess.ID, sess.UserID, reason)
	return true, nil
}

// revoked tells the hooks and the event sink.
func (s *Sessions) revoked(ctx context.Context, id, userID, reason string) {
	s.events.emit(ctx, Event{Type: EventSessionRevoked, PrincipalID: userID, SessionID: id, Reason: reason})
	s.mu.RLock()
	hooks := s.hooks
	s.mu.RUnlock()
	r := SessionRevocation{SessionID: id, UserID: userID, Reason: reason}
	for _, h := range hooks {
		s.callHook(ctx, h, r)
	}
}

func (s *Sessions) callHook(ctx context.Context, h RevocationHook, r SessionRevocation) {
	defer func() {
		if v := recover(); v != nil {
			s.logger.ErrorContext(ctx, "session revocation hook panicked", slog.String("session", r.SessionID), slog.Any("panic", v))
		}
	}()
	h(ctx, r)
}

// create starts a session for p and returns its token. Logins of one user are serialized on
// this node, so max_concurrent holds exactly on one node; racing logins on k nodes can leave at
// most k-1 extra sessions with the database store (the next login of the user trims them) and
// none with Redis, whose check-and-insert is one script.
func (s *Sessions) create(ctx context.Context, p *rpc.Principal) (string, error) {
	tok, err := GenerateOpaqueToken()
	if err != nil {
		return "", err
	}
	now := s.now().UTC()
	maxAt := now.Add(s.cfg.MaxLifetime)
	sess := Session{ID: SessionID(tok), UserID: p.ID, Principal: p, ClientIP: rpc.RequestInfoFrom(ctx).ClientIP,
		CreatedAt: s.state.LoginTime(ctx, p.ID, now, s.store.precision()), LastSeenAt: now, ExpiresAt: earliest(now.Add(s.cfg.IdleTTL), maxAt), MaxExpiresAt: maxAt}
	limit := sessionLimit{max: max(s.cfg.MaxConcurrent, 0), reject: s.cfg.OnExceed == config.OnExceedReject}
	mu := &s.locks[maphash.String(s.seed, p.ID)%userLockStripes]
	mu.Lock()
	evicted, err := s.store.create(ctx, sess, limit, now)
	mu.Unlock()
	if err != nil {
		return "", err
	}
	for _, e := range evicted {
		s.forget(e.ID)
		s.feed.Publish(ctx, token.ChangeSession, e.ID)
		s.revoked(ctx, e.ID, e.UserID, RevokeReasonEvicted)
	}
	return tok, nil
}

// verify returns the principal of a live session and slides its expiry (wire-core §5.5):
// unknown, expired and revoked sessions are 401/1003, as are sessions created before the
// principal's password change or disable.
func (s *Sessions) verify(ctx context.Context, tok string) (*rpc.Principal, error) {
	if !wellFormedOpaque(tok) {
		return nil, ErrTokenInvalid
	}
	// the cache (database sessions) is only as current as the feed: in closed mode a node that
	// cannot read its change log refuses rather than trust it (svc.security.revocation)
	if s.cache != nil && s.failClosed && !s.feed.Current(ctx, s.maxFeedAge) {
		return nil, ErrRevocationUnavailable
	}
	now := s.now()
	sess, err := s.load(ctx, SessionID(tok), now)
	if err != nil {
		return nil, err
	}
	if sess == nil || !now.Before(sess.ExpiresAt) {
		return nil, ErrTokenInvalid
	}
	roles, err := s.state.Check(ctx, sess.UserID, sess.CreatedAt, false)
	if err != nil {
		return nil, err
	}
	if s.cfg.Sliding {
		s.slide(ctx, sess, now)
	}
	p := token.ClonePrincipal(sess.Principal)
	if roles != nil {
		p.Roles = token.WithRoles(roles)
	}
	return p, nil
}

// slide moves the expiry to now + idle_ttl, capped at MaxExpiresAt. To spare the store a write
// per request it writes only when the expiry moves by a slide step (idle_ttl/30, between 1 s and
// 1 minute) or reaches the cap; a failed write is logged, the request goes on.
func (s *Sessions) slide(ctx context.Context, sess *Session, now time.Time) {
	target := earliest(now.Add(s.cfg.IdleTTL), sess.MaxExpiresAt)
	gain := target.Sub(sess.ExpiresAt)
	if gain <= 0 || (gain < slideStep(s.cfg.IdleTTL) && !target.Equal(sess.MaxExpiresAt)) {
		return
	}
	if err := s.store.touch(ctx, sess.ID, now.UTC(), target.UTC()); err != nil {
		s.logger.WarnContext(ctx, "session expiry not extended", slog.String("session", sess.ID), slog.Any("error", err))
		return
	}
	if s.cache != nil {
		c := *sess // the cached value is shared: replace it, never change it
		c.ExpiresAt, c.LastSeenAt = target.UTC(), now.UTC()
		s.cache.Set(sess.ID, &c)
	}
}

// purge deletes expired sessions (the session_purge worker of the database store).
func (s *Sessions) purge(ctx context.Context) error {
	n, err := s.store.purge(ctx, s.now())
	if err == nil && n > 0 {
		s.logger.DebugContext(ctx, "expired sessions purged", slog.Int64("count", n))
	}
	if err != nil {
		return fmt.Errorf("security: purge sessions: %w", err)
	}
	return nil
}

// slideStep is the least move of the expiry that is written: idle/30 within [1s, 1m].
func slideStep(idle time.Duration) time.Duration {
	return min(max(idle/30, time.Second), time.Minute)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
