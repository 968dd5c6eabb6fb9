package token_test

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
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
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
		if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
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
				keys[i], generated[i], errs[i] = token.LoadSigningKey(ctx, "", d, time.Now())
			})
		}
		close(gate)
		wg.Wait()
		winners := 0
		for i := range nodes {
			if errs[i] != nil {
				t.Fatalf("node %d: %v", i, errs[i])
			}
			if len(keys[i]) != 32 || !bytes.Equal(keys[i], keys[0]) {
				t.Errorf("node %d key differs from node 0's (or is not %d bytes)", i, 32)
			}
			if generated[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Errorf("%d nodes generated the secret, want exactly 1", winners)
		}
		again, gen, err := token.LoadSigningKey(ctx, "", d, time.Now())
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
	if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
		t.Fatal(err)
	}
	secret := strings.Repeat("a5", 32)
	key, gen, err := token.LoadSigningKey(ctx, secret, d, time.Now())
	if err != nil || gen || len(key) != 32 || key[0] != 0xa5 {
		t.Fatalf("token.LoadSigningKey(configured) = %x, %v, %v; want the configured key", key, gen, err)
	}
	n, err := d.NewSelect().Table("sys_security_secret").Count(ctx)
	if err != nil || n != 0 {
		t.Errorf("rows in sys_security_secret = %d, %v; want 0", n, err)
	}
}

// TestLoadSigningKeyWithoutMigrations: no configured secret and no sys_security_secret table is
// a startup error telling to run `svc migrate` or set a secret, never a fallback key.
func TestLoadSigningKeyWithoutMigrations(t *testing.T) {
	t.Parallel()
	d := testservice.OpenDB(t, testservice.DataSource(t, config.SQLite))
	key, _, err := token.LoadSigningKey(context.Background(), "", d, time.Now())
	if !errors.Is(err, token.ErrSigningSecretUnavailable) || key != nil {
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
		if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ExecContext(ctx, "INSERT INTO sys_security_secret (id, secret, created_at) VALUES (?, ?, ?)", "jwt", secret, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := token.LoadSigningKey(ctx, "", d, time.Now()); !errors.Is(err, token.ErrSigningSecretUnavailable) {
			t.Errorf("stored %q: loadSigningKey = %v, want ErrSigningSecretUnavailable", secret[:2], err)
		}
	}
}
