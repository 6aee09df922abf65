package genai

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of a2aflow's GenAI spans.
const TracerName = "github.com/a2aflow/a2aflow/genai"

func tracer() trace.Tracer { return otel.Tracer(TracerName) }

// start starts a span of an activity: the child of the turn's span when ctx
// has one (linked to the activity's own span, which Temporal's interceptor
// made), else of ctx's span.
func start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithAttributes(attrs...)}
	if turn, ok := TurnOf(ctx); ok {
		if own := trace.SpanContextFromContext(ctx); own.IsValid() && own.SpanID() != turn.SpanID() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: own}))
		}
		ctx = trace.ContextWithRemoteSpanContext(ctx, turn)
	}
	return tracer().Start(ctx, name, opts...)
}

// Chat is what a model call's span says of the call.
type Chat struct {
	// Provider is a2aflow's provider name ("openai", "anthropic", "gemini").
	Provider string
	// Model is the model requested.
	Model string
	// BaseURL is the provider's endpoint, for server.address and port.
	BaseURL string
	// MaxTokens, Stream and JSON are the request's limit, whether the
	// answer streams, and whether it asks for a JSON document.
	MaxTokens int64
	Stream    bool
	JSON      bool
	// Agent, TaskID and ConversationID are the task's.
	Agent, TaskID, ConversationID string
}

// StartChat starts the span of a model call: "chat {model}" (or
// "generate_content {model}" for Gemini), a client span.
func StartChat(ctx context.Context, c Chat) (context.Context, trace.Span) {
	op := Operation(c.Provider)
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, op),
		attribute.String(AttrProviderName, ProviderName(c.Provider)),
		attribute.String(AttrRequestModel, c.Model),
		attribute.Bool(AttrRequestStream, c.Stream),
	}
	if c.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int64(AttrRequestMaxTokens, c.MaxTokens))
	}
	if c.JSON {
		attrs = append(attrs, attribute.String(AttrOutputType, "json"))
	} else {
		attrs = append(attrs, attribute.String(AttrOutputType, "text"))
	}
	attrs = append(attrs, taskAttrs(c.Agent, c.TaskID, c.ConversationID)...)
	attrs = append(attrs, serverAttrs(c.BaseURL)...)
	return start(ctx, op+" "+c.Model, trace.SpanKindClient, attrs...)
}

// ChatResult is what a model call's span says of its answer.
type ChatResult struct {
	ResponseModel                                string
	FinishReason                                 string // llm.StopReason
	InputTokens, CachedInputTokens, OutputTokens int64
	CostUSD                                      float64
}

// EndChat ends a model call's span with its answer, or its error and the
// error's class (error.type: the provider's HTTP status or a2aflow's
// error type).
func EndChat(span trace.Span, r ChatResult, err error, errType string) {
	if err != nil {
		fail(span, err, errType)
		span.End()
		return
	}
	if r.ResponseModel != "" {
		span.SetAttributes(attribute.String(AttrResponseModel, r.ResponseModel))
	}
	if reason := FinishReason(r.FinishReason); reason != "" {
		span.SetAttributes(attribute.StringSlice(AttrResponseFinishReasons, []string{reason}))
	}
	span.SetAttributes(
		attribute.Int64(AttrUsageInputTokens, r.InputTokens),
		attribute.Int64(AttrUsageOutputTokens, r.OutputTokens),
		attribute.Float64(AttrCostUSD, r.CostUSD))
	if r.CachedInputTokens > 0 {
		span.SetAttributes(attribute.Int64(AttrUsageCacheReadTokens, r.CachedInputTokens))
	}
	span.End()
}

// Message is one message of gen_ai.input.messages / gen_ai.output.messages
// (the conventions' JSON schema), for spans that carry contents.
type Message struct {
	Role         string `json:"role"`
	Parts        []Part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// Part is one part of a Message: text, tool_call or tool_call_response.
type Part struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Response  any    `json:"response,omitempty"`
}

// SetContent puts a model call's system instructions, input and output
// messages on its span, when the operator opted in (CaptureContent).
func SetContent(span trace.Span, system string, input, output []Message) {
	if !CaptureContent() || !span.IsRecording() {
		return
	}
	if system != "" {
		if raw, err := json.Marshal([]Part{{Type: "text", Content: system}}); err == nil {
			span.SetAttributes(attribute.String(AttrSystemInstructions, string(raw)))
		}
	}
	if raw, err := json.Marshal(input); err == nil && len(input) > 0 {
		span.SetAttributes(attribute.String(AttrInputMessages, string(raw)))
	}
	if raw, err := json.Marshal(output); err == nil && len(output) > 0 {
		span.SetAttributes(attribute.String(AttrOutputMessages, string(raw)))
	}
}

// StartInvokeRemoteAgent starts the client span of a delegation to a remote
// A2A agent: "invoke_agent {agent}", whose HTTP requests (and so the remote
// a2aflow's spans, through traceparent) are its children.
func StartInvokeRemoteAgent(ctx context.Context, agent, agentURL, method, taskID, contextID string) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpInvokeAgent),
		attribute.String(AttrProviderName, "a2a"),
		attribute.String(AttrAgentName, agent),
		attribute.String(AttrA2AMethod, method),
	}
	if taskID != "" {
		attrs = append(attrs, attribute.String(AttrA2ATaskID, taskID))
	}
	if contextID != "" {
		attrs = append(attrs, attribute.String(AttrConversationID, contextID))
	}
	attrs = append(attrs, serverAttrs(agentURL)...)
	return start(ctx, OpInvokeAgent+" "+agent, trace.SpanKindClient, attrs...)
}

// StartMCPToolCall starts the client span of an MCP tools/call (the MCP
// conventions: "tools/call {tool}", mcp.method.name, gen_ai.tool.name,
// gen_ai.operation.name execute_tool).
func StartMCPToolCall(ctx context.Context, server, tool, sessionID string) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrMCPMethodName, "tools/call"),
		attribute.String(AttrOperationName, OpExecuteTool),
		attribute.String(AttrToolName, tool),
		attribute.String(AttrToolType, ToolTypeExtension),
		attribute.String("a2aflow.mcp.server", server),
	}
	if sessionID != "" {
		attrs = append(attrs, attribute.String(AttrMCPSessionID, sessionID))
	}
	return start(ctx, "tools/call "+tool, trace.SpanKindClient, attrs...)
}

// End ends span, failed with err (of class errType) when err is set.
func End(span trace.Span, err error, errType string) {
	if err != nil {
		fail(span, err, errType)
	}
	span.End()
}

func fail(span trace.Span, err error, errType string) {
	if errType == "" {
		errType = "_OTHER"
	}
	span.SetAttributes(attribute.String(AttrErrorType, errType))
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// Turn is a task's turn, from the message that started it to the task
// waiting for someone (or ending): its invoke_agent span.
type Turn struct {
	// Span is the turn's span context (SpanID, from the task and the
	// turn's start); Parent the task's trace (the span that started the
	// task, from its workflow's header), invalid for none.
	Span, Parent trace.SpanContext
	// Link is the span of the request that sent the turn's message.
	Link trace.SpanContext
	// Agent, TaskID and ConversationID are the task's; State the task's
	// state at the turn's end (a2a.TaskState).
	Agent, Description, TaskID, ConversationID, State string
	Start, End                                        time.Time
	// Failed is the task's end in failure, with its message.
	Failed string
}

// EmitTurn exports the span of a turn that ended, with the IDs the turn's
// children named as their parent. Workflow code calls it when it does
// not replay: once per turn.
func EmitTurn(t Turn) {
	ctx := WithSpanID(context.Background(), t.Span.TraceID(), t.Span.SpanID())
	if t.Parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, t.Parent)
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(t.Start),
		trace.WithAttributes(
			attribute.String(AttrOperationName, OpInvokeAgent),
			attribute.String(AttrProviderName, "a2aflow"),
			attribute.String(AttrAgentName, t.Agent),
			attribute.String(AttrAgentID, t.Agent),
			attribute.String(AttrA2ATaskState, t.State))}
	if t.Link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: t.Link}))
	}
	_, span := tracer().Start(ctx, OpInvokeAgent+" "+t.Agent, opts...)
	span.SetAttributes(taskAttrs("", t.TaskID, t.ConversationID)...)
	if t.Description != "" {
		span.SetAttributes(attribute.String(AttrAgentDescription, t.Description))
	}
	if t.Failed != "" {
		span.SetAttributes(attribute.String(AttrErrorType, "task_failed"))
		span.SetStatus(codes.Error, t.Failed)
	}
	span.End(trace.WithTimestamp(t.End))
}

// ToolCall is one tool call of a turn, as the tool loop saw it.
type ToolCall struct {
	// Turn is the span of the turn the call belongs to.
	Turn trace.SpanContext
	// Tool, CallID and Type (function, extension) name the call.
	Tool, CallID, Type string
	// Gated says the tool has an approval gate; Decision how the call was
	// let through (or not): none, granted, approved, approved_edited,
	// rejected; ApprovalID the approval it waited on.
	Gated                bool
	Decision, ApprovalID string
	// PolicyVersion is the version of the approval policies that judged
	// the call; 0: none.
	PolicyVersion int64
	// Arguments and Result are the call's (contents: only with
	// CaptureContent); Error its failure.
	Arguments, Result, Error      string
	Agent, TaskID, ConversationID string
	Start, End                    time.Time
}

// EmitToolCall exports the execute_tool span of a tool call that ended.
// Workflow code calls it when it does not replay.
func EmitToolCall(c ToolCall) {
	ctx := context.Background()
	if c.Turn.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, c.Turn)
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpExecuteTool),
		attribute.String(AttrToolName, c.Tool),
		attribute.String(AttrToolType, c.Type),
		attribute.Bool(AttrToolGated, c.Gated),
		attribute.String(AttrToolDecision, c.Decision),
	}
	if c.CallID != "" {
		attrs = append(attrs, attribute.String(AttrToolCallID, c.CallID))
	}
	if c.ApprovalID != "" {
		attrs = append(attrs, attribute.String(AttrToolApprovalID, c.ApprovalID))
	}
	if c.PolicyVersion > 0 {
		attrs = append(attrs, attribute.Int64(AttrToolPolicyVersion, c.PolicyVersion))
	}
	attrs = append(attrs, taskAttrs(c.Agent, c.TaskID, c.ConversationID)...)
	if CaptureContent() {
		if c.Arguments != "" {
			attrs = append(attrs, attribute.String(AttrToolCallArguments, c.Arguments))
		}
		if c.Result != "" {
			attrs = append(attrs, attribute.String(AttrToolCallResult, c.Result))
		}
	}
	_, span := tracer().Start(ctx, OpExecuteTool+" "+c.Tool, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(c.Start), trace.WithAttributes(attrs...))
	if c.Error != "" {
		errType := "tool_error"
		if c.Decision == "rejected" {
			errType = "not_approved"
		}
		span.SetAttributes(attribute.String(AttrErrorType, errType))
		span.SetStatus(codes.Error, c.Error)
	}
	span.End(trace.WithTimestamp(c.End))
}

func taskAttrs(agent, taskID, conversationID string) []attribute.KeyValue {
	var out []attribute.KeyValue
	if agent != "" {
		out = append(out, attribute.String(AttrAgentName, agent))
	}
	if taskID != "" {
		out = append(out, attribute.String(AttrA2ATaskID, taskID))
	}
	if conversationID != "" {
		out = append(out, attribute.String(AttrConversationID, conversationID))
	}
	return out
}

// serverAttrs are server.address and server.port of an endpoint's URL.
func serverAttrs(raw string) []attribute.KeyValue {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	out := []attribute.KeyValue{attribute.String(AttrServerAddress, u.Hostname())}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	if p, err := strconv.Atoi(port); err == nil {
		out = append(out, attribute.Int(AttrServerPort, p))
	}
	return out
}
