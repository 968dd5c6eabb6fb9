package security

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/uptrace/bun"
)

// TOTP parameters (wire-core §5.3): SHA1, 6 digits, 30-second steps, one step of skew.
const (
	totpPeriod      = 30
	totpDigits      = otp.DigitsSix
	totpSkew        = 1
	totpDestination = "Authenticator App"
)

// TOTPSecretLoader returns a principal's base32 TOTP secret; "" means the principal has no TOTP
// and the challenge is skipped. The built-in store implements it.
type TOTPSecretLoader interface {
	LoadTOTPSecret(ctx context.Context, p *rpc.Principal) (string, error)
}

// TOTPProvider is the built-in totp challenge (order 100). A code is accepted once: the step it
// matched is recorded per principal in sys_security_totp_step, and a code of that step or an
// earlier one is refused (no replay within the validity window, on any node).
type TOTPProvider struct {
	secrets TOTPSecretLoader
	steps   *totpSteps
	now     func() time.Time
}

var _ ChallengeProvider = (*TOTPProvider)(nil)

// NewTOTPProvider returns the provider over secrets, recording used steps in d.
func NewTOTPProvider(secrets TOTPSecretLoader, d *db.DB, now func() time.Time) *TOTPProvider {
	return &TOTPProvider{secrets: secrets, steps: &totpSteps{db: d}, now: now}
}

// Type implements ChallengeProvider.
func (t *TOTPProvider) Type() string { return ChallengeTOTP }

// Order implements ChallengeProvider.
func (t *TOTPProvider) Order() int { return OrderTOTP }

// Evaluate implements ChallengeProvider: it applies when the principal has a secret, unless
// this login just enrolled it (totp_enrollment resolved: its code was of that secret).
func (t *TOTPProvider) Evaluate(ctx context.Context, st ChallengeState) (*LoginChallenge, error) {
	if slices.Contains(st.Resolved, ChallengeTOTPEnrollment) {
		return nil, nil
	}
	secret, err := t.secrets.LoadTOTPSecret(ctx, st.Principal)
	if err != nil || secret == "" {
		return nil, err
	}
	return &LoginChallenge{Type: ChallengeTOTP, Data: map[string]any{"destination": totpDestination}, Required: true}, nil
}

// Resolve implements ChallengeProvider: the response is the 6-digit code as a string.
func (t *TOTPProvider) Resolve(ctx context.Context, st ChallengeState, response json.RawMessage) (*rpc.Principal, error) {
	var code string
	if err := json.Unmarshal(response, &code); err != nil || code == "" {
		return nil, ErrOTPCodeRequired
	}
	secret, err := t.secrets.LoadTOTPSecret(ctx, st.Principal)
	if err != nil {
		return nil, err
	}
	step, ok := matchTOTP(secret, code, t.now())
	if !ok {
		return nil, ErrOTPCodeInvalid
	}
	fresh, err := t.steps.use(ctx, st.Principal.ID, step, t.now())
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, ErrOTPCodeInvalid
	}
	return st.Principal, nil
}

// matchTOTP returns the time step whose code equals code, trying the current step and one
// step either side; the comparison is constant-time.
func matchTOTP(secret, code string, now time.Time) (int64, bool) {
	if secret == "" || len(code) != int(totpDigits) {
		return 0, false
	}
	cur := now.Unix() / totpPeriod
	matched, found := int64(0), false
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		step := cur + d
		want, err := totp.GenerateCodeCustom(secret, time.Unix(step*totpPeriod, 0),
			totp.ValidateOpts{Period: totpPeriod, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && !found {
			matched, found = step, true
		}
	}
	return matched, found
}

// totpStepRow is the sys_security_totp_step table: the last accepted step per principal.
type totpStepRow struct {
	bun.BaseModel `bun:"table:sys_security_totp_step"`

	PrincipalID string    `bun:"principal_id,pk"`
	LastStep    int64     `bun:"last_step"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

type totpSteps struct {
	db *db.DB
}

// use records step as used for id; false means it (or a later step) was used already.
func (s *totpSteps) use(ctx context.Context, id string, step int64, now time.Time) (bool, error) {
	res, err := s.db.NewUpdate().Model((*totpStepRow)(nil)).Set("last_step = ?", step).Set("updated_at = ?", now.UTC()).
		Where("principal_id = ?", id).Where("last_step < ?", step).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("security: totp step: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	_, err = s.db.NewInsert().Model(&totpStepRow{PrincipalID: id, LastStep: step, UpdatedAt: now.UTC()}).Exec(ctx)
	if db.IsUniqueViolation(err) {
		return false, nil // a row exists with this step or a later one
	}
	if err != nil {
		return false, fmt.Errorf("security: totp step: %w", err)
	}
	return true, nil
}

// LoadTOTPSecret implements TOTPSecretLoader for the built-in store (only activated secrets).
func (s *Store) LoadTOTPSecret(ctx context.Context, p *rpc.Principal) (string, error) {
	u, err := s.UserByID(ctx, p.ID)
	if errors.Is(err, ErrUserNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return u.TOTPSecret, nil
}

// TOTPEnrollment is a started enrollment: the otpauth URI to show (as text and QR code) and the
// secret it carries. It becomes active only after ConfirmTOTP with a valid code.
type TOTPEnrollment struct {
	URI    string
	Secret string
}

// BeginTOTP creates a new pending TOTP secret for username (replacing an earlier pending one);
// an active secret stays active until the new one is confirmed.
func (s *Store) BeginTOTP(ctx context.Context, username, issuer string) (TOTPEnrollment, error) {
	u, err := s.LookupUser(ctx, username)
	if err != nil {
		return TOTPEnrollment{}, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: u.Username, Period: totpPeriod,
		Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return TOTPEnrollment{}, fmt.Errorf("security: totp secret: %w", err)
	}
	err = s.update(ctx, u.Username, func(q *bun.UpdateQuery, _ time.Time) *bun.UpdateQuery {
		return q.Set("totp_pending_secret = ?", key.Secret())
	})
	if err != nil {
		return TOTPEnrollment{}, err
	}
	return TOTPEnrollment{URI: key.URL(), Secret: key.Secret()}, nil
}

// ConfirmTOTP activates the pending secret of username when code is valid for it now.
func (s *Store) ConfirmTOTP(ctx context.Context, username, code string) error {
	row, err := s.row(ctx, "username", NormalizeUsername(username))
	if err != nil {
		return err
	}
	if row.TOTPPendingSecret == "" {
		return ErrTOTPNotPending
	}
	step, ok := matchTOTP(row.TOTPPendingSecret, code, s.now())
	if !ok {
		return ErrOTPCodeInvalid
	}
	// the confirming code is spent: it cannot be replayed at the next login
	if _, err := (&totpSteps{db: s.db}).use(ctx, row.ID, step, s.now()); err != nil {
		return err
	}
	return s.update(ctx, row.Username, func(q *bun.UpdateQuery, _ time.Time) *bun.UpdateQuery {
		return q.Set("totp_secret = ?", row.TOTPPendingSecret).Set("totp_pending_secret = ''").Set("totp_enroll = ?", false)
	})
}

// DisableTOTP removes the active and any pending TOTP secret of username, and a requested
// enrollment.
func (s *Store) DisableTOTP(ctx context.Context, username string) error {
	return s.update(ctx, username, func(q *bun.UpdateQuery, _ time.Time) *bun.UpdateQuery {
		return q.Set("totp_secret = ''").Set("totp_pending_secret = ''").Set("totp_enroll = ?", false)
	})
}

// RequestTOTPEnrollment makes username enroll a new authenticator at its next sign-in (the
// totp_enrollment challenge), which shows the new secret to the user only: what begin_totp does
// for another account (issue #42). A pending secret is dropped, so nobody who saw it can
// confirm it; an active secret stays in force (and is asked for first) until the new one is
// confirmed — remove_totp first to replace a lost device.
func (s *Store) RequestTOTPEnrollment(ctx context.Context, username string) error {
	return s.update(ctx, username, func(q *bun.UpdateQuery, _ time.Time) *bun.UpdateQuery {
		return q.Set("totp_pending_secret = ''").Set("totp_enroll = ?", true)
	})
}
