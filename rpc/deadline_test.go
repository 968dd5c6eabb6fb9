package rpc

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

// waitDone waits for ctx.Done within a generous bound (never a sleep to synchronise).
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed within 5s")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestDeadlineCtxBehavesLikeWithTimeout runs each scenario on context.WithTimeout and on
// deadlineCtx, armed (Done asked for first) and lazy, and wants the same observable answers.
func TestDeadlineCtxBehavesLikeWithTimeout(t *testing.T) {
	t.Parallel()
	type scenario struct {
		name    string
		timeout time.Duration
		// act runs after the context is made; it may cancel the parent or release the context.
		// expire returns once the deadline has passed (for the lazy kind, without asking for Done).
		act       func(expire func(), cancelParent func(cause error), release func())
		wantErr   error
		wantCause error
	}
	boom := errors.New("boom")
	scenarios := []scenario{
		{name: "running", timeout: time.Hour, act: func(func(), func(error), func()) {}},
		{name: "deadline passes", timeout: time.Millisecond, act: func(expire func(), _ func(error), _ func()) {
			expire()
		}, wantErr: context.DeadlineExceeded, wantCause: context.DeadlineExceeded},
		{name: "parent cancelled", timeout: time.Hour, act: func(_ func(), cancelParent func(error), _ func()) {
			cancelParent(nil)
		}, wantErr: context.Canceled, wantCause: context.Canceled},
		{name: "parent cancelled with cause", timeout: time.Hour, act: func(_ func(), cancelParent func(error), _ func()) {
			cancelParent(boom)
		}, wantErr: context.Canceled, wantCause: boom},
		{name: "released", timeout: time.Hour, act: func(_ func(), _ func(error), release func()) {
			release()
		}, wantErr: context.Canceled, wantCause: context.Canceled},
		{name: "released after the deadline", timeout: time.Millisecond, act: func(expire func(), _ func(error), release func()) {
			expire()
			release()
		}, wantErr: context.DeadlineExceeded, wantCause: context.DeadlineExceeded},
	}
	kinds := []string{"WithTimeout", "armed", "lazy"}
	for _, sc := range scenarios {
		for _, kind := range kinds {
			t.Run(sc.name+"/"+kind, func(t *testing.T) {
				base, cancelBase := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
				defer cancelBase(nil)
				parent := base
				var ctx context.Context
				var release func()
				if kind == "WithTimeout" {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(parent, sc.timeout)
					release = cancel
				} else {
					d := withDeadline(parent, sc.timeout)
					ctx, release = d, d.release
					if kind == "armed" {
						_ = ctx.Done()
					}
				}
				defer release()
				before := time.Now()
				expire := func() { waitDone(t, ctx) }
				if kind == "lazy" {
					expire = func() { waitUntil(ctx) }
				}
				sc.act(expire, cancelBase, release)
				if sc.wantErr != nil && kind != "lazy" {
					waitDone(t, ctx) // the armed kinds get there by their timer
				}
				if err := ctx.Err(); err != sc.wantErr {
					t.Errorf("Err = %v, want %v", err, sc.wantErr)
				}
				if got := isClosed(ctx.Done()); got != (sc.wantErr != nil) {
					t.Errorf("Done closed = %v, want %v", got, sc.wantErr != nil)
				}
				if err := ctx.Err(); err != sc.wantErr {
					t.Errorf("second Err = %v, want %v (Err must be stable)", err, sc.wantErr)
				}
				if cause := context.Cause(ctx); cause != sc.wantCause {
					t.Errorf("Cause = %v, want %v", cause, sc.wantCause)
				}
				if v := ctx.Value(ctxKey{}); v != "v" {
					t.Errorf("Value = %v, want the parent's value", v)
				}
				if d, ok := ctx.Deadline(); !ok || d.After(before.Add(sc.timeout)) {
					t.Errorf("Deadline = %v, %v; want at most %v", d, ok, before.Add(sc.timeout))
				}
			})
		}
	}
}

// waitUntil blocks until ctx's deadline has passed, without asking for Done.
func waitUntil(ctx context.Context) {
	d, _ := ctx.Deadline()
	<-time.After(time.Until(d) + time.Millisecond)
}

// TestDeadlineCtxDerivedContexts: contexts derived from a lazy deadlineCtx (WithCancel,
// AfterFunc) end at its deadline, on its release and on its parent's cancellation.
func TestDeadlineCtxDerivedContexts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		end     func(d *deadlineCtx, cancelParent func())
		wantErr error
	}{
		{"deadline", 5 * time.Millisecond, func(*deadlineCtx, func()) {}, context.DeadlineExceeded},
		{"release", time.Hour, func(d *deadlineCtx, _ func()) { d.release() }, context.Canceled},
		{"parent", time.Hour, func(_ *deadlineCtx, cancelParent func()) { cancelParent() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent, cancelParent := context.WithCancel(context.Background())
			defer cancelParent()
			d := withDeadline(parent, tt.timeout)
			defer d.release()
			child, cancelChild := context.WithCancel(d)
			defer cancelChild()
			called := make(chan struct{})
			stop := context.AfterFunc(d, func() { close(called) })
			defer stop()
			tt.end(d, cancelParent)
			waitDone(t, child)
			if err := child.Err(); err != tt.wantErr {
				t.Errorf("child Err = %v, want %v", err, tt.wantErr)
			}
			select {
			case <-called:
			case <-time.After(5 * time.Second):
				t.Error("AfterFunc not called within 5s")
			}
			late, cancelLate := context.WithCancel(d)
			defer cancelLate()
			if err := late.Err(); err != tt.wantErr {
				t.Errorf("context derived after the end: Err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestDeadlineCtxParentDeadlineFirst: a parent deadline earlier than the timeout wins.
func TestDeadlineCtxParentDeadlineFirst(t *testing.T) {
	t.Parallel()
	parent, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	pd, _ := parent.Deadline()
	d := withDeadline(parent, time.Hour)
	defer d.release()
	if got, _ := d.Deadline(); !got.Equal(pd) {
		t.Errorf("Deadline = %v, want the parent's %v", got, pd)
	}
	waitDone(t, d)
	if err := d.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err = %v, want DeadlineExceeded", err)
	}
}

// TestDeadlineCtxConcurrent exercises the phase changes from several goroutines (run with -race).
func TestDeadlineCtxConcurrent(t *testing.T) {
	t.Parallel()
	for range 200 {
		d := withDeadline(context.Background(), time.Millisecond)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				if i%2 == 0 {
					<-d.Done()
					errs[i] = d.Err()
					return
				}
				// An armed context reports the deadline when its timer has run, as
				// context.WithTimeout does; a lazy one as soon as the clock passes it.
				for end := time.Now().Add(5 * time.Second); errs[i] == nil && time.Now().Before(end); {
					errs[i] = d.Err()
					runtime.Gosched()
				}
			})
		}
		wg.Wait()
		d.release()
		for i, err := range errs {
			if err != context.DeadlineExceeded {
				t.Fatalf("goroutine %d: Err = %v, want DeadlineExceeded", i, err)
			}
		}
		if err := d.Err(); err != context.DeadlineExceeded {
			t.Fatalf("after release: Err = %v, want DeadlineExceeded", err)
		}
	}
}
