package genai

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// turnKey keys the span context of the task's turn an activity runs for.
type turnKey struct{}

// ContextWithTurn returns ctx of an activity that runs for the turn whose
// invoke_agent span is sc: the GenAI spans started from it (chat,
// execute_tool, invoke_agent of a remote agent) are its children.
func ContextWithTurn(ctx context.Context, sc trace.SpanContext) context.Context {
	if !sc.IsValid() {
		return ctx
	}
	return context.WithValue(ctx, turnKey{}, sc)
}

// TurnOf returns the turn's span context ContextWithTurn put on ctx.
func TurnOf(ctx context.Context) (trace.SpanContext, bool) {
	sc, ok := ctx.Value(turnKey{}).(trace.SpanContext)
	return sc, ok && sc.IsValid()
}

// EncodeSpanContext is sc as a W3C traceparent, for a Temporal header.
func EncodeSpanContext(sc trace.SpanContext) string {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier.Get("traceparent")
}

// DecodeSpanContext reads a W3C traceparent EncodeSpanContext wrote (or a
// caller sent); the result is remote, and invalid for a bad one.
func DecodeSpanContext(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}
