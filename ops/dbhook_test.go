package ops

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestDBHook: on every database, a query inside a span is its child span "db SELECT"; a query
// that finds no row is not a failure, a broken one is; a query outside any span makes none.
func TestDBHook(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		d.DB = d.WithQueryHook(NewDBHook(tp, "test", "primary"))
		var n int
		if err := d.NewSelect().ColumnExpr("1").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
		if err := d.NewSelect().ColumnExpr("1").Where("1 = 0").Scan(ctx, &n); !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("empty select: %v, want sql.ErrNoRows", err)
		}
		if err := d.NewSelect().TableExpr("no_such_table").ColumnExpr("1").Scan(ctx, &n); err == nil {
			t.Fatal("select from a missing table succeeded")
		}
		parent.End()

		spans := exp.GetSpans()
		if len(spans) != 3 {
			t.Fatalf("%d spans, want the two queries and the parent", len(spans))
		}
		for i, wantStatus := range []codes.Code{codes.Unset, codes.Error} {
			s := spans[i]
			if s.Name != "db SELECT" || s.Parent.SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("span %d = %s under %s, want db SELECT under the parent", i, s.Name, s.Parent.SpanID())
			}
			if s.Status.Code != wantStatus {
				t.Errorf("span %d status = %v, want %v", i, s.Status.Code, wantStatus)
			}
		}
	})
}
