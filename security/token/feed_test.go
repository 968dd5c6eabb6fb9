package token_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
	"github.com/uptrace/bun"
)

// TestChangeFeedListen: on PostgreSQL a change committed by any process (here a bare insert, as
// the CLI's store makes) reaches a listening feed through the change log's NOTIFY trigger,
// without a poll; a change rolled back is not announced.
func TestChangeFeedListen(t *testing.T) {
	d := testservice.OpenDB(t, testservice.DataSource(t, config.Postgres))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := db.Migrate(ctx, d, *security.Migrations()); err != nil {
		t.Fatal(err)
	}
	f := token.NewFeed(d, nil, "app", time.Now, slog.New(slog.DiscardHandler))
	got := make(chan string, 4)
	f.On(token.ChangeUser, func(ref string) { got <- ref })
	done := make(chan error, 1)
	go func() { done <- f.Listen(ctx) }()

	var wait func(want string)
	wait = func(want string) {
		t.Helper()
		select {
		case ref := <-got:
			if ref == "u-0" { // a late announcement of the warm-up changes
				wait(want)
				return
			}
			if ref != want {
				t.Errorf("change applied for %q, want %q", ref, want)
			}
		case err := <-done:
			t.Fatalf("listen returned %v", err)
		case <-time.After(5 * time.Second):
			t.Fatalf("change %q not announced", want)
		}
	}
	// the listener may not be registered yet: announce until the first change arrives
	first := time.NewTicker(50 * time.Millisecond)
	defer first.Stop()
	for arrived := false; !arrived; {
		if err := token.RecordChange(ctx, d, token.ChangeUser, "u-0", time.Now()); err != nil {
			t.Fatal(err)
		}
		select {
		case ref := <-got:
			arrived = ref == "u-0"
		case <-first.C:
		}
	}
	for len(got) > 0 {
		<-got
	}
	errRollback := errors.New("rollback")
	err := d.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := token.RecordChange(ctx, tx, token.ChangeUser, "u-rolled-back", time.Now()); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx = %v", err)
	}
	if err := token.RecordChange(ctx, d, token.ChangeUser, "u-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	wait("u-1")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("listen after shutdown = %v, want nil", err)
	}
}
