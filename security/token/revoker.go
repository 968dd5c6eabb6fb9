package token

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// revokeBatchTimeout bounds one batch's transaction (the batch runs for several requests, so
// none of their contexts is its own).
const revokeBatchTimeout = 10 * time.Second

// revokeGather is how long the drain lets the next batch fill while writes arrive
// concurrently: before every batch after its first, and before the first too when the drain
// starts less than revokeBusy after the previous one ended (the clients of the last batch
// sending their next writes). A batch's transaction costs about the same for one row as for a hundred (on
// SQLite most of it is writing the touched pages to the WAL), so under load a millisecond of
// latency buys several times fewer commits; a lone write after a quiet spell is still committed
// at once.
const revokeGather = time.Millisecond

// revokeBusy is how recently a drain must have ended for the next one to gather first.
const revokeBusy = 2 * time.Millisecond

// revoker group-commits the writes of token families (issue #13, #34): family revocations
// (logout, refresh-token reuse) and refresh-token rotations. Writes arriving while a batch is
// being committed wait and are committed together in the next one, in one transaction: one
// UPDATE … WHERE id IN per revocation reason, one multi-row INSERT of their change rows, and one
// conditional UPDATE per rotation; so concurrent logouts and refreshes do not queue one by one
// on the database's write lock (SQLite has a single writer; on the others it saves round trips
// and commits). Each caller returns once its batch is committed: a write that returned is
// durable. A lone write after a quiet spell is committed at once.
type revoker struct {
	families *familyStore

	mu      sync.Mutex
	pending []*familyWrite
	running bool
	ended   time.Time // when the last drain found nothing left

	observe func(batch int) // tests: called with each batch's size before it is written
}

// familyWrite is one waiting request: a revocation (reason set) or a rotation.
type familyWrite struct {
	id     string
	reason string // revocation
	from   string // rotation: the current jti expected
	to     string // rotation: the new jti
	now    time.Time
	expiry time.Time  // rotation: the new refresh token's expiry
	done   chan error // nil for a background retry nobody waits for
	ok     bool       // rotation: applied (from was still current and the family not revoked)
	tries  int        // revocation: failed writes so far
}

// A revocation whose write fails is written again in the background, first after
// revokeRetryFirst, then after twice the previous wait up to revokeRetryMax, for as long as the
// process runs: logout answers success whatever happens (the original's contract), so a
// revocation that met a database outage must still be recorded once the database is back, or
// the family's tokens would keep working on every other node (found by the fault-injection
// run, bench/faults). A failed rotation is not retried: its refresh answers the error.
const (
	revokeRetryFirst = 250 * time.Millisecond
	revokeRetryMax   = 30 * time.Second
)

// revoke revokes family id and returns once the change is committed (or ctx ends: the
// revocation is then still written with its batch).
func (r *revoker) revoke(ctx context.Context, id, reason string, now time.Time) error {
	_, err := r.submit(ctx, &familyWrite{id: id, reason: reason, now: now})
	return err
}

// rotate moves family id from jti from to jti to, only if from is still current and the family
// is not revoked, and returns once committed. ok = false means another request rotated or
// revoked it first.
func (r *revoker) rotate(ctx context.Context, id, from, to string, now, expires time.Time) (bool, error) {
	return r.submit(ctx, &familyWrite{id: id, from: from, to: to, now: now, expiry: expires})
}

func (r *revoker) submit(ctx context.Context, w *familyWrite) (bool, error) {
	w.done = make(chan error, 1)
	r.enqueue(w)
	select {
	case err := <-w.done:
		return w.ok, err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// enqueue adds writes to the next batch and starts the drain when it is idle.
func (r *revoker) enqueue(ws ...*familyWrite) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, ws...)
	if !r.running {
		r.running = true
		go r.drain(time.Since(r.ended) < revokeBusy)
	}
}

// drain writes batches until none is waiting; busy: the previous drain ended moments ago, so
// the first batch gathers too.
func (r *revoker) drain(busy bool) {
	for first := true; ; first = false {
		if !first || busy {
			time.Sleep(revokeGather)
		}
		r.mu.Lock()
		batch := r.pending
		r.pending = nil
		if len(batch) == 0 {
			r.running = false
			r.ended = time.Now()
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		if r.observe != nil {
			r.observe(len(batch))
		}
		r.write(batch)
	}
}

// write commits one batch and answers its requests. Rotations are applied before revocations
// (the requests were concurrent, so either order is one they could have had); revoked_at is the
// latest request time of its reason's revocations.
func (r *revoker) write(batch []*familyWrite) {
	ids := map[string][]string{} // reason → family ids
	latest := map[string]time.Time{}
	var changes []changeRow
	for _, w := range batch {
		if w.reason == "" {
			continue
		}
		ids[w.reason] = append(ids[w.reason], w.id)
		if w.now.After(latest[w.reason]) {
			latest[w.reason] = w.now
		}
		changes = append(changes, changeRow{Kind: ChangeFamily, Ref: w.id, CreatedAt: w.now.UTC()})
	}
	ctx, cancel := context.WithTimeout(context.Background(), revokeBatchTimeout)
	err := r.families.db.InTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		for _, w := range batch {
			if w.reason != "" {
				continue
			}
			ok, err := r.families.rotateIn(ctx, tx, w.id, w.from, w.to, w.now, w.expiry)
			if err != nil {
				return err
			}
			w.ok = ok
		}
		for reason, list := range ids {
			if err := r.families.revokeIn(ctx, tx, list, reason, latest[reason]); err != nil {
				return err
			}
		}
		if len(changes) == 0 {
			return nil
		}
		_, err := tx.NewInsert().Model(&changes).Returning("NULL").Exec(ctx) // the seqs are not read back
		return err
	})
	cancel()
	if err != nil {
		err = fmt.Errorf("security: write token families: %w", err)
	}
	var retry []*familyWrite
	for _, w := range batch {
		if err != nil {
			w.ok = false
			if w.reason != "" {
				retry = append(retry, &familyWrite{id: w.id, reason: w.reason, now: w.now, tries: w.tries + 1})
			}
		}
		if w.done != nil {
			w.done <- err
		}
	}
	if len(retry) > 0 {
		r.retryLater(retry)
	}
}

// retryLater queues failed revocations again after their backoff.
func (r *revoker) retryLater(ws []*familyWrite) {
	tries := 0
	for _, w := range ws {
		tries = max(tries, w.tries)
	}
	wait := min(revokeRetryFirst<<min(tries-1, 7), revokeRetryMax)
	time.AfterFunc(wait, func() { r.enqueue(ws...) })
}
