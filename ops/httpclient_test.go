package ops

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTransport: a request inside a span gets a client span child of it and carries that
// span's traceparent; outside a span nothing is added.
func TestTransport(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
	}))
	defer srv.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	client := &http.Client{Transport: Transport(tp, nil)}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	for _, c := range []context.Context{ctx, context.Background()} {
		req, _ := http.NewRequestWithContext(c, http.MethodGet, srv.URL+"/x?token=secret", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	parent.End()

	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "HTTP GET" || spans[0].Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("spans = %v, want HTTP GET under parent, then parent", spans)
	}
	if len(got) != 2 || !strings.Contains(got[0], spans[0].SpanContext.SpanID().String()) || got[1] != "" {
		t.Errorf("traceparent headers = %q, want the client span's, then none", got)
	}
}
