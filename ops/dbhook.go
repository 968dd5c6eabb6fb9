package ops

import (
	"context"

	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span attribute keys of database and Redis spans (OpenTelemetry semantic conventions).
const (
	AttrDBSystem    = attribute.Key("db.system.name")
	AttrDBOperation = attribute.Key("db.operation.name")
	AttrDBName      = attribute.Key("db.namespace")
)

// DBHook is the bun query hook that makes a client span per query, as a child of the span in
// the query's context. A query outside any recording span (background workers with no trace)
// makes none, so the hook costs one context lookup there. The statement text is not recorded:
// bun inlines the arguments, which may be credentials or personal data.
type DBHook struct {
	tracer trace.Tracer
	system string // "postgresql", "mysql", "sqlite"
	source string // the data source name
}

var _ bun.QueryHook = (*DBHook)(nil)

// NewDBHook returns the hook of one data source.
func NewDBHook(tp trace.TracerProvider, system, source string) *DBHook {
	return &DBHook{tracer: tp.Tracer(TracerName), system: system, source: source}
}

// BeforeQuery implements bun.QueryHook.
func (h *DBHook) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	op := e.Operation()
	ctx, _ = h.tracer.Start(ctx, "db "+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(AttrDBSystem.String(h.system), AttrDBOperation.String(op), AttrDBName.String(h.source)))
	return ctx
}

// AfterQuery implements bun.QueryHook.
func (h *DBHook) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if e.Err != nil && !isNoRows(e.Err) {
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, "query failed")
	}
	span.End()
}
