// Package waitgroup is svc's one wait for goroutines bounded by a context: the stop of
// app.Workers, of event transports (event.Wait), of cron's runs and of push's connections.
package waitgroup

import (
	"context"
	"sync"
)

// Wait waits until wg's counter is zero or ctx ends, whichever comes first: nil when wg
// finished, ctx's error otherwise. The goroutine waiting on wg outlives a canceled wait until
// wg finishes.
func Wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
