package security

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/uptrace/bun"
)

// TestChangeCursor: new seqs are applied once; a seq missing below the newest one is asked for
// again and applied when it appears (a transaction that committed late), until changeGapWait.
func TestChangeCursor(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	c := changeCursor{high: 10}
	steps := []struct {
		name        string
		seqs        []int64
		at          time.Duration
		wantFresh   []int64
		wantMissing []int64
	}{
		{"in order", []int64{11, 12}, 0, []int64{11, 12}, []int64{}},
		{"read again", []int64{12}, 0, nil, []int64{}},
		{"gap", []int64{13, 15, 16}, time.Second, []int64{13, 15, 16}, []int64{14}},
		{"gap filled late", []int64{14, 15, 16}, 2 * time.Second, []int64{14}, []int64{}},
		{"new gap", []int64{18}, 3 * time.Second, []int64{18}, []int64{17}},
		{"gap given up", nil, 3*time.Second + changeGapWait + time.Millisecond, nil, []int64{}},
		{"late after giving up", []int64{17}, 20 * time.Second, nil, []int64{}},
	}
	for _, st := range steps {
		fresh := c.observe(st.seqs, t0.Add(st.at))
		if diff := cmp.Diff(st.wantFresh, fresh); diff != "" {
			t.Errorf("%s: fresh (-want +got):\n%s", st.name, diff)
		}
		if diff := cmp.Diff(st.wantMissing, c.missing()); diff != "" {
			t.Errorf("%s: missing (-want +got):\n%s", st.name, diff)
		}
	}
}

// TestHashGate: one slot; a second caller gets it once it is released; with no room in the
// queue a caller is refused at once; a waiter whose deadline passes is refused.
func TestHashGate(t *testing.T) {
	ctx := context.Background()
	g := &hashGate{slots: make(chan struct{}, 1), maxWait: 1}
	release, err := g.acquire(ctx)
	if err != nil {
		t.Fatalf("first acquire: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		rel, err := g.acquire(ctx)
		if err == nil {
			rel()
		}
		got <- err
	}()
	release()
	if err := <-got; err != nil {
		t.Errorf("second acquire = %v, want the slot", err)
	}

	full := &hashGate{slots: make(chan struct{}, 1), maxWait: 0}
	release, _ = full.acquire(ctx)
	defer release()
	if _, err := full.acquire(ctx); !errors.Is(err, ErrHashBusy) {
		t.Errorf("acquire with a full queue = %v, want ErrHashBusy", err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := g.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.acquire(short); !errors.Is(err, ErrHashBusy) {
		t.Errorf("acquire past the deadline = %v, want ErrHashBusy", err)
	}
}

// TestChangeFeedListen: on PostgreSQL a change committed by any process (here a bare insert, as
// the CLI's store makes) reaches a listening feed through the change log's NOTIFY trigger,
// without a poll; a change rolled back is not announced.
func TestChangeFeedListen(t *testing.T) {
	d := testservice.OpenDB(t, testservice.DataSource(t, config.Postgres))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := db.Migrate(ctx, d, *Migrations()); err != nil {
		t.Fatal(err)
	}
	f := newChangeFeed(d, nil, "app", time.Now, slog.New(slog.DiscardHandler))
	got := make(chan string, 4)
	f.on(changeUser, func(ref string) { got <- ref })
	done := make(chan error, 1)
	go func() { done <- f.listen(ctx) }()

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
		if err := recordChange(ctx, d, changeUser, "u-0", time.Now()); err != nil {
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
		if err := recordChange(ctx, tx, changeUser, "u-rolled-back", time.Now()); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx = %v", err)
	}
	if err := recordChange(ctx, d, changeUser, "u-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	wait("u-1")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("listen after shutdown = %v, want nil", err)
	}
}
