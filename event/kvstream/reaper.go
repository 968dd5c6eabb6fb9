package kvstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/event"
)

// Reap runs one reaper cycle (wire-runtime §2.6): for every subscription, reaper_concurrency at
// a time, XAUTOCLAIM claims up to claim_batch_size entries of the group idle longer than
// claim_idle, whoever owns them, and redelivers them to this process's handler. The original
// skips its own consumer's entries (XPENDING + XCLAIM), which strands a failed entry on a live
// consumer until another process claims it; claiming our own idle entries retries it here too.
// An entry still being handled is not idle for long: handler_timeout should stay below
// claim_idle, and the inbox absorbs a second delivery in any case. It returns how many entries
// were redelivered.
func (t *Transport) Reap(ctx context.Context) (int, error) {
	t.mu.Lock()
	subs := make([]*streamSub, 0, len(t.subs))
	for _, ss := range t.subs {
		subs = append(subs, ss)
	}
	t.mu.Unlock()
	var (
		mu    sync.Mutex
		total int
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, max(t.cfg.ReaperConcurrency, 1))
	)
	for _, ss := range subs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			n, err := t.reapOne(ctx, ss)
			mu.Lock()
			total += n
			if err != nil {
				errs = append(errs, err)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return total, errors.Join(errs...)
}

// reapOne claims and redelivers the idle entries of one subscription's group.
func (t *Transport) reapOne(ctx context.Context, ss *streamSub) (int, error) {
	msgs, _, err := t.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: ss.key, Group: ss.s.Group,
		MinIdle: t.cfg.ClaimIdle, Start: "0-0", Count: int64(t.cfg.ClaimBatchSize), Consumer: t.consumer}).Result()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return 0, nil
		}
		return 0, fmt.Errorf("event: reap %s/%s: %w", ss.key, ss.s.Group, err)
	}
	t.metrics.CountRedelivered(int64(len(msgs)))
	var done []string
	for _, msg := range msgs {
		if t.deliver(ctx, ss, msg, 2) {
			done = append(done, msg.ID)
		}
	}
	t.ack(ctx, ss, done...)
	return len(msgs), nil
}

// SweepIdleGroups destroys orphaned consumer groups of the bus's streams (wire-runtime §2.6): a
// group goes only when it has no pending entries, is not subscribed in this process, has at
// least one consumer record, and all its consumers have been idle longer than
// idle_group_retention. It returns the destroyed "stream/group" names.
func (t *Transport) SweepIdleGroups(ctx context.Context) ([]string, error) {
	if t.cfg.IdleGroupRetention <= 0 {
		return nil, nil
	}
	active := map[string]bool{}
	t.mu.Lock()
	for _, ss := range t.subs {
		active[ss.key+"\x00"+ss.s.Group] = true
	}
	t.mu.Unlock()
	keys, err := t.streamKeys(ctx)
	if err != nil {
		return nil, err
	}
	var gone []string
	for _, key := range keys {
		groups, err := t.rdb.XInfoGroups(ctx, key).Result()
		if err != nil {
			return gone, fmt.Errorf("event: sweep %s: %w", key, err)
		}
		for _, g := range groups {
			if active[key+"\x00"+g.Name] || g.Pending > 0 {
				continue
			}
			idle, err := t.allConsumersIdle(ctx, key, g.Name)
			if err != nil {
				return gone, err
			}
			if !idle {
				continue
			}
			if err := t.rdb.XGroupDestroy(ctx, key, g.Name).Err(); err != nil {
				return gone, fmt.Errorf("event: destroy group %s on %s: %w", g.Name, key, err)
			}
			t.log.Info("event: idle consumer group destroyed", "stream", key, "group", g.Name)
			gone = append(gone, key+"/"+g.Name)
		}
	}
	return gone, nil
}

// allConsumersIdle reports whether the group has consumers and all are idle past the retention.
func (t *Transport) allConsumersIdle(ctx context.Context, key, group string) (bool, error) {
	cs, err := t.rdb.XInfoConsumers(ctx, key, group).Result()
	if err != nil {
		return false, fmt.Errorf("event: sweep consumers of %s/%s: %w", key, group, err)
	}
	if len(cs) == 0 {
		return false, nil
	}
	for _, c := range cs {
		if c.Idle <= t.cfg.IdleGroupRetention {
			return false, nil
		}
	}
	return true, nil
}

// streamKeys lists the streams under stream_prefix.
func (t *Transport) streamKeys(ctx context.Context) ([]string, error) {
	var keys []string
	iter := t.rdb.ScanType(ctx, 0, t.cfg.StreamPrefix+"*", 500, "stream").Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("event: list streams %s*: %w", t.cfg.StreamPrefix, err)
	}
	return keys, nil
}

// Workers are the reaper (every claim_interval) and, with idle_group_retention set, the
// idle-group sweeper (every idle_group_sweep_interval).
func (t *Transport) Workers() []event.Worker {
	ws := []event.Worker{{Name: "reaper", Interval: t.cfg.ClaimInterval, Run: func(ctx context.Context) error {
		_, err := t.Reap(ctx)
		return err
	}}}
	if t.cfg.IdleGroupRetention > 0 {
		ws = append(ws, event.Worker{Name: "group_sweep", Interval: t.cfg.IdleGroupSweepInterval, Run: func(ctx context.Context) error {
			_, err := t.SweepIdleGroups(ctx)
			return err
		}})
	}
	return ws
}

// handlerDeadline bounds ctx by d when d > 0.
func handlerDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
