package security

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security/token"
)

// Built-in challenge types and their order (wire-core §5.2: ascending order, only the first
// applicable one is presented).
const (
	ChallengeTOTP                = "totp"
	ChallengeSMSOTP              = "sms_otp"
	ChallengeEmailOTP            = "email_otp"
	ChallengePasswordChange      = "password_change"
	ChallengeDepartmentSelection = "department_selection"

	OrderTOTP                = 100
	OrderSMSOTP              = 200
	OrderEmailOTP            = 300
	OrderPasswordChange      = 400
	OrderDepartmentSelection = 500
)

// LoginChallenge is a pending challenge (wire-core §5.2).
type LoginChallenge struct {
	Type     string `json:"type"`
	Data     any    `json:"data,omitempty"`
	Required bool   `json:"required"`
}

// LoginResult is the data of login and resolve_challenge: tokens XOR a challenge.
type LoginResult struct {
	Tokens         *AuthTokens     `json:"tokens,omitempty"`
	ChallengeToken string          `json:"challengeToken,omitempty"`
	Challenge      *LoginChallenge `json:"challenge,omitempty"`
}

// ChallengeState is what a provider knows about the login in progress.
type ChallengeState struct {
	// LoginType is the login mechanism ("password", a host type); providers may scope by it.
	LoginType string
	// Identifier is the normalized login identifier.
	Identifier string
	// Principal is the authenticated principal the tokens will be issued to.
	Principal *rpc.Principal
	// Resolved lists the challenge types already resolved in this login.
	Resolved []string
	// ClientIP is the caller's address.
	ClientIP string

	// issued is when the challenge token this state came from was issued (zero in a login's
	// first step): a password change or disable at or after it ends the login (issue #42).
	issued time.Time
}

// ChallengeProvider is one step of the login challenge chain (wire-core §5.2–5.3).
type ChallengeProvider interface {
	// Type is the challenge type sent to the client and expected back in resolve_challenge.
	Type() string
	// Order places the provider in the chain (ascending; built-ins use 100..500).
	Order() int
	// Evaluate returns the challenge to present for this login, or nil when it does not apply.
	Evaluate(ctx context.Context, st ChallengeState) (*LoginChallenge, error)
	// Resolve checks the client's response and returns the principal to continue with
	// (usually st.Principal). Errors that are *rpc.Error are sent as they are; others become
	// ErrChallengeResolveFailed (1034); a nil or reserved principal is ErrPrincipalInvalid.
	Resolve(ctx context.Context, st ChallengeState, response json.RawMessage) (*rpc.Principal, error)
}

// chain is the ordered list of providers.
type chain struct {
	providers []ChallengeProvider
}

func newChain(ps []ChallengeProvider) *chain {
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b ChallengeProvider) int { return a.Order() - b.Order() })
	return &chain{providers: ps}
}

// provider returns the provider of a type.
func (c *chain) provider(typ string) ChallengeProvider {
	for _, p := range c.providers {
		if p.Type() == typ {
			return p
		}
	}
	return nil
}

// next returns the first applicable provider's challenge that st has not resolved yet.
func (c *chain) next(ctx context.Context, st ChallengeState) (*LoginChallenge, error) {
	for _, p := range c.providers {
		if slices.Contains(st.Resolved, p.Type()) {
			continue
		}
		ch, err := p.Evaluate(ctx, st)
		if err != nil {
			return nil, err
		}
		if ch != nil {
			if ch.Type == "" {
				ch.Type = p.Type()
			}
			return ch, nil
		}
	}
	return nil, nil
}

// challengeTokens sign the state between login steps (token.Challenges: a JWT of typ
// challenge, 5 minutes, with a key derived from the signing secret for this purpose only).
type challengeTokens struct {
	signer *token.Challenges
}

// issue signs the state with pending as the challenge the client must resolve next.
func (t *challengeTokens) issue(st ChallengeState, pending string) (string, error) {
	return t.signer.Issue(token.ChallengeState{LoginType: st.LoginType, Identifier: st.Identifier, Principal: st.Principal,
		Pending: pending, Resolved: st.Resolved})
}

// parse verifies a challenge token; any failure (forged, expired, malformed) is 401/1031.
func (t *challengeTokens) parse(tok string) (ChallengeState, string, error) {
	c, ok := t.signer.Parse(tok)
	if !ok {
		return ChallengeState{}, "", ErrChallengeTokenInvalid
	}
	return ChallengeState{LoginType: c.LoginType, Identifier: c.Identifier, Principal: c.Principal, Resolved: c.Resolved,
		issued: c.LoginAt}, c.Pending, nil
}

// PasswordChanger replaces a user's password (the password_change challenge). The built-in
// store implements it, checking the password policy.
type PasswordChanger interface {
	ChangePassword(ctx context.Context, userID, newPassword string) error
}

// passwordChangeProvider presents password_change when the password is older than max_age
// (wire-core §5.2: data {reason: "expired"}); the response is the new password.
type passwordChangeProvider struct {
	policy  *Policy
	changer PasswordChanger
}

func (p *passwordChangeProvider) Type() string { return ChallengePasswordChange }
func (p *passwordChangeProvider) Order() int   { return OrderPasswordChange }

func (p *passwordChangeProvider) Evaluate(ctx context.Context, st ChallengeState) (*LoginChallenge, error) {
	expired, err := p.policy.Expired(ctx, st.Principal.ID)
	if err != nil || !expired {
		return nil, err
	}
	return &LoginChallenge{Type: ChallengePasswordChange, Data: map[string]any{"reason": "expired"}, Required: true}, nil
}

func (p *passwordChangeProvider) Resolve(ctx context.Context, st ChallengeState, response json.RawMessage) (*rpc.Principal, error) {
	var pw string
	if err := json.Unmarshal(response, &pw); err != nil || pw == "" {
		return nil, ErrNewPasswordRequired
	}
	if err := p.changer.ChangePassword(ctx, st.Principal.ID, pw); err != nil {
		return nil, err
	}
	return st.Principal, nil
}

var _ ChallengeProvider = (*passwordChangeProvider)(nil)
