package outbound

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
)

// traced wraps base with OpenTelemetry's HTTP client instrumentation: each
// request gets a client span, child of its context's (an activity's, the
// API request's), and carries it to the server in the W3C traceparent
// header (and baggage), so that remote A2A agents, LLM providers and
// webhooks join the trace. It uses the global tracer provider and
// propagator, OpenTelemetry's no-ops unless a2aflow's tracing is on
// (OTEL_* variables): then it adds no header and no span. It records no
// metrics.
func traced(base http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(base, otelhttp.WithMeterProvider(noop.NewMeterProvider()))
}
