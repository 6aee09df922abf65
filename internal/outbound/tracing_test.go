package outbound_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/a2aflow/a2aflow/internal/outbound"
)

// Outbound requests carry the W3C traceparent of their context's trace
// when tracing is on, and none when it is off (OpenTelemetry's no-ops).
func TestOutboundTraceparent(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("traceparent")
	}))
	defer srv.Close()
	hc := outbound.New(outbound.Options{Policy: mustPolicy(t, "loopback")}).HTTPClient(outbound.A2A)
	get := func(ctx context.Context) string {
		t.Helper()
		got = ""
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return got
	}
	if h := get(context.Background()); h != "" {
		t.Errorf("traceparent %q with tracing off", h)
	}

	tp := sdktrace.NewTracerProvider()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		_ = tp.Shutdown(context.Background())
	})
	ctx, span := otel.Tracer("test").Start(context.Background(), "activity")
	defer span.End()
	h := get(ctx)
	if want := "00-" + span.SpanContext().TraceID().String() + "-"; !strings.HasPrefix(h, want) {
		t.Errorf("traceparent %q, want the trace %s", h, want)
	}
}
