package event

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// ErrOutboxRowNotFound: an outbox row id that does not exist (or the outbox is disabled).
var ErrOutboxRowNotFound = errors.New("event: outbox row not found")

// Outcomes of a dead letter's replay (ReplayResult.Outcome).
const (
	// ReplayDelivered: the sink accepted the event (an in-process sink: every handler succeeded);
	// the row is completed.
	ReplayDelivered = "delivered"
	// ReplayFailed: the forward failed again; the row is failed and the relay retries it after
	// its back-off, or dead again when max_retries is 1.
	ReplayFailed = "failed"
	// ReplayNotDead: the row was not dead when the replay ran (another replay or a discard won);
	// nothing was forwarded.
	ReplayNotDead = "not_dead"
)

// ReplayResult is what a replay of a dead letter did.
type ReplayResult struct {
	// Outcome is ReplayDelivered, ReplayFailed or ReplayNotDead.
	Outcome string
	// Row is the row after the replay.
	Row OutboxRow
}

// DeadLetterAdmin is implemented by the outbox transport: the operator's actions on dead rows.
type DeadLetterAdmin interface {
	// Replay takes the dead row of id (a conditional update: only from dead, so one replay wins
	// and the relay, which never claims dead rows, does not race it), leases it as the relay's
	// claim would, forwards it to the sink and records the result like the relay. An unknown id
	// is ErrOutboxRowNotFound.
	Replay(ctx context.Context, id string) (ReplayResult, error)
	// Discard deletes the dead row of id, reporting whether it was dead (and is now gone).
	Discard(ctx context.Context, id string) (bool, error)
}

// TransportReport is one transport of the bus as sys/event get_overview answers it.
type TransportReport struct {
	// Name is the transport's configuration name.
	Name string
	// Enabled reports whether the bus built it.
	Enabled bool
	// Capabilities are the built transport's guarantees (zero when disabled).
	Capabilities Capabilities
	// Settings are its svc.event.transports.<name> keys and values, in configuration order.
	Settings []Setting
}

// Setting is one configuration key and its effective value.
type Setting struct {
	Key   string
	Value string
}

// Transports reports the four transports, enabled or not, with their effective settings.
func (b *Bus) Transports() []TransportReport {
	t := b.cfg.Transports
	dur := func(d time.Duration) string { return d.String() }
	itoa := strconv.Itoa
	list := []TransportReport{
		{Name: config.TransportMemory, Settings: []Setting{{"queue_size", itoa(t.Memory.QueueSize)},
			{"full_policy", string(t.Memory.FullPolicy)}, {"publish_timeout", dur(t.Memory.PublishTimeout)}}},
		{Name: config.TransportTxMemory, Settings: []Setting{{"queue_size", itoa(t.TxMemory.QueueSize)},
			{"full_policy", string(t.TxMemory.FullPolicy)}, {"publish_timeout", dur(t.TxMemory.PublishTimeout)}}},
		{Name: config.TransportOutbox, Settings: []Setting{{"sink", t.Outbox.Sink},
			{"relay_interval", dur(t.Outbox.RelayInterval)}, {"max_retries", itoa(t.Outbox.MaxRetries)},
			{"batch_size", itoa(t.Outbox.BatchSize)}, {"lease_multiplier", itoa(t.Outbox.LeaseMultiplier)},
			{"min_lease", dur(t.Outbox.MinLease)}, {"cleanup_interval", dur(t.Outbox.CleanupInterval)},
			{"completed_ttl", dur(t.Outbox.CompletedTTL)}}},
		{Name: config.TransportKVStoreStream, Settings: []Setting{{"stream_prefix", t.KVStoreStream.StreamPrefix},
			{"max_len_approx", strconv.FormatInt(t.KVStoreStream.MaxLenApprox, 10)},
			{"block_timeout", dur(t.KVStoreStream.BlockTimeout)}, {"claim_idle", dur(t.KVStoreStream.ClaimIdle)},
			{"claim_interval", dur(t.KVStoreStream.ClaimInterval)}, {"claim_batch_size", itoa(t.KVStoreStream.ClaimBatchSize)},
			{"handler_timeout", dur(t.KVStoreStream.HandlerTimeout)}, {"start_id", t.KVStoreStream.StartID},
			{"idle_group_retention", dur(t.KVStoreStream.IdleGroupRetention)}}},
	}
	for i := range list {
		if tr, ok := b.transports[list[i].Name]; ok {
			list[i].Enabled = true
			list[i].Capabilities = tr.Capabilities()
		}
	}
	return list
}

// Routes are the routing rules the bus runs, in match order (svc.event.routing after the
// transactional routes the modules need were added); events no rule matches go to
// Config().DefaultTransport.
func (b *Bus) Routes() []config.EventRoute { return b.cfg.Routing }

// Config is the svc.event the bus was built from, defaults applied.
func (b *Bus) Config() config.Event { return b.cfg }

// OutboxQuery selects outbox rows for FindOutbox: Status one status (empty: every one),
// EventType a prefix of the event type, EventID an exact event id; newest first, Limit rows
// from Offset.
type OutboxQuery struct {
	Status    string
	EventType string
	EventID   string
	Offset    int
	Limit     int
}

// FindOutbox returns the rows q selects, newest first, with the number of matching rows. With
// the outbox disabled it returns none.
func (b *Bus) FindOutbox(ctx context.Context, q OutboxQuery) ([]OutboxRow, int64, error) {
	if _, ok := b.transports[config.TransportOutbox]; !ok {
		return []OutboxRow{}, 0, nil
	}
	rows := []OutboxRow{}
	sel := b.deps.DB.NewSelect().Model(&rows)
	if q.Status != "" {
		sel = sel.Where("status = ?", q.Status)
	}
	if q.EventType != "" {
		sel = sel.Where("event_type LIKE ? ESCAPE '!'", escapeLike(q.EventType)+"%")
	}
	if q.EventID != "" {
		sel = sel.Where("event_id = ?", q.EventID)
	}
	n, err := sel.OrderExpr("created_at DESC, id DESC").Limit(int64(q.Limit)).Offset(int64(q.Offset)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("event: find outbox rows: %w", err)
	}
	return rows, int64(n), nil
}

// escapeLike escapes LIKE's wildcards with '!'.
func escapeLike(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// OutboxRowByID returns the outbox row of id, or ErrOutboxRowNotFound.
func (b *Bus) OutboxRowByID(ctx context.Context, id string) (OutboxRow, error) {
	if _, ok := b.transports[config.TransportOutbox]; !ok {
		return OutboxRow{}, ErrOutboxRowNotFound
	}
	return LoadOutboxRow(ctx, b.deps.DB, id)
}

// LoadOutboxRow reads the row of id through idb, or ErrOutboxRowNotFound.
func LoadOutboxRow(ctx context.Context, idb bun.IDB, id string) (OutboxRow, error) {
	var row OutboxRow
	err := idb.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return row, ErrOutboxRowNotFound
	case err != nil:
		return row, fmt.Errorf("event: outbox row %s: %w", id, err)
	}
	return row, nil
}

// deadLetters is the outbox transport's DeadLetterAdmin, or ErrOutboxRowNotFound when the
// outbox is disabled.
func (b *Bus) deadLetters() (DeadLetterAdmin, error) {
	if a, ok := b.transports[config.TransportOutbox].(DeadLetterAdmin); ok {
		return a, nil
	}
	return nil, ErrOutboxRowNotFound
}

// ReplayDeadLetter replays the dead outbox row of id (DeadLetterAdmin.Replay).
func (b *Bus) ReplayDeadLetter(ctx context.Context, id string) (ReplayResult, error) {
	a, err := b.deadLetters()
	if err != nil {
		return ReplayResult{}, err
	}
	return a.Replay(ctx, id)
}

// DiscardDeadLetter deletes the dead outbox row of id (DeadLetterAdmin.Discard).
func (b *Bus) DiscardDeadLetter(ctx context.Context, id string) (bool, error) {
	a, err := b.deadLetters()
	if err != nil {
		return false, err
	}
	return a.Discard(ctx, id)
}
