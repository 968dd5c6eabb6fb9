package kvstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/internal/id"
)

// readRetry is how long a stream reader waits after a failed read before trying again.
const readRetry = time.Second

// readCount is how many new entries one XREADGROUP takes. The original reads one at a time
// (two round trips per event); a reader handles its batch in order and acknowledges the
// successes in one XACK, so a crash mid-batch leaves the unacknowledged rest to the reaper.
const readCount = 32

// frameField is the single field of a stream entry.
const frameField = "frame"

// frame is the stream entry's JSON, with Go field names as the original writes them
// (wire-runtime §2.6): times RFC 3339, Body the base64 of the canonical JSON payload.
type frame struct {
	ID            string
	Type          string
	Source        string
	OccurredAt    time.Time
	PublishedAt   time.Time
	TraceID       string
	SpanID        string
	CorrelationID string
	Headers       map[string]string
	Body          []byte
}

// Transport is kvstore_stream: Redis Streams with consumer groups (durable, ordered,
// at-least-once). Each subscription reads its type's stream in its group as this process's
// consumer; its reaper worker claims entries idle longer than claim_idle — of dead consumers
// and, beyond the original, failed ones of live consumers too — and redelivers them.
type Transport struct {
	cfg            config.KVStoreStreamTransport
	publishTimeout time.Duration
	rdb            *redis.Client
	consumer       string
	log            *slog.Logger
	metrics        *event.Metrics
	cancel         context.CancelFunc // ends ctx

	mu      sync.Mutex
	subs    map[*event.Subscription]*streamSub
	started bool
	ctx     context.Context // the readers' context, set at start
	wg      sync.WaitGroup  // the readers
}

// streamSub is one subscription's reader state.
type streamSub struct {
	s      *event.Subscription
	key    string
	cancel context.CancelFunc
}

var (
	_ event.Transport       = (*Transport)(nil)
	_ event.StreamInspector = (*Transport)(nil)
)

// New is the stream transport's event.Factory: it needs Host.Redis.
func New(h event.Host) (event.Transport, error) {
	if h.Redis == nil {
		return nil, fmt.Errorf("svc.event.transports.kvstore_stream: no key-value store client: %w", event.ErrTransportNotFound)
	}
	cfg := h.Config.Transports.KVStoreStream
	return &Transport{cfg: cfg, publishTimeout: h.Config.PublishTimeout, rdb: h.Redis,
		consumer: cfg.ConsumerID + "-" + id.New(), log: h.Logger, metrics: h.Metrics,
		subs: map[*event.Subscription]*streamSub{}}, nil
}

// Capabilities: at-least-once.
func (t *Transport) Capabilities() event.Capabilities { return event.Capabilities{AtLeastOnce: true} }

// key is the stream of an event type.
func (t *Transport) key(eventType string) string { return t.cfg.StreamPrefix + eventType }

// Publish appends env's frame to its stream (XADD, MAXLEN ~ max_len_approx when set).
func (t *Transport) Publish(ctx context.Context, env *event.Envelope) error {
	body, err := event.EncodeBody(env)
	if err != nil {
		return err
	}
	data, err := json.Marshal(frame{ID: env.ID, Type: env.Type, Source: env.Source, OccurredAt: env.OccurredAt,
		PublishedAt: env.PublishedAt, TraceID: env.TraceID, SpanID: env.SpanID, CorrelationID: env.CorrelationID,
		Headers: env.Headers, Body: body})
	if err != nil {
		return fmt.Errorf("event: encode frame %s: %w", env.Type, err)
	}
	if len(data) > event.MaxBodyBytes {
		return fmt.Errorf("%w: %s frame of %d bytes, at most %d", event.ErrPayloadTooLarge, env.Type, len(data), event.MaxBodyBytes)
	}
	args := &redis.XAddArgs{Stream: t.key(env.Type), Values: []any{frameField, data}}
	if t.cfg.MaxLenApprox > 0 {
		args.MaxLen, args.Approx = t.cfg.MaxLenApprox, true
	}
	ctx, cancel := context.WithTimeout(ctx, t.publishTimeout)
	defer cancel()
	if err := t.rdb.XAdd(ctx, args).Err(); err != nil {
		return fmt.Errorf("event: stream publish %s: %w", env.Type, err)
	}
	return nil
}

// Subscribe keeps s; once started its group is created and its readers run.
func (t *Transport) Subscribe(s *event.Subscription) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ss := &streamSub{s: s, key: t.key(s.EventType)}
	t.subs[s] = ss
	if t.started {
		return t.run(ss)
	}
	return nil
}

// Unsubscribe ends the readers of s.
func (t *Transport) Unsubscribe(s *event.Subscription) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ss, ok := t.subs[s]; ok {
		if ss.cancel != nil {
			ss.cancel()
		}
		delete(t.subs, s)
	}
}

// Start pings the server (a failure fails startup) and starts the readers of the buffered
// subscriptions; the reaper and the idle-group sweeper are Workers.
func (t *Transport) Start(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, t.cfg.SetupTimeout)
	defer cancel()
	if err := t.rdb.Ping(pctx).Err(); err != nil {
		return fmt.Errorf("event: kvstore_stream ping: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = true
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, ss := range t.subs {
		if err := t.run(ss); err != nil {
			return err
		}
	}
	return nil
}

// run creates the group of ss and starts its readers (caller holds t.mu).
func (t *Transport) run(ss *streamSub) error {
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.SetupTimeout)
	err := t.rdb.XGroupCreateMkStream(ctx, ss.key, ss.s.Group, t.cfg.StartID).Err()
	cancel()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("event: create group %s on %s: %w", ss.s.Group, ss.key, err)
	}
	rctx, rcancel := context.WithCancel(t.ctx)
	ss.cancel = rcancel
	for range ss.s.Concurrency {
		t.wg.Go(func() { t.read(rctx, ss) })
	}
	return nil
}

// Stop ends every reader; a handler in flight finishes first (bounded by handler_timeout).
func (t *Transport) Stop(ctx context.Context) error {
	t.mu.Lock()
	if t.cancel != nil {
		t.cancel()
	}
	for _, ss := range t.subs {
		if ss.cancel != nil {
			ss.cancel()
		}
	}
	t.started = false
	t.mu.Unlock()
	return event.Wait(ctx, &t.wg)
}

// read is one reader loop: XREADGROUP up to readCount new entries, handle them in order,
// acknowledge the successes together.
func (t *Transport) read(ctx context.Context, ss *streamSub) {
	for ctx.Err() == nil {
		res, err := t.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: ss.s.Group, Consumer: t.consumer,
			Streams: []string{ss.key, ">"}, Count: readCount, Block: t.cfg.BlockTimeout}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.readFailed(ctx, ss, err)
			continue
		}
		var done []string
		for _, st := range res {
			for _, msg := range st.Messages {
				if t.deliver(ctx, ss, msg, 1) {
					done = append(done, msg.ID)
				}
			}
		}
		t.ack(ctx, ss, done...)
	}
}

// readFailed logs a failed read, recreates a group removed under us, and waits readRetry.
func (t *Transport) readFailed(ctx context.Context, ss *streamSub, err error) {
	t.log.Warn("event: stream read", "stream", ss.key, "group", ss.s.Group, "err", err)
	if strings.HasPrefix(err.Error(), "NOGROUP") {
		gctx, cancel := context.WithTimeout(ctx, t.cfg.SetupTimeout)
		_ = t.rdb.XGroupCreateMkStream(gctx, ss.key, ss.s.Group, t.cfg.StartID).Err()
		cancel()
	}
	select {
	case <-ctx.Done():
	case <-time.After(readRetry):
	}
}

// deliver hands one entry to the subscription's handler under handler_timeout and reports
// whether to acknowledge it: yes on success and for a poison entry (no string frame, oversized,
// not a frame; logged), no on failure, which leaves it pending for the reaper. The handler runs
// to completion even when ctx ends.
func (t *Transport) deliver(ctx context.Context, ss *streamSub, msg redis.XMessage, attempt int64) bool {
	env, perr := decodeFrame(msg)
	if perr != nil {
		t.log.Error("event: poison stream entry dropped", "stream", ss.key, "group", ss.s.Group, "entry", msg.ID, "err", perr)
		return true
	}
	hctx, cancel := handlerDeadline(context.WithoutCancel(ctx), t.cfg.HandlerTimeout)
	err := ss.s.Handler(hctx, env)
	cancel()
	if err != nil {
		t.log.Warn("event: stream handler failed; entry left pending", "stream", ss.key, "group", ss.s.Group,
			"entry", msg.ID, "attempt", attempt, "err", err)
		return false
	}
	return true
}

// ack acknowledges ids in one XACK.
func (t *Transport) ack(ctx context.Context, ss *streamSub, ids ...string) {
	if len(ids) == 0 {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.cfg.SetupTimeout)
	defer cancel()
	if err := t.rdb.XAck(actx, ss.key, ss.s.Group, ids...).Err(); err != nil {
		t.log.Warn("event: stream ack", "stream", ss.key, "entries", len(ids), "err", err)
	}
}

// decodeFrame turns an entry into an envelope, or explains why it is poison.
func decodeFrame(msg redis.XMessage) (*event.Envelope, error) {
	raw, ok := msg.Values[frameField].(string)
	switch {
	case !ok:
		return nil, errors.New("no string frame field")
	case len(raw) > event.MaxBodyBytes:
		return nil, fmt.Errorf("frame of %d bytes", len(raw))
	}
	var f frame
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return nil, fmt.Errorf("invalid frame: %w", err)
	}
	if f.ID == "" || !event.ValidType(f.Type) {
		return nil, errors.New("frame without id or valid type")
	}
	return &event.Envelope{ID: f.ID, Type: f.Type, Source: f.Source, OccurredAt: f.OccurredAt, PublishedAt: f.PublishedAt,
		TraceID: f.TraceID, SpanID: f.SpanID, CorrelationID: f.CorrelationID, Headers: f.Headers,
		Payload: event.RawPayload{Type: f.Type, Body: json.RawMessage(f.Body)}}, nil
}
