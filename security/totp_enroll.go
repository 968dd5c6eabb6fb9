package security

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/svc-framework/svc/rpc"
)

// ChallengeTOTPEnrollment is the challenge type of an authenticator enrollment that someone
// else requested for the account (security/user begin_totp on another account, issue #42); its
// order is OrderTOTPEnrollment, after the totp challenge of an active secret.
const (
	ChallengeTOTPEnrollment = "totp_enrollment"
	OrderTOTPEnrollment     = 150
)

// TOTPEnrollmentData is the data of a totp_enrollment challenge: the new secret and its
// otpauth URL, shown to the account itself during its sign-in and to nobody else. The
// response is the 6-digit code of the new authenticator, as a string.
type TOTPEnrollmentData struct {
	Secret     string `json:"secret"`
	OTPAuthURL string `json:"otpauthUrl"`
}

// totpEnrollProvider presents the enrollment requested for a built-in user: it applies when
// the user's TOTPEnroll flag is set, starts a new pending secret (the store's BeginTOTP, as the
// account's own begin_totp does) and activates it on a valid code, which clears the flag.
type totpEnrollProvider struct {
	store  *Store
	issuer string
}

var _ ChallengeProvider = (*totpEnrollProvider)(nil)

// Type implements ChallengeProvider.
func (p *totpEnrollProvider) Type() string { return ChallengeTOTPEnrollment }

// Order implements ChallengeProvider.
func (p *totpEnrollProvider) Order() int { return OrderTOTPEnrollment }

// Evaluate implements ChallengeProvider.
func (p *totpEnrollProvider) Evaluate(ctx context.Context, st ChallengeState) (*LoginChallenge, error) {
	u, err := p.store.UserByID(ctx, st.Principal.ID)
	if errors.Is(err, ErrUserNotFound) || (err == nil && !u.TOTPEnroll) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	en, err := p.store.BeginTOTP(ctx, u.Username, p.issuer)
	if err != nil {
		return nil, err
	}
	return &LoginChallenge{Type: ChallengeTOTPEnrollment, Data: TOTPEnrollmentData{Secret: en.Secret, OTPAuthURL: en.URI},
		Required: true}, nil
}

// Resolve implements ChallengeProvider: a valid code of the new secret activates it.
func (p *totpEnrollProvider) Resolve(ctx context.Context, st ChallengeState, response json.RawMessage) (*rpc.Principal, error) {
	var code string
	if err := json.Unmarshal(response, &code); err != nil || code == "" {
		return nil, ErrOTPCodeRequired
	}
	u, err := p.store.UserByID(ctx, st.Principal.ID)
	if err != nil {
		return nil, err
	}
	switch err := p.store.ConfirmTOTP(ctx, u.Username, code); {
	case errors.Is(err, ErrOTPCodeInvalid), errors.Is(err, ErrTOTPNotPending):
		return nil, ErrOTPCodeInvalid
	case err != nil:
		return nil, err
	}
	return st.Principal, nil
}
