package main

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// tracingShutdownWait bounds the export of the last spans at exit.
const tracingShutdownWait = 5 * time.Second

// startTracing sets the gateway's tracer provider from the tracing
// section, exporting in batches over OTLP/HTTP; Close flushes and stops it
// after the hub, so that its last spans are exported. Nothing when
// tracing is off.
func (g *gateway) startTracing(ctx context.Context) error {
	t := g.cfg.Tracing
	if t.OTLPEndpoint == "" {
		return nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(t.OTLPEndpoint))
	if err != nil {
		return fmt.Errorf("%s: tracing.otlp_endpoint: %w", g.cfg.File, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", t.ServiceName))))
	g.log.Info("tracing", "otlp_endpoint", t.OTLPEndpoint, "service_name", t.ServiceName)
	g.tracing = tp
	g.onClose(func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownWait)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			g.log.Warn("exporting the last spans", "err", err)
		}
	})
	return nil
}
