package security

import (
	"context"
	"maps"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/security/token"
)

// extensions are the directory-backed pieces, from the built-in store, a host UserStore that
// implements them, or the Options fields (which win).
type extensions struct {
	users      UserStore
	principals PrincipalLoader
	state      TokenStateLoader
	totp       TOTPSecretLoader
	history    PasswordHistoryStore
	meta       PasswordMetadata
	changer    PasswordChanger
}

// extensions picks the user directory: the built-in store unless the host registered its own
// password authenticator or user store (spec/README.md).
func (s *Service) extensions(deps app.Platform, opts Options, hasher *Hasher) extensions {
	var ext extensions
	var dir any
	switch {
	case opts.Authenticators[LoginTypePassword] != nil:
	case opts.UserStore != nil:
		ext.users, dir = opts.UserStore, opts.UserStore
	default:
		s.store = NewStore(deps.DB, hasher, nil, s.now)
		s.store.feed, s.store.users = s.feed, token.NewCache[*User](s.now)
		ext.users, dir = s.store, s.store
	}
	ext.principals, _ = dir.(PrincipalLoader)
	ext.state, _ = dir.(TokenStateLoader)
	ext.totp, _ = dir.(TOTPSecretLoader)
	ext.history, _ = dir.(PasswordHistoryStore)
	ext.meta, _ = dir.(PasswordMetadata)
	ext.changer, _ = dir.(PasswordChanger)
	ext.principals = pick(opts.PrincipalLoader, ext.principals)
	ext.state = pick(opts.TokenState, ext.state)
	ext.totp = pick(opts.TOTPSecrets, ext.totp)
	ext.history = pick(opts.PasswordHistory, ext.history)
	ext.meta = pick(opts.PasswordMetadata, ext.meta)
	ext.changer = pick(opts.PasswordChanger, ext.changer)

	s.policy = NewPolicy(deps.Config.Security.PasswordPolicy, ext.history, ext.meta, hasher, s.now)
	if s.store != nil {
		s.store.policy = s.policy
	}
	return ext
}

func pick[T comparable](override, def T) T {
	var zero T
	if override != zero {
		return override
	}
	return def
}

// buildTokens sets up the token service of svc.security.token_type: JWTs with families in the
// primary database, or opaque sessions (in Redis when the key-value store is enabled, else in
// the primary database); or the host's token service.
func (s *Service) buildTokens(deps app.Platform, opts Options, ext extensions) error {
	if opts.Tokens != nil {
		s.tokens = opts.Tokens
		return nil
	}
	sec := deps.Config.Security
	state := token.NewState(ext.state, s.store != nil && ext.state == TokenStateLoader(s.store), sec.Revocation, s.now, s.logger)
	s.state = state
	if s.store != nil {
		s.store.onChange = append(s.store.onChange, state.Invalidate)
		s.feed.On(token.ChangeUser, s.store.forget)
	}
	if sec.TokenType == config.TokenTypeOpaque {
		s.sessions = OpenSessions(deps.Config, deps.DB, deps.KV, s.now)
		s.sessions.state, s.sessions.events, s.sessions.logger, s.sessions.feed = state, s.events, s.logger, s.feed
		if _, inDB := s.sessions.store.(*dbSessions); inDB {
			s.sessions.cache = token.NewCache[*Session](s.now)
			s.sessions.failClosed = sec.Revocation.FailMode == config.RevocationFailClosed
			s.sessions.maxFeedAge = max(sec.Revocation.MaxFeedAge, time.Second)
		}
		s.sessions.OnRevoke(opts.OnRevoke)
		// this node's revocations reach push as a bus signal (push kicks and relays them)
		s.sessions.OnRevoke(func(ctx context.Context, rev SessionRevocation) {
			s.signals.Send(ctx, token.SignalSessionRevoked, rev.SessionID)
		})
		s.feed.On(token.ChangeSession, s.sessions.forget)
		s.tokens = NewOpaqueTokens(s.sessions)
		return nil
	}
	s.jwt = token.NewJWT(token.JWTOptions{Config: deps.Config, DB: deps.DB, Keys: s.keys, Now: s.now, Logger: s.logger,
		State: state, Principals: ext.principals, Feed: s.feed, Signals: s.signals, Audit: auditor{s.events}})
	s.tokens = s.jwt
	return nil
}

// auditor turns what the token layer reports into the module's events.
type auditor struct{ events *emitter }

var _ token.Auditor = auditor{}

// RefreshReused implements token.Auditor: EventRefreshReuseDetected.
func (a auditor) RefreshReused(ctx context.Context, principalID string) {
	a.events.emit(ctx, Event{Type: EventRefreshReuseDetected, PrincipalID: principalID, Reason: "reuse"})
}

// FamilyForced implements token.Auditor: EventSessionRevoked with the family id as SessionID.
func (a auditor) FamilyForced(ctx context.Context, principalID, fid string) {
	a.events.emit(ctx, Event{Type: EventSessionRevoked, PrincipalID: principalID, SessionID: fid, Reason: RevokeReasonForced})
}

// buildAuthenticators registers the host's login types and the built-in password login over
// the chosen directory.
func (s *Service) buildAuthenticators(opts Options, ext extensions, hasher *Hasher) {
	s.authenticators = map[string]Authenticator{}
	if ext.users != nil {
		s.authenticators[LoginTypePassword] = &PasswordAuthenticator{Users: ext.users, Hasher: hasher, Logger: s.logger}
	}
	maps.Copy(s.authenticators, opts.Authenticators)
	delete(s.authenticators, LoginTypeTrustCode) // only the gateway's codes, when trust login is on
	for typ := range refusedLoginTypes {
		delete(s.authenticators, typ)
	}
}

// buildGuard chooses the lockout store: the host's, Redis when the key-value store is enabled
// (all nodes agree), else memory.
func (s *Service) buildGuard(deps app.Platform, opts Options) {
	lc := deps.Config.Security.Lockout
	store := opts.Lockout
	switch {
	case store != nil:
	case deps.KV != nil:
		store = NewRedisLockout(deps.KV, deps.Config.App.Name, lc)
	default:
		store = NewMemoryLockout(lc)
	}
	s.guard = &guard{enabled: lc.Enabled, key: lc.Key, store: store, now: s.now, logger: s.logger, events: s.events}
}

// buildChain orders the challenge providers: the host's, plus the built-in totp (when secrets
// can be loaded and the host did not bring its own totp) and password_change (when max_age is
// set and passwords can be changed).
func (s *Service) buildChain(deps app.Platform, opts Options, ext extensions) {
	ps := append([]ChallengeProvider(nil), opts.Challenges...)
	has := func(typ string) bool {
		for _, p := range ps {
			if p.Type() == typ {
				return true
			}
		}
		return false
	}
	if ext.totp != nil && !has(ChallengeTOTP) {
		ps = append(ps, NewTOTPProvider(ext.totp, deps.DB, s.now))
	}
	if s.store != nil && !has(ChallengeTOTPEnrollment) {
		ps = append(ps, &totpEnrollProvider{store: s.store, issuer: deps.Config.App.Name})
	}
	if deps.Config.Security.PasswordPolicy.MaxAge > 0 && ext.meta != nil && ext.changer != nil && !has(ChallengePasswordChange) {
		ps = append(ps, &passwordChangeProvider{policy: s.policy, changer: ext.changer})
	}
	s.chain = newChain(ps)
}
