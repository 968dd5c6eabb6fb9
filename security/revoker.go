package security

import (
	"context"
	"sync"
	"time"
)

// revokeBatchTimeout bounds one batch's transaction (the batch runs for several requests, so
// none of their contexts is its own).
const revokeBatchTimeout = 10 * time.Second

// revokeGather is how long the drain lets the next batch fill after writing a batch of more
// than one request, i.e. while logouts arrive concurrently. A batch's transaction costs about
// the same for one row as for a hundred (on SQLite most of it is writing the touched pages to
// the WAL), so under load a millisecond of latency buys several times fewer commits; a lone
// logout is still written at once.
const revokeGather = time.Millisecond

// revoker group-commits family revocations (issue #13): logouts arriving while a batch is being
// written wait and are written together in the next one, so concurrent logouts share one
// transaction (one UPDATE and one INSERT) instead of queueing one by one on the database's
// write lock (SQLite has a single writer; on the others it saves round trips and commits). A
// lone logout is written at once.
type revoker struct {
	families *familyStore

	mu      sync.Mutex
	pending map[string][]revocation // by reason
	running bool
}

// revocation is one waiting request; done is nil for a retry nobody waits for.
type revocation struct {
	id      string
	now     time.Time
	done    chan error
	attempt int
}

// A batch whose write fails is written again in the background, first after revokeRetryFirst,
// then after twice the previous wait up to revokeRetryMax, for as long as the process runs:
// logout answers success whatever happens (the original's contract), so a revocation that met
// a database outage must still be recorded once the database is back, or the family's tokens
// would keep working on every other node (found by the fault-injection run, bench/faults).
const (
	revokeRetryFirst = 250 * time.Millisecond
	revokeRetryMax   = 30 * time.Second
)

// revoke revokes family id and returns once the change is committed (or ctx ends: the
// revocation is then still written with its batch).
func (r *revoker) revoke(ctx context.Context, id, reason string, now time.Time) error {
	req := revocation{id: id, now: now, done: make(chan error, 1)}
	r.enqueue(reason, req)
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue adds requests to the next batch and starts the drain when it is idle.
func (r *revoker) enqueue(reason string, reqs ...revocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string][]revocation{}
	}
	r.pending[reason] = append(r.pending[reason], reqs...)
	if !r.running {
		r.running = true
		go r.drain()
	}
}

// drain writes batches until none is waiting.
func (r *revoker) drain() {
	for last := 0; ; {
		if last > 1 {
			time.Sleep(revokeGather)
		}
		r.mu.Lock()
		batch := r.pending
		r.pending = nil
		if len(batch) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		last = 0
		for reason, reqs := range batch {
			r.write(reason, reqs)
			last += len(reqs)
		}
	}
}

// write commits one batch of one reason and answers its requests; revoked_at is the latest
// request time of the batch.
func (r *revoker) write(reason string, reqs []revocation) {
	ids := make([]string, len(reqs))
	var now time.Time
	for i, q := range reqs {
		ids[i] = q.id
		if q.now.After(now) {
			now = q.now
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), revokeBatchTimeout)
	err := r.families.revokeAll(ctx, ids, reason, now)
	cancel()
	for _, q := range reqs {
		if q.done != nil {
			q.done <- err
		}
	}
	if err != nil {
		r.retryLater(reason, reqs)
	}
}

// retryLater queues a failed batch again after its backoff.
func (r *revoker) retryLater(reason string, reqs []revocation) {
	again := make([]revocation, len(reqs))
	attempt := 0
	for i, q := range reqs {
		again[i] = revocation{id: q.id, now: q.now, attempt: q.attempt + 1}
		attempt = max(attempt, q.attempt)
	}
	wait := min(revokeRetryFirst<<min(attempt, 7), revokeRetryMax)
	time.AfterFunc(wait, func() { r.enqueue(reason, again...) })
}
