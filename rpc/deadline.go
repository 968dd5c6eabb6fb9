package rpc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is the context an operation's handler runs under: its parent with the operation's
// timeout (wire-core §1.4), like context.WithTimeout, but without a timer until something waits.
//
// Why: context.WithTimeout costs four allocations, a runtime timer armed and stopped, and a child
// registered on and removed from the request's cancelCtx on every call — about 4 % of the CPU of
// a small authenticated call under load — while most handlers finish long before their deadline
// without ever selecting on ctx.Done(). deadlineCtx answers Deadline from a plain time and Err
// from the clock and the parent, so a handler that only returns pays one allocation and no
// timer. The first Done (including context.WithCancel, context.AfterFunc and database/sql, which
// all call it) builds the real context.WithDeadline and from then on everything is delegated to
// it; Value forwards the context package's own lookups to it too, so contexts derived from an
// armed deadlineCtx register with its cancelCtx directly, with no goroutine.
//
// Measured for issue #12 (BenchmarkHandler cpu-ns/op, 7–8 interleaved runs on a loaded 2-core
// machine): context.WithTimeout instead costs +460 ns of CPU and 3 allocations per authenticated
// request, 1.4 % of the end-to-end cost (~33.7 µs, bench/api/ab.sh) alone, but with the other
// standard-library replacements of that issue it made the difference between +2.3 % and +3.8 %
// end to end against main, over the 3 % budget; so it is kept, under the 5 % rule.
//
// Invariants: once phase leaves phaseLazy it never changes again (armed, or over with err fixed),
// and Err never goes from non-nil back to nil or changes value, as the Context contract requires.
type deadlineCtx struct {
	parent   context.Context
	deadline time.Time // the earlier of the parent's deadline and now+timeout

	phase atomic.Uint32 // phaseLazy, phaseArmed or phaseOver; inner and err are set before it
	mu    sync.Mutex    // serialises leaving phaseLazy
	inner context.Context
	stop  context.CancelFunc
	err   error // phaseOver: why the context ended before anything waited on it
}

const (
	phaseLazy  uint32 = iota // no timer; Done not yet asked for
	phaseArmed               // inner is a context.WithDeadline and answers everything
	phaseOver                // ended (deadline, parent, release) before Done was asked for
)

// closedChan is the Done channel of a context that ended while nothing waited on it.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// withDeadline returns parent bounded by timeout. release must be called when the handler has
// returned, as context.WithTimeout's cancel.
func withDeadline(parent context.Context, timeout time.Duration) *deadlineCtx {
	d := time.Now().Add(timeout)
	if pd, ok := parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	return &deadlineCtx{parent: parent, deadline: d}
}

// Deadline returns the deadline: the same before and after arming.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Done arms the context on first use.
func (c *deadlineCtx) Done() <-chan struct{} {
	switch c.phase.Load() {
	case phaseArmed:
		return c.inner.Done()
	case phaseOver:
		return closedChan
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.phase.Load() {
	case phaseArmed:
		return c.inner.Done()
	case phaseOver:
		return closedChan
	}
	c.inner, c.stop = context.WithDeadline(c.parent, c.deadline)
	c.phase.Store(phaseArmed)
	return c.inner.Done()
}

// Err reports context.DeadlineExceeded once the deadline has passed and the parent's error once it
// is cancelled, whether or not anything waited on Done.
func (c *deadlineCtx) Err() error {
	switch c.phase.Load() {
	case phaseArmed:
		return c.inner.Err()
	case phaseOver:
		return c.err
	}
	err := c.parent.Err()
	if err == nil && c.expired() {
		err = context.DeadlineExceeded
	}
	if err == nil {
		return nil
	}
	return c.end(err)
}

// Value looks key up in the armed context, else in the parent.
func (c *deadlineCtx) Value(key any) any {
	if c.phase.Load() == phaseArmed {
		return c.inner.Value(key)
	}
	return c.parent.Value(key)
}

// release ends the context, as the CancelFunc of context.WithTimeout: a handler's goroutine that
// kept ctx sees it cancelled.
func (c *deadlineCtx) release() {
	if c.phase.Load() == phaseLazy {
		err := c.parent.Err()
		if err == nil {
			err = context.Canceled
			if c.expired() {
				err = context.DeadlineExceeded
			}
		}
		c.end(err)
	}
	if c.phase.Load() == phaseArmed {
		c.stop()
	}
}

// expired reports whether the deadline has passed. time.Until reads only the monotonic clock
// when the deadline carries a monotonic reading (it does unless it came from the parent), half
// the cost of time.Now.
func (c *deadlineCtx) expired() bool { return time.Until(c.deadline) <= 0 }

// end moves a lazy context to phaseOver with err and returns the context's error, which is the
// armed context's if another goroutine armed it first.
func (c *deadlineCtx) end(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.phase.Load() {
	case phaseArmed:
		return c.inner.Err()
	case phaseOver:
		return c.err
	}
	c.err = err
	c.phase.Store(phaseOver)
	return err
}

// String describes the context for debugging, as the context package's types do.
func (c *deadlineCtx) String() string {
	return "rpc.withDeadline(" + c.deadline.String() + ")"
}
