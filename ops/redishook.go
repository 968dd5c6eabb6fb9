package ops

import (
	"context"
	"database/sql"
	"errors"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// RedisHook is the go-redis hook that makes a client span per command or pipeline, as a child
// of the span in the command's context; outside a recording span it does nothing. Only the
// command name is recorded, never its arguments (keys and values may be tokens).
type RedisHook struct {
	tracer trace.Tracer
}

var _ redis.Hook = (*RedisHook)(nil)

// NewRedisHook returns the hook of the kv store client.
func NewRedisHook(tp trace.TracerProvider) *RedisHook {
	return &RedisHook{tracer: tp.Tracer(TracerName)}
}

// DialHook implements redis.Hook.
func (h *RedisHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h *RedisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return next(ctx, cmd)
		}
		ctx, span := h.start(ctx, "redis "+cmd.Name(), cmd.Name())
		err := next(ctx, cmd)
		endRedis(span, err)
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h *RedisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return next(ctx, cmds)
		}
		ctx, span := h.start(ctx, "redis pipeline", "pipeline")
		err := next(ctx, cmds)
		endRedis(span, err)
		return err
	}
}

func (h *RedisHook) start(ctx context.Context, name, op string) (context.Context, trace.Span) {
	return h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(AttrDBSystem.String("redis"), AttrDBOperation.String(op)))
}

func endRedis(span trace.Span, err error) {
	if err != nil && !errors.Is(err, redis.Nil) {
		span.RecordError(err)
		span.SetStatus(codes.Error, "command failed")
	}
	span.End()
}

// isNoRows reports a query that found nothing, which is an answer, not a failure.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
