package ops

import (
	"context"

	"github.com/svc-framework/svc/config"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracerName is the instrumentation scope of every span svc makes.
const TracerName = "github.com/svc-framework/svc"

// newOTLPProvider builds the SDK provider of svc.tracing: a batch exporter over OTLP/HTTP and a
// parent-based ratio sampler (a sampled incoming traceparent is always recorded).
func newOTLPProvider(c config.Tracing) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	if c.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpoint(c.Endpoint))
	}
	if c.Insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(attribute.String("service.name", c.ServiceName))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SampleRatio))),
	), nil
}
