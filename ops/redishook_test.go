package ops

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/internal/testservice"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestRedisHook: on the real Redis, commands and pipelines inside a span become its client
// spans named by command; commands outside any span make none (only the parent's children
// are recorded besides connection handshakes).
func TestRedisHook(t *testing.T) {
	t.Parallel()
	addr := testservice.Require(t, testservice.EnvRedisAddr)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rdb.AddHook(NewRedisHook(tp))
	key := "svc-ops-test:" + testservice.Suffix(8)
	defer rdb.Del(context.Background(), key)

	if err := rdb.Set(context.Background(), key, "untraced", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	if err := rdb.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Get(ctx, key+":missing").Err(); err != redis.Nil {
		t.Fatalf("get missing key: %v, want redis.Nil", err)
	}
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, key); p.Incr(ctx, key+":n"); return nil }); err != nil {
		t.Fatal(err)
	}
	rdb.Del(ctx, key+":n")
	parent.End()

	// Direct children only: a command that opens a connection has the handshake (HELLO, ...)
	// as spans of its own below it.
	var names []string
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("span %s is outside the parent's trace", s.Name)
		}
		if s.Name == "redis get" && s.Status.Code != 0 {
			t.Errorf("a missing key marked the span failed: %v", s.Status)
		}
		if s.Parent.SpanID() == parent.SpanContext().SpanID() {
			names = append(names, s.Name)
		}
	}
	want := []string{"redis set", "redis get", "redis pipeline", "redis del"}
	if len(names) != len(want) {
		t.Fatalf("spans = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("span %d = %s, want %s (all %v)", i, names[i], want[i], names)
		}
	}
}
