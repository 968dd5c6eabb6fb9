package event

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
)

// TestMiddleware: recover turns a panic into ErrHandlerPanic (and the worker survives), tracing
// stamps ids and the traceparent header and continues the trace in handlers, strict tracing
// parks the incoming id, metrics count, logging logs failures.
func TestMiddleware(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	cfg := defaultConfig()
	cfg.Middleware = config.EventMiddleware{Recover: true, Tracing: true, Metrics: true, Logging: true}
	b := newBus(t, cfg, Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	traces := make(chan Trace, 4)
	envs := make(chan *Envelope, 4)
	_, _ = b.Subscribe("svc.test.happened", func(ctx context.Context, env *Envelope) error {
		if env.Payload.(testEvent).N == 1 {
			panic("boom")
		}
		traces <- TraceFrom(ctx)
		envs <- env
		return b.Publish(ctx, otherEvent{})
	})
	_, _ = b.Subscribe("svc.other.happened", func(_ context.Context, env *Envelope) error { envs <- env; return nil })
	start(t, b)
	_ = b.Publish(context.Background(), testEvent{N: 1})
	_ = b.Publish(context.Background(), testEvent{N: 2})
	tr, env := <-traces, <-envs
	if len(env.TraceID) != 32 || len(env.SpanID) != 16 || env.Headers[HeaderTraceparent] != "00-"+env.TraceID+"-"+env.SpanID+"-01" {
		t.Errorf("trace ids %q/%q, traceparent %q", env.TraceID, env.SpanID, env.Headers[HeaderTraceparent])
	}
	if tr.TraceID != env.TraceID || tr.SpanID == env.SpanID {
		t.Errorf("handler trace = %+v, want the event's trace with a new span", tr)
	}
	child := <-envs
	if child.TraceID != env.TraceID {
		t.Errorf("child trace %q, want the parent's %q", child.TraceID, env.TraceID)
	}
	eventually(t, 5*time.Second, func() bool {
		s := b.Metrics().Snapshot().Types["svc.test.happened"]
		return s.Published == 2 && s.Handled == 1 && s.HandlerErrors == 1
	}, "metrics: 2 published, 1 handled, 1 failed")
	if !strings.Contains(logs.String(), "handler panicked") {
		t.Errorf("logs lack the recovered panic:\n%s", logs.String())
	}

	strict := defaultConfig()
	strict.Middleware = config.EventMiddleware{Tracing: true, TracingStrict: true}
	sb := newBus(t, strict, Deps{})
	h := sb.tracingMiddleware(func(ctx context.Context, _ *Envelope) error { traces <- TraceFrom(ctx); return nil })
	incoming := strings.Repeat("a", 32)
	_ = h(context.Background(), &Envelope{Headers: map[string]string{HeaderTraceparent: "00-" + incoming + "-" + strings.Repeat("b", 16) + "-01"}})
	if got := <-traces; got.IncomingTraceID != incoming || got.TraceID == incoming || len(got.TraceID) != 32 {
		t.Errorf("strict trace = %+v, want incoming parked and a fresh id", got)
	}
}

// TestRecoverWithoutMiddleware: with recover off a panic is not caught by the bus; the recover
// middleware alone returns ErrHandlerPanic.
func TestRecoverMiddleware(t *testing.T) {
	t.Parallel()
	h := recoverMiddleware(func(context.Context, *Envelope) error { panic("x") })
	if err := h(context.Background(), &Envelope{}); !errors.Is(err, ErrHandlerPanic) {
		t.Errorf("err = %v, want ErrHandlerPanic", err)
	}
}
