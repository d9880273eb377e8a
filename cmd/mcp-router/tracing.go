package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// tracingShutdownWait bounds the export of the last spans at exit.
const tracingShutdownWait = 5 * time.Second

// startTracing returns the tracer provider of cfg.Tracing, exporting in
// batches over OTLP/HTTP, and how to flush and stop it; nil when tracing
// is off.
func startTracing(ctx context.Context, cfg *config.Config, log *slog.Logger) (*sdktrace.TracerProvider, func(), error) {
	if cfg.Tracing.OTLPEndpoint == "" {
		return nil, func() {}, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.Tracing.OTLPEndpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: tracing.otlp_endpoint: %w", cfg.File, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", cfg.Tracing.ServiceName))))
	log.Info("tracing", "otlp_endpoint", cfg.Tracing.OTLPEndpoint, "service_name", cfg.Tracing.ServiceName)
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownWait)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("exporting the last spans", "err", err)
		}
	}, nil
}
