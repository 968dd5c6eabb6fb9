package security

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

// eachKind runs fn on a fresh database of every kind (PostgreSQL and MariaDB when configured).
func eachKind(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	for _, kind := range []config.DBKind{config.SQLite, config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			fn(t, testservice.OpenDB(t, testservice.DataSource(t, kind)))
		})
	}
}

// TestLoadSigningKeyRace: eight nodes loading the key at the same moment on a migrated, empty
// database all end with the same 32-byte key, and exactly one of them generated it.
func TestLoadSigningKeyRace(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, d, *Migrations()); err != nil {
			t.Fatal(err)
		}
		const nodes = 8
		var (
			wg        sync.WaitGroup
			gate      = make(chan struct{})
			keys      [nodes][]byte
			generated [nodes]bool
			errs      [nodes]error
		)
		for i := range nodes {
			wg.Go(func() {
				<-gate
				keys[i], generated[i], errs[i] = loadSigningKey(ctx, "", d, time.Now())
			})
		}
		close(gate)
		wg.Wait()
		winners := 0
		for i := range nodes {
			if errs[i] != nil {
				t.Fatalf("node %d: %v", i, errs[i])
			}
			if len(keys[i]) != generatedSecretBytes || !bytes.Equal(keys[i], keys[0]) {
				t.Errorf("node %d key differs from node 0's (or is not %d bytes)", i, generatedSecretBytes)
			}
			if generated[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Errorf("%d nodes generated the secret, want exactly 1", winners)
		}
		again, gen, err := loadSigningKey(ctx, "", d, time.Now())
		if err != nil || gen || !bytes.Equal(again, keys[0]) {
			t.Errorf("reload = generated %v, err %v, same key %v; want the stored key", gen, err, bytes.Equal(again, keys[0]))
		}
	})
}

// TestLoadSigningKeyConfiguredWins: a configured secret is used as is, whatever the table holds,
// and nothing is written.
func TestLoadSigningKeyConfiguredWins(t *testing.T) {
	t.Parallel()
	d := testservice.OpenDB(t, testservice.DataSource(t, config.SQLite))
	ctx := context.Background()
	if err := db.Migrate(ctx, d, *Migrations()); err != nil {
		t.Fatal(err)
	}
	secret := strings.Repeat("a5", 32)
	key, gen, err := loadSigningKey(ctx, secret, d, time.Now())
	if err != nil || gen || len(key) != 32 || key[0] != 0xa5 {
		t.Fatalf("loadSigningKey(configured) = %x, %v, %v; want the configured key", key, gen, err)
	}
	n, err := d.NewSelect().Model((*secretRow)(nil)).Count(ctx)
	if err != nil || n != 0 {
		t.Errorf("rows in sys_security_secret = %d, %v; want 0", n, err)
	}
}

// TestLoadSigningKeyWithoutMigrations: no configured secret and no sys_security_secret table is
// a startup error telling to run `svc migrate` or set a secret, never a fallback key.
func TestLoadSigningKeyWithoutMigrations(t *testing.T) {
	t.Parallel()
	d := testservice.OpenDB(t, testservice.DataSource(t, config.SQLite))
	key, _, err := loadSigningKey(context.Background(), "", d, time.Now())
	if !errors.Is(err, ErrSigningSecretUnavailable) || key != nil {
		t.Fatalf("loadSigningKey = %x, %v; want ErrSigningSecretUnavailable", key, err)
	}
	for _, hint := range []string{"svc migrate", "svc.security.secret"} {
		if !strings.Contains(err.Error(), hint) {
			t.Errorf("error %q does not mention %q", err, hint)
		}
	}
}

// TestLoadSigningKeyRefusesBadRow: a stored row that is too short or public is refused.
func TestLoadSigningKeyRefusesBadRow(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"abcd", "737663207075626c69632073616d706c65207365637265742c206368616e6765206d65", "zz"} {
		d := testservice.OpenDB(t, testservice.DataSource(t, config.SQLite))
		ctx := context.Background()
		if err := db.Migrate(ctx, d, *Migrations()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.NewInsert().Model(&secretRow{ID: secretRowID, Secret: secret, CreatedAt: time.Now()}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := loadSigningKey(ctx, "", d, time.Now()); !errors.Is(err, ErrSigningSecretUnavailable) {
			t.Errorf("stored %q: loadSigningKey = %v, want ErrSigningSecretUnavailable", secret[:2], err)
		}
	}
}

// TestSignerLifetime: a token living longer than its type's lifetime (beyond the clock-skew
// leeway) is invalid even with a good signature; one within the leeway passes.
func TestSignerLifetime(t *testing.T) {
	t.Parallel()
	keys := &signingKeys{}
	keys.store(bytes.Repeat([]byte{7}, 32))
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
	s := &signer{keys: &signingKeys{}, now: time.Now, lifetimes: map[string]time.Duration{typAccess: time.Minute}}
	if _, err := s.sign(&claims{ID: "j", Type: typAccess}); err == nil {
		t.Error("sign without a key succeeded")
	}
	if _, err := s.parse("a.b.c", typAccess); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("parse without a key = %v, want ErrTokenInvalid", err)
	}
}
