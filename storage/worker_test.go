package storage

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/uptrace/bun"
)

// TestSweeper covers expiry: expired pending claims whose object exists are recovered, the rest
// are released and queued claim_expired; uploads never adopted are reclaimed only when
// orphan_retention > 0.
func TestSweeper(t *testing.T) {
	eachEnv(t, func(c *config.Storage) { c.SweepInterval = time.Minute }, func(t *testing.T, e *env) {
		owner := user("u1")
		ps := e.be.Info().PartSize
		stale := e.start(owner, "stale.pdf", ps+5)
		if _, err := stale.send(1, stale.part(1)); err != nil {
			t.Fatal(err)
		}
		staleSession := e.claim(stale.init.ClaimID).UploadID
		crashed := e.start(owner, "crashed.pdf", 10)
		crashed.sendAll()
		c := e.claim(crashed.init.ClaimID)
		parts, _ := e.svc.parts.list(e.ctx, e.db, c.ID)
		if _, err := e.be.CompleteMultipart(e.ctx, c.Key, c.UploadID, parts); err != nil {
			t.Fatal(err) // the backend assembled it, the server died before recording it
		}
		orphan := e.uploaded(owner, "orphan.pdf")
		fresh := e.start(owner, "fresh.pdf", 10)

		e.clock.Advance(24 * time.Hour)
		wantErr(t, "sweep inside the grace period", e.svc.Sweep(e.ctx), nil)
		if e.claim(stale.init.ClaimID) == nil {
			t.Fatalf("a claim was swept within sweep_interval of its expiry")
		}
		e.clock.Advance(2 * time.Minute)
		fresh2 := e.start(owner, "fresh2.pdf", 10)
		wantErr(t, "sweep", e.svc.Sweep(e.ctx), nil)

		if e.claim(stale.init.ClaimID) != nil {
			t.Errorf("expired claim still exists")
		}
		if c := e.claim(crashed.init.ClaimID); c == nil || c.Status != StatusUploaded {
			t.Errorf("claim with a complete object = %+v, want recovered to uploaded", c)
		}
		if f, ok, _ := e.svc.files.lookup(e.ctx, e.db, crashed.init.Key); !ok || f.Status != FileStatusUploaded {
			t.Errorf("recovered upload is not registered: %+v", f)
		}
		if e.claim(fresh2.init.ClaimID) == nil || e.claim(fresh.init.ClaimID) != nil {
			t.Errorf("sweep touched a live claim, or kept an expired one")
		}
		want := []string{stale.init.Key + ":" + ReasonClaimExpired, fresh.init.Key + ":" + ReasonClaimExpired}
		if got := e.queued(); !sameSet(got, want) {
			t.Errorf("queue = %v, want %v", got, want)
		}
		wantErr(t, "delete worker", e.svc.ProcessDeletes(e.ctx), nil)
		if _, err := e.be.PutPart(e.ctx, stale.init.Key, staleSession, 1, bytes.NewReader([]byte("x")), 1); !errors.Is(err, backend.ErrSessionNotFound) {
			t.Errorf("session of the expired claim after the delete worker: PutPart error = %v, want ErrSessionNotFound", err)
		}

		e.clock.Advance(365 * 24 * time.Hour)
		wantErr(t, "sweep with orphan_retention 0", e.svc.Sweep(e.ctx), nil)
		if c := e.claim(idOfKey(t, e, orphan)); c == nil {
			t.Errorf("orphan reclaimed although orphan_retention is 0")
		}
		e.svc.cfg.OrphanRetention = time.Hour
		wantErr(t, "sweep with orphan_retention 1h", e.svc.Sweep(e.ctx), nil)
		if c := e.claim(idOfKey(t, e, orphan)); c != nil {
			t.Errorf("orphan not reclaimed: %+v", c)
		}
		wantErr(t, "delete worker", e.svc.ProcessDeletes(e.ctx), nil)
		if f, _, _ := e.svc.files.lookup(e.ctx, e.db, orphan); f.Status != FileStatusDeleted || f.DeleteReason != ReasonOrphaned {
			t.Errorf("orphan registry = %+v, want deleted as orphaned", f)
		}
	})
}

// idOfKey returns the registry id (= claim id) of key.
func idOfKey(t *testing.T, e *env, key string) string {
	t.Helper()
	f, ok, err := e.svc.files.lookup(e.ctx, e.db, key)
	if err != nil || !ok {
		t.Fatalf("no registry record of %s: %v", key, err)
	}
	return f.ID
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// flaky fails Delete a number of times per key, then counts successful deletes.
type flaky struct {
	backend.Backend
	mu      sync.Mutex
	fail    map[string]int
	deletes map[string]int
}

func (f *flaky) Delete(ctx context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[key] > 0 {
		f.fail[key]--
		return errors.New("backend unavailable")
	}
	f.deletes[key]++
	return f.Backend.Delete(ctx, key)
}

// TestDeleteWorker covers the delete worker: backoff, dead-letter after delete_max_attempts,
// registry and events.
func TestDeleteWorker(t *testing.T) {
	eachEnv(t, func(c *config.Storage) { c.DeleteMaxAttempts = 3 }, func(t *testing.T, e *env) {
		owner := user("u1")
		ok1, bad := e.uploaded(owner, "ok.pdf"), e.uploaded(owner, "bad.pdf")
		fb := &flaky{Backend: e.be, fail: map[string]int{bad: 100}, deletes: map[string]int{}}
		w := e.with(shaped{})
		w.svc.backend = fb
		wantErr(t, "queue", e.tx(func(tx bun.IDB) error { return e.svc.Delete(e.ctx, tx, ok1, bad) }), nil)

		wantErr(t, "first run", w.svc.ProcessDeletes(e.ctx), nil)
		rows, _ := e.svc.queue.pending(e.ctx, e.db)
		if len(rows) != 1 || rows[0].ObjectKey != bad || rows[0].Attempts != 1 || rows[0].LastError != deleteErrTransient {
			t.Fatalf("queue after the first run = %+v, want %s with 1 attempt", rows, bad)
		}
		if want := e.clock.Now().Add(30 * time.Second); !rows[0].NextAttemptAt.Equal(want) {
			t.Errorf("next attempt = %v, want %v (30s backoff)", rows[0].NextAttemptAt, want)
		}
		wantErr(t, "run before the backoff ends", w.svc.ProcessDeletes(e.ctx), nil)
		if rows, _ := e.svc.queue.pending(e.ctx, e.db); rows[0].Attempts != 1 {
			t.Errorf("a row in backoff was retried: attempts = %d", rows[0].Attempts)
		}
		e.clock.Advance(30 * time.Second)
		wantErr(t, "second run", w.svc.ProcessDeletes(e.ctx), nil)
		e.clock.Advance(time.Minute)
		wantErr(t, "third run", w.svc.ProcessDeletes(e.ctx), nil)
		if rows, _ := e.svc.queue.pending(e.ctx, e.db); len(rows) != 0 {
			t.Errorf("queue after delete_max_attempts failures = %+v, want empty (dead-lettered)", rows)
		}
		var dead *DeleteDeadLetter
		for _, ev := range e.events.events {
			if d, ok := ev.Payload.(DeleteDeadLetter); ok && ev.Name == EventDeleteDeadLetter {
				dead = &d
			}
		}
		if dead == nil || dead.FileKey != bad || dead.Attempts != 3 || dead.Reason != ReasonDeleted || dead.LastError != deleteErrTransient {
			t.Errorf("dead-letter event = %+v", dead)
		}
		if fb.deletes[ok1] != 1 {
			t.Errorf("%s deleted %d times, want once", ok1, fb.deletes[ok1])
		}
		if f, _, _ := e.svc.files.lookup(e.ctx, e.db, ok1); f.Status != FileStatusDeleted {
			t.Errorf("registry of a deleted file = %+v", f)
		}
	})
}

// TestDeleteBackoff checks the backoff schedule: 30s doubling, capped at one hour.
func TestDeleteBackoff(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 7: 32 * time.Minute, 8: time.Hour, 50: time.Hour}
	for attempts, d := range want {
		if got := deleteBackoff(attempts); got != d {
			t.Errorf("deleteBackoff(%d) = %v, want %v", attempts, got, d)
		}
	}
}

// TestDeleteWorkerTwoNodes runs the delete worker of two services on one database at once: every
// queued object is deleted exactly once (leases with SKIP LOCKED; on SQLite the write lock).
func TestDeleteWorkerTwoNodes(t *testing.T) {
	eachEnv(t, func(c *config.Storage) { c.DeleteBatchSize = 7; c.DeleteConcurrency = 3 }, func(t *testing.T, e *env) {
		var keys []string
		for range 40 {
			keys = append(keys, e.uploaded(user("u1"), "f.pdf"))
		}
		wantErr(t, "queue", e.tx(func(tx bun.IDB) error { return e.svc.Delete(e.ctx, tx, keys...) }), nil)
		counter := &flaky{Backend: e.be, fail: map[string]int{}, deletes: map[string]int{}}
		nodes := []*env{e.with(shaped{}), e.with(shaped{})}
		for _, n := range nodes {
			n.svc.backend = counter
		}
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Go(func() {
				for range 10 {
					if err := n.svc.ProcessDeletes(e.ctx); err != nil {
						t.Errorf("ProcessDeletes: %v", err)
					}
				}
			})
		}
		wg.Wait()
		for _, k := range keys {
			if counter.deletes[k] != 1 {
				t.Errorf("%s deleted %d times, want exactly once", k, counter.deletes[k])
			}
		}
		if rows, _ := e.svc.queue.pending(e.ctx, e.db); len(rows) != 0 {
			t.Errorf("%d rows left in the queue", len(rows))
		}
	})
}
