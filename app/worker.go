package app

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/svc-framework/svc/internal/waitgroup"
)

// loopBackoff is how long a loop worker waits after an error or panic before running again, so a
// failing dependency is not hammered.
const loopBackoff = time.Second

// Workers runs module workers until Stop. Each worker runs in its own goroutine; a panic is
// recovered, logged with its stack, and the worker carries on at its next tick.
type Workers struct {
	logger *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartWorkers starts every worker of ws. ctx carries values only; cancellation comes from Stop.
func StartWorkers(ctx context.Context, logger *slog.Logger, ws []Worker) *Workers {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &Workers{logger: logger, cancel: cancel}
	for _, w := range ws {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.run(ctx, w)
		}()
	}
	return r
}

// Stop cancels every worker and waits for them to return, or for ctx to end.
func (r *Workers) Stop(ctx context.Context) error {
	r.cancel()
	if err := waitgroup.Wait(ctx, &r.wg); err != nil {
		return fmt.Errorf("app: workers did not stop in time: %w", err)
	}
	return nil
}

func (r *Workers) run(ctx context.Context, w Worker) {
	log := r.logger.With(slog.String("worker", w.Name))
	if w.Interval <= 0 {
		for ctx.Err() == nil {
			if err := r.once(ctx, log, w); err != nil && ctx.Err() == nil {
				wait(ctx, loopBackoff)
			}
		}
		return
	}
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = r.once(ctx, log, w)
		}
	}
}

// once runs the worker body one time, turning a panic into an error.
func (r *Workers) once(ctx context.Context, log *slog.Logger, w Worker) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
			log.Error("worker panicked", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	if err = w.Run(ctx); err != nil && ctx.Err() == nil {
		log.Warn("worker run failed", slog.Any("error", err))
	}
	return err
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
