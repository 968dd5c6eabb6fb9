package token

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/kv"
	"github.com/uptrace/bun"
)

// Change kinds of sys_security_change: what a server drops or updates in its caches.
const (
	// ChangeUser: a built-in user was created or changed (roles, disable, password, display
	// name, TOTP); ref is the user id.
	ChangeUser = "user"
	// ChangeFamily: a token family was revoked (logout, refresh-token reuse); ref is its id.
	ChangeFamily = "family"
	// ChangeSession: an opaque session in the database was revoked; ref is its id.
	ChangeSession = "session"
)

const (
	// ChangePollInterval is how often every server reads the change log. With the time a change
	// takes to commit it bounds how long another server or the CLI needs to reach this one:
	// under one second (the bound of security/doc.go).
	ChangePollInterval = 250 * time.Millisecond
	// changeRetention is how long change rows are kept; a server reads them within
	// ChangePollInterval, the rest is margin for a server that was paused.
	changeRetention = time.Hour
	// changeGapWait is how long a missing seq below the newest one seen is asked for again: on
	// PostgreSQL and MySQL a transaction that took its seq earlier may commit after a later one.
	changeGapWait = 10 * time.Second
	// changeMaxGaps bounds the missing seqs remembered (a rollback of many changes).
	changeMaxGaps = 256
	// changeBatch is the most rows one poll query reads.
	changeBatch = 1000
	// cacheSafetyTTL is how long a cache entry lives without a change: the change log, not
	// this, is what keeps the caches current; the TTL only limits the life of an entry whose
	// change was missed (a server paused for longer than changeRetention).
	cacheSafetyTTL = 5 * time.Minute
)

// pgChangeChannel is the PostgreSQL NOTIFY channel of the change log's trigger (migration 003).
const pgChangeChannel = "svc_security_change"

// changeRow is one row of sys_security_change.
type changeRow struct {
	bun.BaseModel `bun:"table:sys_security_change"`

	Seq       int64     `bun:"seq,pk,autoincrement"`
	Kind      string    `bun:"kind"`
	Ref       string    `bun:"ref"`
	CreatedAt time.Time `bun:"created_at"`
}

// RecordChange inserts a change row with idb, the transaction of the change itself, so the row
// exists exactly when the change does.
func RecordChange(ctx context.Context, idb bun.IDB, kind, ref string, now time.Time) error {
	// Returning("NULL"): nothing reads the seq back, and without it bun asks for it (a query, not an exec)
	_, err := idb.NewInsert().Model(&changeRow{Kind: kind, Ref: ref, CreatedAt: now.UTC()}).Returning("NULL").Exec(ctx)
	if err != nil {
		return fmt.Errorf("security: record %s change: %w", kind, err)
	}
	return nil
}

// changeCursor is where a server is in the change log: the newest seq seen, and the seqs below
// it that were missing when it was read (taken by a transaction that had not committed yet, or
// rolled back), asked for again until changeGapWait has passed.
type changeCursor struct {
	high int64
	gaps map[int64]time.Time
}

// observe records the seqs of one poll (ascending) at now and returns those not seen before.
func (c *changeCursor) observe(seqs []int64, now time.Time) []int64 {
	if c.gaps == nil {
		c.gaps = map[int64]time.Time{}
	}
	var fresh []int64
	for _, seq := range seqs {
		switch {
		case seq > c.high:
			for g := max(c.high+1, seq-changeMaxGaps); g < seq; g++ {
				c.gaps[g] = now
			}
			c.high = seq
			fresh = append(fresh, seq)
		case !c.gaps[seq].IsZero():
			delete(c.gaps, seq)
			fresh = append(fresh, seq)
		}
	}
	for g, at := range c.gaps {
		if now.Sub(at) > changeGapWait || len(c.gaps) > changeMaxGaps {
			delete(c.gaps, g)
		}
	}
	return fresh
}

// missing returns the gap seqs to ask for again, ascending.
func (c *changeCursor) missing() []int64 {
	out := make([]int64, 0, len(c.gaps))
	for g := range c.gaps {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// Feed keeps the caches of every server current (issue #13): the node that makes a change
// applies it to its own caches at once, records it in sys_security_change in the same
// transaction, and publishes it on Redis when the key-value store is enabled; every server
// polls the change log every ChangePollInterval (which also catches a missed message),
// subscribes to the Redis channel, and on PostgreSQL listens to the NOTIFY that the change
// log's trigger sends at commit (from every process, the CLI included).
type Feed struct {
	db     *db.DB
	kv     *redis.Client
	topic  string
	node   string
	now    func() time.Time
	logger *slog.Logger

	mu       sync.Mutex // serializes polls
	cursor   changeCursor
	lastPoll time.Time // last successful poll
	// readAt is lastPoll in Unix nanoseconds (0 before Start), read without mu by Current on
	// every verification in closed mode (a poll that hangs on a dead database holds mu).
	readAt atomic.Int64
	// checkMu serializes Current's own reads; failedAt is when the last of them failed.
	checkMu  sync.Mutex
	failedAt time.Time
	handlers map[string][]func(ref string)
	// resync, when set, reloads state that the change log alone keeps complete (the
	// revocation set); poll calls it when the last successful poll is older than
	// changeRetention/2, since rows older than changeRetention may have been purged unseen.
	resync func(ctx context.Context) error
}

func NewFeed(d *db.DB, kv *redis.Client, appName string, now func() time.Time, logger *slog.Logger) *Feed {
	return &Feed{db: d, kv: kv, topic: "svc:security:" + appName + ":changes", node: newID(), now: now,
		logger: logger, handlers: map[string][]func(string){}}
}

// On registers what a change of kind does to a cache. Handlers are set while building, before
// the feed runs.
func (f *Feed) On(kind string, h func(ref string)) {
	f.handlers[kind] = append(f.handlers[kind], h)
}

// apply runs the handlers of one change.
func (f *Feed) apply(kind, ref string) {
	for _, h := range f.handlers[kind] {
		h(ref)
	}
}

// Publish tells the other servers through Redis about a change this node committed (and
// already applied to its own caches). A failed publish is logged: the poll delivers the change
// anyway.
func (f *Feed) Publish(ctx context.Context, kind, ref string) {
	if f == nil || f.kv == nil {
		return
	}
	if err := f.kv.Publish(ctx, f.topic, f.node+"|"+kind+"|"+ref).Err(); err != nil {
		f.logger.WarnContext(ctx, "security change not published; the poll will deliver it", slog.String("kind", kind), slog.Any("error", err))
	}
}

// Start places the cursor at the newest change: the caches start empty, so older changes do
// not matter.
func (f *Feed) Start(ctx context.Context) error {
	var seq int64
	err := f.db.NewSelect().Model((*changeRow)(nil)).ColumnExpr("COALESCE(MAX(seq), 0)").Scan(ctx, &seq)
	if err != nil {
		return fmt.Errorf("security: read change log: %w", err)
	}
	f.mu.Lock()
	f.cursor = changeCursor{high: seq}
	f.lastPoll = f.now()
	f.readAt.Store(f.lastPoll.UnixNano())
	f.mu.Unlock()
	return nil
}

// Poll reads the changes after the cursor (and the gaps below it) and applies the new ones: the
// change_poll worker body.
func (f *Feed) Poll(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	started := f.now()
	if f.resync != nil && !f.lastPoll.IsZero() && started.Sub(f.lastPoll) > changeRetention/2 {
		if err := f.resync(ctx); err != nil {
			return err
		}
	}
	for {
		q := f.db.NewSelect().Model((*changeRow)(nil)).Column("seq", "kind", "ref").Where("seq > ?", f.cursor.high)
		if gaps := f.cursor.missing(); len(gaps) > 0 {
			q = q.WhereOr("seq IN (?)", bun.List(gaps))
		}
		var rows []changeRow
		if err := q.Order("seq").Limit(changeBatch).Scan(ctx, &rows); err != nil {
			return fmt.Errorf("security: poll change log: %w", err)
		}
		seqs := make([]int64, len(rows))
		byseq := make(map[int64]changeRow, len(rows))
		for i, r := range rows {
			seqs[i], byseq[r.Seq] = r.Seq, r
		}
		for _, seq := range f.cursor.observe(seqs, f.now()) {
			f.apply(byseq[seq].Kind, byseq[seq].Ref)
		}
		if len(rows) < changeBatch {
			f.lastPoll = started
			f.readAt.Store(started.UnixNano())
			return nil
		}
	}
}

// Purge deletes change rows older than changeRetention (the change_purge worker body).
func (f *Feed) Purge(ctx context.Context) error {
	_, err := f.db.NewDelete().Model((*changeRow)(nil)).Where("created_at < ?", f.now().Add(-changeRetention).UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("security: purge change log: %w", err)
	}
	return nil
}

// Subscribe applies the changes other nodes publish on Redis until ctx ends (the
// change_subscribe worker body, a loop worker: it returns only on error or shutdown).
func (f *Feed) Subscribe(ctx context.Context) error {
	err := kv.Listen(ctx, f.kv, f.topic, func(payload string) {
		node, rest, _ := strings.Cut(payload, "|")
		kind, ref, ok := strings.Cut(rest, "|")
		if ok && node != f.node {
			f.apply(kind, ref)
		}
	})
	if err != nil {
		return fmt.Errorf("security: changes: %w", err)
	}
	return nil
}

// Listen applies the changes PostgreSQL announces on pgChangeChannel until ctx ends (the
// change_listen worker body where the database notifies, a loop worker): db.DB.Listen holds one
// connection of the pool for LISTEN and unlistens before giving it back.
func (f *Feed) Listen(ctx context.Context) error {
	err := f.db.Listen(ctx, pgChangeChannel, func(payload string) {
		schema, rest, _ := strings.Cut(payload, "|")
		if kind, ref, ok := strings.Cut(rest, "|"); ok && schema == f.db.Schema {
			f.apply(kind, ref)
		}
	})
	if err != nil {
		return fmt.Errorf("security: listen for changes: %w", err)
	}
	return nil
}

// feedCheckTimeout bounds the read Current makes when the feed is too old, and feedCheckBackoff
// is how long after a failed one Current refuses at once instead of reading again: during an
// outage at most one request per second waits for the database.
const (
	feedCheckTimeout = 2 * time.Second
	feedCheckBackoff = time.Second
)

// Current reports whether this node's view of the change log is younger than maxAge
// (svc.security.revocation.max_feed_age, closed mode): the last successful poll began less than
// maxAge ago, or — when it did not — a poll made now succeeds. So a node whose poll worker is
// merely late (or whose test clock jumped) reads the log and goes on; a node that cannot read
// its database reports false. A feed that was never started (a process without the module's
// start) is not a feed: true, and the callers' own reads decide.
func (f *Feed) Current(ctx context.Context, maxAge time.Duration) bool {
	if f.fresh(maxAge) {
		return true
	}
	f.checkMu.Lock()
	defer f.checkMu.Unlock()
	if f.fresh(maxAge) { // another request's read just succeeded
		return true
	}
	now := f.now()
	if !f.failedAt.IsZero() && !now.Before(f.failedAt) && now.Sub(f.failedAt) < feedCheckBackoff {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), feedCheckTimeout)
	defer cancel()
	if err := f.Poll(ctx); err != nil {
		f.failedAt = now
		f.logger.WarnContext(ctx, "security change log unreadable: refusing tokens (svc.security.revocation.fail_mode = closed)", slog.Any("error", err))
		return false
	}
	return true
}

// fresh reports whether the last successful poll began within maxAge (or the feed never
// started).
func (f *Feed) fresh(maxAge time.Duration) bool {
	at := f.readAt.Load()
	return at == 0 || f.now().Sub(time.Unix(0, at)) <= maxAge
}

// Relays reports whether the feed also publishes and subscribes on Redis (svc.kvstore.enabled):
// the change_subscribe worker runs then.
func (f *Feed) Relays() bool { return f.kv != nil }

// Listens reports whether the feed listens for PostgreSQL notifications.
func (f *Feed) Listens() bool { return f.db.Notifies() }
