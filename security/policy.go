package security

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/svc-framework/svc/config"
)

// minIdentityLen: disallow_username ignores identities shorter than this, which would forbid
// nearly every password (a user named "a").
const minIdentityLen = 3

// PasswordCheck is one password to check against the policy.
type PasswordCheck struct {
	// UserID selects the history (empty for a new user: no history).
	UserID string
	// Username is the identity the password may not contain (disallow_username).
	Username string
	// Password is the candidate in plain text; it is never logged or stored by the check.
	Password string
}

// PasswordHistoryStore returns the newest depth password hashes of a user (for
// history_depth). The built-in store implements it.
type PasswordHistoryStore interface {
	PasswordHashes(ctx context.Context, userID string, depth int) ([]string, error)
}

// PasswordMetadata returns when a user's password was last changed (for max_age). The
// built-in store implements it.
type PasswordMetadata interface {
	PasswordChangedAt(ctx context.Context, userID string) (time.Time, error)
}

// Policy enforces svc.security.password_policy (spec §5.3, wire-core §5.8). Every rule is
// opt-in: a zero value disables it. Violations are 400/1050 errors whose message names the rule.
// A nil *Policy accepts everything.
type Policy struct {
	cfg     config.PasswordPolicy
	history PasswordHistoryStore
	meta    PasswordMetadata
	hasher  *Hasher
	now     func() time.Time
}

// NewPolicy returns the policy of cfg. history and meta may be nil, which switches off
// history_depth and max_age respectively.
func NewPolicy(cfg config.PasswordPolicy, history PasswordHistoryStore, meta PasswordMetadata, hasher *Hasher, now func() time.Time) *Policy {
	if hasher == nil {
		hasher = NewHasher(HashParams{})
	}
	if now == nil {
		now = time.Now
	}
	return &Policy{cfg: cfg, history: history, meta: meta, hasher: hasher, now: now}
}

// Check returns the first rule pw breaks, in the order of the configuration reference.
func (p *Policy) Check(ctx context.Context, c PasswordCheck) error {
	if p == nil {
		return nil
	}
	if err := p.checkText(c); err != nil {
		return err
	}
	return p.checkHistory(ctx, c)
}

// checkText applies the rules that need nothing but the text: lengths, classes, identity and
// the blocklist.
func (p *Policy) checkText(c PasswordCheck) error {
	r := p.cfg
	n := utf8.RuneCountInString(c.Password)
	if r.MinLength > 0 && n < r.MinLength {
		return ErrPasswordTooShort.WithArgs("min", strconv.Itoa(r.MinLength))
	}
	if r.MaxLength > 0 && n > r.MaxLength {
		return ErrPasswordTooLong.WithArgs("max", strconv.Itoa(r.MaxLength))
	}
	upper, lower, digit, symbol := classes(c.Password)
	switch {
	case r.RequireUpper && !upper:
		return ErrPasswordMissingUppercase
	case r.RequireLower && !lower:
		return ErrPasswordMissingLowercase
	case r.RequireDigit && !digit:
		return ErrPasswordMissingDigit
	case r.RequireSymbol && !symbol:
		return ErrPasswordMissingSymbol
	}
	if r.MinCharClasses > 0 && count(upper, lower, digit, symbol) < r.MinCharClasses {
		return ErrPasswordTooFewCharClasses.WithArgs("count", strconv.Itoa(r.MinCharClasses))
	}
	if r.DisallowUsername {
		id := strings.ToLower(strings.TrimSpace(c.Username))
		if utf8.RuneCountInString(id) >= minIdentityLen && strings.Contains(strings.ToLower(c.Password), id) {
			return ErrPasswordContainsIdentity
		}
	}
	for _, b := range r.Blocklist {
		if b != "" && strings.EqualFold(b, c.Password) {
			return ErrPasswordBlocked
		}
	}
	return nil
}

func (p *Policy) checkHistory(ctx context.Context, c PasswordCheck) error {
	if p.cfg.HistoryDepth <= 0 || p.history == nil || c.UserID == "" {
		return nil
	}
	hashes, err := p.history.PasswordHashes(ctx, c.UserID, p.cfg.HistoryDepth)
	if err != nil && !errors.Is(err, ErrUserNotFound) {
		return err
	}
	for _, h := range hashes {
		if p.hasher.Verify(h, c.Password) {
			return ErrPasswordReused
		}
	}
	return nil
}

// Expired reports whether the user's password is older than max_age (false when the rule is
// off, there is no metadata loader, or the user is unknown to it).
func (p *Policy) Expired(ctx context.Context, userID string) (bool, error) {
	if p == nil || p.cfg.MaxAge <= 0 || p.meta == nil {
		return false, nil
	}
	at, err := p.meta.PasswordChangedAt(ctx, userID)
	if errors.Is(err, ErrUserNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !at.IsZero() && p.now().Sub(at) > p.cfg.MaxAge, nil
}

// classes reports which of the four character classes s contains. Symbols are everything that
// is neither a letter nor a digit.
func classes(s string) (upper, lower, digit, symbol bool) {
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		case !unicode.IsLetter(r):
			symbol = true
		}
	}
	return
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
