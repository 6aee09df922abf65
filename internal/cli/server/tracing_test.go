package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// otelEnv clears every OTEL_* variable tracing reads, for the test.
func otelEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_TRACES_SAMPLER", "OTEL_BSP_SCHEDULE_DELAY"} {
		t.Setenv(k, "")
	}
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
}

// receiver counts the OTLP/HTTP export requests it gets.
func receiver(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Without OTEL_* variables tracing is off: no Temporal interceptor, spans
// are not recording and nothing is exported.
func TestTracingOffWithoutEnv(t *testing.T) {
	otelEnv(t)
	_, got := receiver(t)
	stop, err := startTracing(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if args := tracingLogArgs(); args != nil {
		t.Errorf("log args %v without OTEL_*", args)
	}
	if i := tracingInterceptors(); i != nil {
		t.Errorf("interceptors %v without OTEL_*, want none", i)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "s")
	if span.IsRecording() {
		t.Error("span recording without OTEL_*")
	}
	span.End()
	stop()
	if n := got.Load(); n != 0 {
		t.Errorf("%d export requests without OTEL_*, want none", n)
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT, spans are exported, flushed when
// tracing stops.
func TestTracingExportsAndFlushes(t *testing.T) {
	otelEnv(t)
	srv, got := receiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000") // only the flush exports
	stop, err := startTracing(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if args := tracingLogArgs(); len(args) != 4 || args[1] != "http/protobuf" || args[3] != strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("log args %v", args)
	}
	if len(tracingInterceptors()) != 1 {
		t.Error("no Temporal tracing interceptor with tracing on")
	}
	_, span := otel.Tracer("test").Start(context.Background(), "s")
	if !span.IsRecording() {
		t.Error("span not recording with OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	span.End()
	stop()
	if n := got.Load(); n != 1 {
		t.Errorf("%d export requests, want 1 (the flush)", n)
	}
	if tracingInterceptors() != nil {
		t.Error("interceptor after tracing stopped")
	}
}

func TestTracingEnvErrors(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
		{"OTEL_TRACES_EXPORTER", "zipkin"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			otelEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			t.Setenv(tc.key, tc.value)
			if _, err := startTracing(context.Background()); err == nil {
				t.Errorf("%s=%s: no error", tc.key, tc.value)
			}
		})
	}
	for _, tc := range []struct{ key, value string }{
		{"OTEL_SDK_DISABLED", "true"},
		{"OTEL_TRACES_EXPORTER", "none"},
	} {
		otelEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
		t.Setenv(tc.key, tc.value)
		if on, _, err := tracingWanted(); on || err != nil {
			t.Errorf("%s=%s: tracing %v, %v; want off", tc.key, tc.value, on, err)
		}
	}
	otelEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "127.0.0.1:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if on, protocol, err := tracingWanted(); !on || protocol != "grpc" || err != nil {
		t.Errorf("grpc: %v %s %v", on, protocol, err)
	}
}

// grpcCollector is an OTLP/gRPC traces receiver counting the spans it gets.
type grpcCollector struct {
	coltrace.UnimplementedTraceServiceServer
	spans atomic.Int32
}

func (g *grpcCollector) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			g.spans.Add(int32(len(ss.Spans)))
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// With OTEL_EXPORTER_OTLP_PROTOCOL=grpc, spans go to an OTLP/gRPC
// collector.
func TestTracingGRPC(t *testing.T) {
	otelEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &grpcCollector{}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, col)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	stop, err := startTracing(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "s")
	span.End()
	stop()
	if n := col.spans.Load(); n != 1 {
		t.Errorf("%d spans received over gRPC, want 1", n)
	}
}
