package security

import (
	"context"
	"errors"
	"testing"
	"time"
)

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
