package wire

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ToolCallTrace is one tool call of an LLM tool loop, as the loop saw it:
// what its execute_tool span says (package genai).
type ToolCallTrace struct {
	// Tool and CallID name the call; Type is "function" (a Go tool) or
	// "extension" (an MCP server's tool).
	Tool, CallID, Type string
	// Gated says the tool has an approval gate; Decision how the call was
	// let through or stopped: "none" (no approval needed), "granted" (an
	// earlier grant), "approved", "approved_edited", "rejected"; ApprovalID
	// the approval it waited on.
	Gated                bool
	Decision, ApprovalID string
	// PolicyVersion is the version of the approval policies that judged
	// the call (0: none judged it).
	PolicyVersion int64
	// Arguments, Result and Error are the call's.
	Arguments, Result, Error string
	// Start and End are the call's times on the workflow clock.
	Start, End time.Time
}

// ToolCallTracer takes the tool calls of a task's LLM loops: the worker's
// GenAI interceptor (package engine) implements it and puts it on the
// task's workflow context. TraceToolCall is workflow code: it must neither
// block nor issue commands.
type ToolCallTracer interface {
	TraceToolCall(ctx workflow.Context, c ToolCallTrace)
}

// toolCallTracerKey keys the ToolCallTracer on a workflow context.
type toolCallTracerKey struct{}

// WithToolCallTracer returns ctx whose tool loops report their calls to t.
func WithToolCallTracer(ctx workflow.Context, t ToolCallTracer) workflow.Context {
	return workflow.WithValue(ctx, toolCallTracerKey{}, t)
}

// ToolCallTracerOf returns the ToolCallTracer of ctx, or nil.
func ToolCallTracerOf(ctx workflow.Context) ToolCallTracer {
	t, _ := ctx.Value(toolCallTracerKey{}).(ToolCallTracer)
	return t
}
