package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/genai"
)

// OpenTelemetry traces, off unless the standard OTEL_* variables ask for
// them: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// (or OTEL_TRACES_EXPORTER=otlp, to the default localhost endpoint). With
// them, a2aflow exports its spans over OTLP (OTEL_EXPORTER_OTLP_PROTOCOL or
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: http/protobuf, the default, or grpc),
// as service OTEL_SERVICE_NAME (default a2aflow), sampled per
// OTEL_TRACES_SAMPLER (default parentbased_always_on), and propagates W3C
// trace context and baggage: the API's requests, Temporal's calls into
// workflows and activities, outbound requests. Without them the global
// tracer provider and propagator stay OpenTelemetry's no-ops and no
// Temporal interceptor is installed.

// defaultServiceName is the service name of a2aflow's spans without
// OTEL_SERVICE_NAME.
const defaultServiceName = "a2aflow"

// tracing is the process's tracing state: set by startTracing.
var tracing struct {
	mu       sync.Mutex
	on       bool
	describe string
}

// tracingWanted reports whether the environment asks for traces, and over
// which protocol.
func tracingWanted() (bool, string, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, "", nil
	}
	exporter := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")))
	switch exporter {
	case "none":
		return false, "", nil
	case "", "otlp":
	default:
		return false, "", fmt.Errorf("OTEL_TRACES_EXPORTER=%s: a2aflow exports traces over OTLP only (otlp or none)", exporter)
	}
	if exporter == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return false, "", nil
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch protocol = strings.ToLower(strings.TrimSpace(protocol)); protocol {
	case "", "http/protobuf":
		return true, "http/protobuf", nil
	case "grpc":
		return true, "grpc", nil
	}
	return false, "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: want http/protobuf or grpc", protocol)
}

// startTracing installs the global tracer provider and propagator when the
// environment asks for traces, and returns the function that flushes and
// stops them (a no-op when off).
func startTracing(ctx context.Context) (func(), error) {
	on, protocol, err := tracingWanted()
	if err != nil || !on {
		return func() {}, err
	}
	var exp sdktrace.SpanExporter
	if protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return func() {}, fmt.Errorf("OpenTelemetry trace exporter (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins
	// over a2aflow's default name.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", defaultServiceName)),
		resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return func() {}, fmt.Errorf("OpenTelemetry resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	// The sampler is OTEL_TRACES_SAMPLER's, the batching OTEL_BSP_*'s.
	// genai.IDGenerator: a task's turn spans get the IDs their children,
	// made in activities on any worker, named as their parent.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(genai.IDGenerator()))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	tracing.mu.Lock()
	tracing.on, tracing.describe = true, protocol
	tracing.mu.Unlock()
	return func() {
		tracing.mu.Lock()
		tracing.on = false
		tracing.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx) // flushes the spans not yet exported
	}, nil
}

// tracingInterceptors returns Temporal's OpenTelemetry interceptor when
// tracing is on: on the client, it carries the span context of Start,
// Update, Signal and Query into the workflow, and from the workflow into
// its activities (the workers built on the client use it too).
func tracingInterceptors() []interceptor.ClientInterceptor {
	tracing.mu.Lock()
	on := tracing.on
	tracing.mu.Unlock()
	if !on {
		return nil
	}
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		TextMapPropagator: otel.GetTextMapPropagator(),
	})
	if err != nil {
		return nil
	}
	return []interceptor.ClientInterceptor{i}
}

// tracingWorkerInterceptors returns the worker's GenAI interceptor when
// tracing is on: the tasks' turns, model and tool calls as the
// OpenTelemetry GenAI semantic conventions name them (package genai).
func tracingWorkerInterceptors() []interceptor.WorkerInterceptor {
	tracing.mu.Lock()
	on := tracing.on
	tracing.mu.Unlock()
	if !on {
		return nil
	}
	return []interceptor.WorkerInterceptor{engine.NewGenAIInterceptor()}
}

// tracingLogArgs returns what the log says of tracing, nil when off: the
// protocol and the collector's host (never a path, query or credentials).
func tracingLogArgs() []any {
	tracing.mu.Lock()
	on, protocol := tracing.on, tracing.describe
	tracing.mu.Unlock()
	if !on {
		return nil
	}
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	host := "default"
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		host = u.Host
	} else if endpoint != "" && !strings.ContainsAny(endpoint, "/@?") {
		host = endpoint // grpc's host:port
	}
	return []any{"otlp_protocol", protocol, "otlp_host", host}
}
