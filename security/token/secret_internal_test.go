package token

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestSignerLifetime: a token living longer than its type's lifetime (beyond the clock-skew
// leeway) is invalid even with a good signature; one within the leeway passes.
func TestSignerLifetime(t *testing.T) {
	t.Parallel()
	keys := &Keys{}
	keys.Store(bytes.Repeat([]byte{7}, 32))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &signer{keys: keys, audience: "a", now: func() time.Time { return now },
		lifetimes: map[string]time.Duration{typAccess: 30 * time.Minute}}
	tests := []struct {
		name     string
		lifetime time.Duration
		noIAT    bool
		typ      string
		ok       bool
	}{
		{"exactly the lifetime", 30 * time.Minute, false, typAccess, true},
		{"within the leeway", 30*time.Minute + jwtLeeway, false, typAccess, true},
		{"beyond the leeway", 30*time.Minute + jwtLeeway + time.Second, false, typAccess, false},
		{"ten years", 10 * 365 * 24 * time.Hour, false, typAccess, false},
		{"no iat", 30 * time.Minute, true, typAccess, false},
		{"type without a lifetime", time.Minute, false, typRefresh, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &claims{ID: "j", Type: tt.typ, UserID: "u", IssuedAt: date(now), NotBefore: date(now), Expires: date(now.Add(tt.lifetime))}
			if tt.noIAT {
				c.IssuedAt = nil
			}
			tok, err := s.sign(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.parse(tok, tt.typ)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrTokenInvalid)) {
				t.Errorf("parse = %v, want ok %v (else ErrTokenInvalid)", err, tt.ok)
			}
		})
	}
}

// TestSignerWithoutKey: before Start loaded the key, signing fails and every token is invalid.
func TestSignerWithoutKey(t *testing.T) {
	t.Parallel()
	s := &signer{keys: &Keys{}, now: time.Now, lifetimes: map[string]time.Duration{typAccess: time.Minute}}
	if _, err := s.sign(&claims{ID: "j", Type: typAccess}); err == nil {
		t.Error("sign without a key succeeded")
	}
	if _, err := s.parse("a.b.c", typAccess); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("parse without a key = %v, want ErrTokenInvalid", err)
	}
}
