package guard

import (
	"context"
	"log/slog"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the API's tracer (its instrumentation scope).
const tracerName = "github.com/a2aflow/a2aflow/internal/api"

// Span attributes of the A2A request a span served, where known.
const (
	AttrTaskID    = "a2a.task_id"
	AttrContextID = "a2a.context_id"
	AttrAgent     = "agent"
)

// TraceRequest is the middleware that gives each request its server span,
// the child of the caller's W3C traceparent when it sent one. Without
// tracing (no OTEL_* variables) the global tracer provider and propagator
// are OpenTelemetry's no-ops: the span is a no-op and nothing is read from
// the headers. The span ends with the request (a stream's when it closes),
// with the agent, task and context the request log learned.
func TraceRequest(c *gin.Context) {
	r := c.Request
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	route := c.FullPath()
	if route == "" && r.URL.Path == "/" {
		route = "/" // the default agent's JSON-RPC endpoint (NoRoute)
	}
	name := r.Method
	if route != "" {
		name += " " + route
	}
	ctx, span := otel.GetTracerProvider().Tracer(tracerName).Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", bounded(r.URL.Path, maxLoggedPath)),
			attribute.String("client.address", RemoteHost(r)),
		)
		if route != "" {
			span.SetAttributes(attribute.String("http.route", route))
		}
		if ua := r.UserAgent(); ua != "" {
			span.SetAttributes(attribute.String("user_agent.original", bounded(ua, maxLoggedPath)))
		}
	}
	c.Request = r.WithContext(ctx)
	c.Next()
	if !span.IsRecording() {
		return
	}
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
	if l := requestLogFrom(c.Request.Context()); l != nil {
		l.mu.Lock()
		for _, kv := range [...][2]string{{AttrAgent, l.agent}, {AttrTaskID, l.taskID}, {AttrContextID, l.contextID}, {"a2a.method", l.method}} {
			if kv[1] != "" {
				span.SetAttributes(attribute.String(kv[0], kv[1]))
			}
		}
		l.mu.Unlock()
	}
}

// traceAttrs returns the trace and span IDs of the request of ctx for its
// log lines ("trace_id", "span_id"), when its span is sampled: the access
// line and every line logged with the request's context get them.
func traceAttrs(ctx context.Context) []slog.Attr {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return nil
	}
	return []slog.Attr{slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String())}
}
