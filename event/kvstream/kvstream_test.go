package kvstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/svc-framework/svc/event"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
)

// TestStreamDelivery: the frame format, delivery to every group, one member per group, and the
// group requirement.
func TestStreamDelivery(t *testing.T) {
	t.Parallel()
	rdb, prefix := testRedis(t)
	cfg := streamConfig(prefix)
	ctx := context.Background()
	newNode := func() *event.Bus { return newBus(t, cfg, event.Deps{Redis: rdb, AppName: "app"}) }
	a, b := newNode(), newNode()
	if _, err := a.Subscribe("svc.test.happened", func(context.Context, *event.Envelope) error { return nil }); !errors.Is(err, event.ErrGroupRequired) {
		t.Errorf("subscribe without group = %v, want ErrGroupRequired", err)
	}
	var mu sync.Mutex
	perGroup := map[string]map[string]int{"g1": {}, "g2": {}}
	nodes := map[string]int{}
	sub := func(bus *event.Bus, node, group string) {
		_, err := event.SubscribeTyped(bus, func(_ context.Context, env *event.Envelope, e testEvent) error {
			mu.Lock()
			perGroup[group][env.ID]++
			nodes[node]++
			mu.Unlock()
			return nil
		}, event.WithGroup(group))
		if err != nil {
			t.Fatal(err)
		}
	}
	sub(a, "a", "g1")
	sub(b, "b", "g1")
	sub(a, "a", "g2")
	start(t, a)
	start(t, b)
	const n = 50
	for i := range n {
		if err := a.Publish(ctx, testEvent{N: i}, event.WithHeaders(map[string]string{"h": "v"})); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(perGroup["g1"]) == n && len(perGroup["g2"]) == n
	}, "every event in both groups")
	for g, ids := range perGroup {
		for id, c := range ids {
			if c != 1 {
				t.Errorf("group %s got %s %d times", g, id, c)
			}
		}
	}
	// the frame: one field "frame", Go field names, base64 body
	msgs, err := rdb.XRangeN(ctx, prefix+"svc.test.happened", "-", "+", 1).Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("XRANGE = %v, %v", msgs, err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(msgs[0].Values["frame"].(string)), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ID", "Type", "Source", "OccurredAt", "PublishedAt", "TraceID", "SpanID", "CorrelationID", "Headers", "Body"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("frame lacks %s: %v", k, raw)
		}
	}
	body, _ := base64.StdEncoding.DecodeString(raw["Body"].(string))
	if string(body) != `{"n":0}` || raw["Source"] != "app" {
		t.Errorf("frame body %q source %v", body, raw["Source"])
	}
	if _, err := time.Parse(time.RFC3339, raw["OccurredAt"].(string)); err != nil {
		t.Errorf("OccurredAt not RFC 3339: %v", err)
	}
}

// TestStreamRedeliveryAndPoison: a failed entry stays pending and the reaper retries it on the
// same live consumer (beyond the original); a poison entry is acked and dropped; handler_timeout
// bounds the handler.
func TestStreamRedeliveryAndPoison(t *testing.T) {
	t.Parallel()
	rdb, prefix := testRedis(t)
	cfg := streamConfig(prefix)
	cfg.Transports.KVStoreStream.HandlerTimeout = time.Second
	ctx := context.Background()
	b := newBus(t, cfg, event.Deps{Redis: rdb})
	var calls atomic.Int64
	var deadline atomic.Bool
	if _, err := b.Subscribe("svc.test.happened", func(ctx context.Context, _ *event.Envelope) error {
		if _, ok := ctx.Deadline(); ok {
			deadline.Store(true)
		}
		if calls.Add(1) == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}, event.WithGroup("g")); err != nil {
		t.Fatal(err)
	}
	startBus(t, b) // the test reaps and sweeps by hand
	key := prefix + "svc.test.happened"
	_ = b.Publish(ctx, testEvent{N: 1})
	eventually(t, 5*time.Second, func() bool { return calls.Load() == 1 }, "first attempt")
	if p, _ := rdb.XPending(ctx, key, "g").Result(); p.Count != 1 {
		t.Fatalf("pending = %d, want the failed entry", p.Count)
	}
	eventually(t, 5*time.Second, func() bool {
		n, err := streamOf(b).Reap(ctx)
		return err == nil && n == 1
	}, "reaper claims the idle failed entry")
	if calls.Load() != 2 || b.Metrics().Snapshot().Redelivered != 1 {
		t.Errorf("calls = %d, redelivered %d, want 2 and 1", calls.Load(), b.Metrics().Snapshot().Redelivered)
	}
	if p, _ := rdb.XPending(ctx, key, "g").Result(); p.Count != 0 {
		t.Errorf("pending = %d after the retry succeeded, want 0", p.Count)
	}
	if !deadline.Load() {
		t.Errorf("handler context has no deadline under handler_timeout")
	}
	// poison: no frame field, and an invalid frame
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"other", "x"}})
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"frame", "{not json"}})
	eventually(t, 5*time.Second, func() bool {
		g, err := rdb.XInfoGroups(ctx, key).Result()
		return err == nil && len(g) == 1 && g[0].Pending == 0 && g[0].EntriesRead == 3
	}, "poison entries acked")
	if calls.Load() != 2 {
		t.Errorf("poison reached the handler: calls = %d", calls.Load())
	}
}

// TestStreamOptions: start_id "$" skips the backlog of a new group; max_len_approx trims; a
// frame over 1 MiB is refused.
func TestStreamOptions(t *testing.T) {
	t.Parallel()
	rdb, prefix := testRedis(t)
	ctx := context.Background()
	cfg := streamConfig(prefix)
	cfg.Transports.KVStoreStream.StartID = "$"
	cfg.Transports.KVStoreStream.MaxLenApprox = 10
	b := newBus(t, cfg, event.Deps{Redis: rdb})
	start(t, b)
	for i := range 500 {
		_ = b.Publish(ctx, testEvent{N: i})
	}
	if n, _ := rdb.XLen(ctx, prefix+"svc.test.happened").Result(); n >= 500 {
		t.Errorf("XLEN = %d, want trimmed near 10", n)
	}
	got := make(chan int, 10)
	if _, err := event.SubscribeTyped(b, func(_ context.Context, _ *event.Envelope, e testEvent) error { got <- e.N; return nil }, event.WithGroup("late")); err != nil {
		t.Fatal(err)
	}
	_ = b.Publish(ctx, testEvent{N: 1000})
	if n := <-got; n != 1000 {
		t.Errorf("first delivery N = %d, want 1000 (backlog skipped)", n)
	}
	err := b.Publish(ctx, testEvent{Name: strings.Repeat("x", event.MaxBodyBytes)})
	if !errors.Is(err, event.ErrPayloadTooLarge) {
		t.Errorf("oversized publish = %v, want ErrPayloadTooLarge", err)
	}
}

// TestStreamInspectAndSweep: the get_event_streams report, and the idle-group sweep destroying
// only an orphaned group.
func TestStreamInspectAndSweep(t *testing.T) {
	t.Parallel()
	rdb, prefix := testRedis(t)
	ctx := context.Background()
	cfg := streamConfig(prefix)
	cfg.Transports.KVStoreStream.IdleGroupRetention = 50 * time.Millisecond
	b := newBus(t, cfg, event.Deps{Redis: rdb})
	rec := newRecorder()
	_, _ = b.Subscribe("svc.test.happened", rec.Handle, event.WithGroup("live"))
	startBus(t, b) // the test reaps and sweeps by hand
	_ = b.Publish(ctx, testEvent{})
	eventually(t, 5*time.Second, func() bool { return rec.Count() == 1 }, "delivered")
	key := prefix + "svc.test.happened"
	// an orphaned group: one consumer that read once and went away
	rdb.XGroupCreate(ctx, key, "orphan", "0")
	rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "orphan", Consumer: "gone", Streams: []string{key, ">"}, Count: 1})
	rdb.XAck(ctx, key, "orphan", rdb.XRangeN(ctx, key, "-", "+", 1).Val()[0].ID)

	rep, err := b.InspectStreams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Enabled || len(rep.Streams) != 1 || rep.Streams[0].Stream != key || rep.Streams[0].Length != 1 || len(rep.Streams[0].Groups) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	js, _ := json.Marshal(rep)
	for _, k := range []string{`"enabled"`, `"streams"`, `"stream"`, `"length"`, `"groups"`, `"name"`, `"consumers"`, `"pending"`, `"lag"`, `"lastDeliveredId"`} {
		if !strings.Contains(string(js), k) {
			t.Errorf("report JSON lacks %s: %s", k, js)
		}
	}
	eventually(t, 5*time.Second, func() bool {
		gone, err := streamOf(b).SweepIdleGroups(ctx)
		return err == nil && len(gone) == 1 && gone[0] == key+"/orphan"
	}, "the orphaned group is destroyed")
	if g, _ := rdb.XInfoGroups(ctx, key).Result(); len(g) != 1 || g[0].Name != "live" {
		t.Errorf("groups after sweep = %+v, want only live", g)
	}

	off := newBus(t, defaultConfig(), event.Deps{})
	if rep, err := off.InspectStreams(ctx); err != nil || rep.Enabled || rep.Streams == nil || len(rep.Streams) != 0 {
		t.Errorf("disabled report = %+v, %v, want {false, []}", rep, err)
	}
}

// streamOf is the stream transport of b.
func streamOf(b *event.Bus) *Transport {
	t, _ := b.Transport(config.TransportKVStoreStream)
	return t.(*Transport)
}
