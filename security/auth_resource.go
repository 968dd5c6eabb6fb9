package security

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/svc-framework/svc/rpc"
)

// ResourceAuth is the name of the security resource (spec §2.2).
const ResourceAuth = "security/auth"

// loginParams are the params of login (spec §2.3).
type loginParams struct {
	Type        string          `json:"type"`
	Principal   string          `json:"principal"`
	Credentials json.RawMessage `json:"credentials"`
}

// Identifier bounds of login params (issue #11 item 5): longer or control-character values are
// 400/1400 before they reach a store, the lockout keys or a log line.
const (
	maxLoginTypeLength = 64
	maxPrincipalLength = 255
)

// Validate implements rpc.Validator.
func (p *loginParams) Validate() error {
	var c rpc.Check
	c.Required("type", p.Type != "")
	c.Identifier("type", p.Type, maxLoginTypeLength)
	c.Required("principal", p.Principal != "")
	// surrounding white space (a tab included) is trimmed by user-name normalization, as before
	c.Identifier("principal", strings.TrimSpace(p.Principal), maxPrincipalLength)
	c.Required("credentials", present(p.Credentials))
	return c.Err()
}

type refreshParams struct {
	RefreshToken string `json:"refreshToken"`
}

// Validate implements rpc.Validator.
func (p *refreshParams) Validate() error {
	var c rpc.Check
	c.Required("refreshToken", p.RefreshToken != "")
	return c.Err()
}

type resolveParams struct {
	ChallengeToken string          `json:"challengeToken"`
	Type           string          `json:"type"`
	Response       json.RawMessage `json:"response"`
}

// Validate implements rpc.Validator.
func (p *resolveParams) Validate() error {
	var c rpc.Check
	c.Required("challengeToken", p.ChallengeToken != "")
	c.Required("type", p.Type != "")
	c.Identifier("type", p.Type, maxLoginTypeLength)
	c.Required("response", present(p.Response))
	return c.Err()
}

// present reports whether a raw JSON value was sent and is not null.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// resource is the security/auth table of operations (wire-core §5.1): login and
// resolve_challenge public at login_rate_limit, refresh public at refresh_rate_limit and only
// with a token service that refreshes, logout and get_user_info under the bearer strategy.
func (s *Service) resource() rpc.Resource {
	sec := s.cfg.Security
	ops := []rpc.Op{
		rpc.Handle("login", s.login, rpc.Public(), rpc.RateLimit(sec.LoginRateLimit, 0)),
		rpc.Handle("resolve_challenge", s.resolveChallenge, rpc.Public(), rpc.RateLimit(sec.LoginRateLimit, 0)),
		rpc.Handle("logout", s.logout),
		rpc.Handle("get_user_info", s.getUserInfo),
	}
	if s.tokens.SupportsRefresh() {
		ops = append(ops, rpc.Handle("refresh", s.refresh, rpc.Public(), rpc.RateLimit(sec.RefreshRateLimit, 0)))
	}
	return rpc.Resource{Name: ResourceAuth, Ops: ops}
}

func (s *Service) login(ctx context.Context, c rpc.Call, p loginParams) (*LoginResult, error) {
	auth, err := s.authenticator(p.Type)
	if err != nil {
		return nil, err
	}
	guarded := p.Type != LoginTypeTrustCode // a trust code is unguessable and single-use
	if guarded {
		if err := s.guard.check(ctx, s.guard.lockKey(p.Principal, c.ClientIP), c.Header); err != nil {
			s.events.emit(ctx, Event{Type: EventLoginFailed, LoginType: p.Type, Identifier: NormalizeUsername(p.Principal), Reason: "locked"})
			return nil, err
		}
	}
	principal, err := auth.Authenticate(ctx, LoginRequest{Type: p.Type, Identifier: p.Principal, Credentials: p.Credentials,
		ClientIP: c.ClientIP, Request: c.Request})
	if err != nil {
		if guarded && errors.Is(err, ErrCredentialsInvalid) {
			s.guard.fail(ctx, s.guard.lockKey(p.Principal, c.ClientIP), lockReasonLogin, p.Principal, p.Type)
		}
		s.events.emit(ctx, Event{Type: EventLoginFailed, LoginType: p.Type, Identifier: NormalizeUsername(p.Principal), Reason: reason(err)})
		return nil, err
	}
	if !loginPrincipal(principal) {
		return nil, ErrPrincipalInvalid
	}
	if guarded {
		s.guard.succeed(ctx, s.guard.lockKey(p.Principal, c.ClientIP))
	}
	st := ChallengeState{LoginType: p.Type, Identifier: NormalizeUsername(p.Principal), Principal: principal, ClientIP: c.ClientIP}
	return s.advance(ctx, st)
}

// authenticator returns the authenticator of a login type, or 400/1001 (wire-core §2.3): token
// type names and "refresh" are never login types, and trust_code exists only while trust login
// is on.
func (s *Service) authenticator(typ string) (Authenticator, error) {
	if refusedLoginTypes[typ] || (typ == LoginTypeTrustCode && !s.cfg.Security.TrustLogin.Enabled) {
		return nil, ErrUnsupportedAuthenticationType
	}
	a, ok := s.authenticators[typ]
	if !ok {
		return nil, ErrUnsupportedAuthenticationType
	}
	return a, nil
}

// advance presents the next challenge of the chain, or issues the tokens when none is left.
func (s *Service) advance(ctx context.Context, st ChallengeState) (*LoginResult, error) {
	ch, err := s.chain.next(ctx, st)
	if err != nil {
		return nil, err
	}
	if ch != nil {
		tok, err := s.challenges.issue(st, ch.Type)
		if err != nil {
			return nil, err
		}
		return &LoginResult{ChallengeToken: tok, Challenge: ch}, nil
	}
	if len(st.Resolved) > 0 && st.LoginType != LoginTypeTrustCode {
		s.guard.succeed(ctx, s.guard.challengeKey(st.Identifier, st.ClientIP))
	}
	tokens, err := s.tokens.Issue(ctx, st.Principal)
	if err != nil { // e.g. 403/1024: session.max_concurrent reached with on_exceed reject
		s.events.emit(ctx, Event{Type: EventLoginFailed, LoginType: st.LoginType, Identifier: st.Identifier,
			PrincipalID: st.Principal.ID, Reason: reason(err)})
		return nil, err
	}
	s.events.emit(ctx, Event{Type: EventLoginSucceeded, LoginType: st.LoginType, Identifier: st.Identifier, PrincipalID: st.Principal.ID})
	return &LoginResult{Tokens: &tokens}, nil
}

func (s *Service) resolveChallenge(ctx context.Context, c rpc.Call, p resolveParams) (*LoginResult, error) {
	st, pending, err := s.challenges.parse(p.ChallengeToken)
	if err != nil {
		return nil, err
	}
	// a challenge token is a token too: one issued at or before the principal's password
	// change or disable ends there, so a login begun with the old password cannot finish
	if _, err := s.state.Check(ctx, st.Principal.ID, st.issued, true); errors.Is(err, ErrTokenInvalid) {
		return nil, ErrChallengeTokenInvalid
	} else if err != nil {
		return nil, err
	}
	st.ClientIP = c.ClientIP
	guarded := st.LoginType != LoginTypeTrustCode
	loginKey, challengeKey := s.guard.lockKey(st.Identifier, c.ClientIP), s.guard.challengeKey(st.Identifier, c.ClientIP)
	if guarded {
		for _, key := range []string{loginKey, challengeKey} {
			if err := s.guard.check(ctx, key, c.Header); err != nil {
				return nil, err
			}
		}
	}
	if p.Type != pending {
		return nil, ErrChallengeTypeInvalid
	}
	provider := s.chain.provider(pending)
	if provider == nil {
		return nil, ErrChallengeTypeInvalid
	}
	next, err := provider.Resolve(ctx, st, p.Response)
	if err != nil {
		if guarded && (errors.Is(err, ErrOTPCodeInvalid) || errors.Is(err, ErrCredentialsInvalid)) {
			s.guard.fail(ctx, loginKey, lockReasonLogin, st.Identifier, st.LoginType)
			s.guard.fail(ctx, challengeKey, lockReasonChallenge, st.Identifier, st.LoginType)
		}
		s.events.emit(ctx, Event{Type: EventLoginFailed, LoginType: st.LoginType, Identifier: st.Identifier,
			PrincipalID: st.Principal.ID, Reason: reason(err)})
		if _, ok := rpc.AsError(err); !ok {
			s.logger.ErrorContext(ctx, "challenge provider failed", slog.String("challenge", pending), slog.Any("error", err))
			return nil, ErrChallengeResolveFailed.Wrap(err)
		}
		return nil, err
	}
	if !loginPrincipal(next) {
		return nil, ErrPrincipalInvalid
	}
	st.Principal = next
	st.Resolved = append(st.Resolved, pending)
	return s.advance(ctx, st)
}

func (s *Service) refresh(ctx context.Context, _ rpc.Call, p refreshParams) (*AuthTokens, error) {
	tokens, principal, err := s.tokens.Refresh(ctx, p.RefreshToken)
	if err != nil {
		return nil, err
	}
	s.events.emit(ctx, Event{Type: EventTokenRefreshed, PrincipalID: principal.ID})
	return &tokens, nil
}

func (s *Service) logout(ctx context.Context, c rpc.Call, _ rpc.NoParams) (any, error) {
	if err := s.tokens.Revoke(ctx, BearerToken(c.Request)); err != nil {
		s.logger.WarnContext(ctx, "logout: revocation not recorded yet, retrying in the background", slog.Any("error", err))
	}
	s.events.emit(ctx, Event{Type: EventLogout, PrincipalID: c.Principal.ID})
	return nil, nil
}

func (s *Service) getUserInfo(ctx context.Context, c rpc.Call, params map[string]any) (*UserInfo, error) {
	if s.userInfo == nil {
		return nil, ErrUserInfoLoaderNotImplemented
	}
	if params == nil {
		params = map[string]any{}
	}
	info, err := s.userInfo.LoadUserInfo(ctx, c.Principal, params)
	if err != nil {
		return nil, err
	}
	if info.PermissionTokens == nil {
		info.PermissionTokens = []string{}
	}
	if info.Menus == nil {
		info.Menus = []UserMenu{}
	}
	if info.Gender == "" {
		info.Gender = GenderUnknown
	}
	return info, nil
}

// reason is the short word an event carries for a failure: the message key of an *rpc.Error,
// "error" otherwise (never the error text, which may quote input).
func reason(err error) string {
	if e, ok := rpc.AsError(err); ok {
		return e.Key
	}
	return "error"
}

// loginPrincipal reports whether an authenticator's principal may receive tokens: it has an id
// that is not reserved (wire-core §2.3, 1007) and is not of the system type, which bypasses
// every permission check and so must never be reachable through a login.
func loginPrincipal(p *rpc.Principal) bool {
	return p != nil && p.ID != "" && !rpc.IsReservedID(p.ID) && p.Type != rpc.PrincipalSystem
}
