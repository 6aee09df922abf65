package engine

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/workflow"
)

// The attributes of a task on the spans of its workflow and activities
// (Temporal's OpenTelemetry interceptor's RunWorkflow and RunActivity, when
// the client has it), as the API's spans of its requests carry them.
const (
	SpanAttrTaskID    = "a2a.task_id"
	SpanAttrContextID = "a2a.context_id"
	SpanAttrAgent     = "agent"
)

// spanAttrs returns k as span attributes.
func (k taskKeys) spanAttrs() []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, kv := range [...][2]string{{SpanAttrTaskID, k.TaskID}, {SpanAttrContextID, k.ContextID}, {SpanAttrAgent, k.Agent}} {
		if kv[1] != "" {
			out = append(out, attribute.String(kv[0], kv[1]))
		}
	}
	return out
}

// annotateWorkflowSpan adds k to the workflow's span, if it has a recording
// one. Span attributes are no command: replay is unaffected.
func annotateWorkflowSpan(ctx workflow.Context, k taskKeys) {
	if span, ok := temporalotel.SpanFromWorkflowContext(ctx); ok && span.IsRecording() {
		span.SetAttributes(k.spanAttrs()...)
	}
}

// annotateActivitySpan adds k to the activity's span, if it has a
// recording one.
func annotateActivitySpan(ctx context.Context, k taskKeys) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(k.spanAttrs()...)
	}
}
