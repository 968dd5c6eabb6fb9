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

// TestHashSlots: the gate's size is the budget over twice the argon2id memory, at least one
// slot and at most one per CPU; bcrypt's few KiB get one slot per CPU.
func TestHashSlots(t *testing.T) {
	const mib = 1 << 20
	argon := DefaultHashParams // 9 MiB: 18 MiB of heap per hash at the default GOGC
	for _, c := range []struct {
		name   string
		p      HashParams
		budget int64
		procs  int
		want   int
	}{
		{"default budget, 2 CPUs", argon, 24 * mib, 2, 1},
		{"budget for two", argon, 36 * mib, 2, 2},
		{"budget for two, capped by CPUs", argon, 36 * mib, 1, 1},
		{"budget below one hash", argon, 4 * mib, 8, 1},
		{"large budget, 8 CPUs", argon, 1024 * mib, 8, 8},
		{"19 MiB profile", HashParams{Algorithm: AlgorithmArgon2id, Memory: 19 * 1024}, 80 * mib, 4, 2},
		{"bcrypt", HashParams{Algorithm: AlgorithmBcrypt}, 24 * mib, 4, 4},
		{"no budget", argon, 0, 3, 3},
	} {
		if got := HashSlots(c.p, c.budget, c.procs); got != c.want {
			t.Errorf("%s: HashSlots = %d, want %d", c.name, got, c.want)
		}
	}
	if h := NewHasherBudget(HashParams{}, 24*mib); cap(h.gate.slots) != 1 || h.gate.maxWait != hashQueuePerSlot {
		t.Errorf("NewHasherBudget(defaults, 24 MiB): %d slots, %d waiting, want 1 and %d",
			cap(h.gate.slots), h.gate.maxWait, hashQueuePerSlot)
	}
}

// TestHashGateAnswersBeforeDeadline: a waiter gives up hashAnswerMargin before its request's
// deadline, so the login answers 429/1401 rather than the operation's 408.
func TestHashGateAnswersBeforeDeadline(t *testing.T) {
	g := newHashGate(1)
	release, err := g.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), hashAnswerMargin+time.Second)
	defer cancel()
	_, err = g.acquire(ctx)
	if !errors.Is(err, ErrHashBusy) {
		t.Fatalf("acquire = %v, want ErrHashBusy", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the waiter gave up after the request's deadline, not %s before it", hashAnswerMargin)
	}
}
