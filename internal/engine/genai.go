package engine

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/genai"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// NewGenAIInterceptor returns the worker interceptor that traces a task's
// agent work per the OpenTelemetry GenAI semantic conventions (package
// genai): each turn of the task (from the message that set it working to
// the task waiting for someone or ending) is an invoke_agent span, each
// tool call of its LLM loops an execute_tool span, and its activities get
// the turn's span context in a Temporal header, so that their model calls
// and delegations are the turn's children.
//
// It follows the task through the workflow's own Events query, which it
// reads (a function call: no command, nothing in history) whenever the
// workflow schedules something or waits; it exports a span only when the
// workflow does not replay. A turn's span ID is derived from the task and
// the time the turn started, so a worker that takes the task over after a
// crash, or the turn's end days later, names the same span; its parent is
// the span of the request that started the task (from the workflow's
// start header, Temporal's tracing interceptor's), so every turn of a task
// is in one trace, and it links to the request that sent its message.
// Install it only with a tracer provider whose ID generator is
// genai.IDGenerator.
func NewGenAIInterceptor() interceptor.WorkerInterceptor { return &genaiInterceptor{} }

// genaiTurnHeader is the Temporal header carrying a turn's span context
// (a W3C traceparent) from the workflow to its activities.
const genaiTurnHeader = "a2aflow-genai-turn"

// temporalTracingHeader is the header of Temporal's tracing interceptor:
// the span of the request that started the workflow.
const temporalTracingHeader = "_tracer-data"

type genaiInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*genaiInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &genaiWorkflowInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

func (*genaiInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &genaiActivityInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

// turns follows one run of a task workflow: its current turn.
type turns struct {
	taskID, contextID, agent string
	parent                   trace.SpanContext // the request that started the task
	traceID                  trace.TraceID
	events                   func(wire.EventsInput) (wire.EventsOutput, error)
	seen                     int64
	started                  bool
	link                     trace.SpanContext // the request of the last message
	cur                      *turn
}

type turn struct {
	start time.Time
	span  trace.SpanContext
	link  trace.SpanContext
}

var _ wire.ToolCallTracer = (*turns)(nil)

type genaiWorkflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	t *turns // nil: not a task workflow
}

func (w *genaiWorkflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return w.Next.Init(&genaiWorkflowOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, in: w})
}

func (w *genaiWorkflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if len(in.Args) > 0 {
		if v, ok := in.Args[0].(interface{ StartInput() wire.TaskInput }); ok {
			task := v.StartInput()
			id := workflow.GetInfo(ctx).WorkflowExecution.ID
			t := &turns{taskID: id, contextID: task.ContextID, agent: task.Agent, traceID: genai.TraceID(id)}
			if sc := headerSpan(interceptor.WorkflowHeader(ctx)); sc.IsValid() {
				t.parent, t.traceID = sc, sc.TraceID()
				t.link = sc
			}
			w.t = t
			ctx = wire.WithToolCallTracer(ctx, t)
		}
	}
	out, err := w.Next.ExecuteWorkflow(ctx, in)
	if w.t != nil {
		w.t.observe(ctx)
	}
	return out, err
}

func (w *genaiWorkflowInbound) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	if w.t != nil && in.Name == wire.UpdateSendMessage {
		if sc := headerSpan(interceptor.WorkflowHeader(ctx)); sc.IsValid() {
			w.t.link = sc
		}
	}
	out, err := w.Next.ExecuteUpdate(ctx, in)
	if w.t != nil {
		w.t.observe(ctx)
	}
	return out, err
}

// headerSpan is the span context Temporal's tracing interceptor wrote into
// a workflow or update header, if any.
func headerSpan(h map[string]*commonpb.Payload) trace.SpanContext {
	p := h[temporalTracingHeader]
	if p == nil {
		return trace.SpanContext{}
	}
	var m map[string]string
	if converter.GetDefaultDataConverter().FromPayload(p, &m) != nil {
		return trace.SpanContext{}
	}
	return genai.DecodeSpanContext(m["traceparent"])
}

// observe reads the task's events since the last look and moves the turn
// on: a task set working starts one, a task waiting for someone or ended
// ends it (its span exported unless the workflow replays).
func (t *turns) observe(ctx workflow.Context) {
	if t.events == nil {
		return
	}
	in := wire.EventsInput{After: t.seen}
	if !t.started {
		// The first look (also a continued run's, or a replay's): the
		// task's status now, its earlier events left alone.
		none := 0
		in = wire.EventsInput{After: 1 << 62, WithTask: true, HistoryLength: &none}
	}
	out, err := t.events(in)
	if err != nil {
		return
	}
	if out.Task != nil && out.Task.Task != nil && (!t.started || len(out.Events) == 0 || out.Events[0].Seq > t.seen+1) {
		// The first look, or too far behind for the retained events: the
		// current status stands for those missed.
		t.status(ctx, out.Task.Status)
	}
	t.started = true
	for _, e := range out.Events {
		if e.Status != nil {
			t.status(ctx, e.Status.Status)
		}
	}
	t.seen = out.Last
}

// status moves the turn on for a status the task took.
func (t *turns) status(ctx workflow.Context, s a2a.TaskStatus) {
	at := workflow.Now(ctx)
	if s.Timestamp != nil {
		at = *s.Timestamp
	}
	switch {
	case s.State == a2a.TaskStateWorking && t.cur == nil:
		span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: t.traceID,
			SpanID: genai.SpanID(t.taskID, at.UTC().Format(time.RFC3339Nano)), TraceFlags: trace.FlagsSampled, Remote: true})
		t.cur = &turn{start: at, span: span, link: t.link}
	case t.cur != nil && (s.State.Terminal() || s.State == a2a.TaskStateInputRequired || s.State == a2a.TaskStateAuthRequired):
		if !workflow.IsReplaying(ctx) {
			failed := ""
			if s.State == a2a.TaskStateFailed {
				failed = "the task failed"
				if s.Message != nil {
					for _, p := range s.Message.Parts {
						if txt, ok := p.Content.(a2a.Text); ok {
							failed = string(txt)
						}
					}
				}
			}
			genai.EmitTurn(genai.Turn{Span: t.cur.span, Parent: t.parent, Link: t.cur.link, Agent: t.agent,
				TaskID: t.taskID, ConversationID: t.contextID, State: string(s.State), Start: t.cur.start, End: at, Failed: failed})
		}
		t.cur = nil
	}
}

// TraceToolCall implements wire.ToolCallTracer: the call's execute_tool
// span, a child of the current turn's.
func (t *turns) TraceToolCall(ctx workflow.Context, c wire.ToolCallTrace) {
	t.observe(ctx)
	if workflow.IsReplaying(ctx) {
		return
	}
	var parent trace.SpanContext
	if t.cur != nil {
		parent = t.cur.span
	}
	genai.EmitToolCall(genai.ToolCall{Turn: parent, Tool: c.Tool, CallID: c.CallID, Type: c.Type, Gated: c.Gated,
		Decision: c.Decision, ApprovalID: c.ApprovalID, PolicyVersion: c.PolicyVersion, Arguments: c.Arguments, Result: c.Result, Error: c.Error,
		Agent: t.agent, TaskID: t.taskID, ConversationID: t.contextID, Start: c.Start, End: c.End})
}

// header is the turn's header for an activity scheduled now, or nil.
func (t *turns) header(ctx workflow.Context) *commonpb.Payload {
	t.observe(ctx)
	if t.cur == nil {
		return nil
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(genai.EncodeSpanContext(t.cur.span))
	if err != nil {
		return nil
	}
	return p
}

type genaiWorkflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	in *genaiWorkflowInbound
}

func (o *genaiWorkflowOutbound) SetQueryHandler(ctx workflow.Context, queryType string, handler any) error {
	if t := o.in.t; t != nil && queryType == wire.QueryEvents {
		if fn, ok := handler.(func(wire.EventsInput) (wire.EventsOutput, error)); ok {
			t.events = fn
		}
	}
	return o.Next.SetQueryHandler(ctx, queryType, handler)
}

func (o *genaiWorkflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if t := o.in.t; t != nil {
		setCallHeader(ctx, genaiTurnHeader, t.header(ctx))
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *genaiWorkflowOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if t := o.in.t; t != nil {
		setCallHeader(ctx, genaiTurnHeader, t.header(ctx))
	}
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

func (o *genaiWorkflowOutbound) Await(ctx workflow.Context, condition func() bool) error {
	o.look(ctx)
	return o.Next.Await(ctx, condition)
}

func (o *genaiWorkflowOutbound) AwaitWithTimeout(ctx workflow.Context, timeout time.Duration, condition func() bool) (bool, error) {
	o.look(ctx)
	return o.Next.AwaitWithTimeout(ctx, timeout, condition)
}

func (o *genaiWorkflowOutbound) AwaitWithOptions(ctx workflow.Context, options workflow.AwaitOptions, condition func() bool) (bool, error) {
	o.look(ctx)
	return o.Next.AwaitWithOptions(ctx, options, condition)
}

func (o *genaiWorkflowOutbound) NewTimer(ctx workflow.Context, d time.Duration) workflow.Future {
	o.look(ctx)
	return o.Next.NewTimer(ctx, d)
}

func (o *genaiWorkflowOutbound) NewContinueAsNewError(ctx workflow.Context, wfn any, args ...any) error {
	o.look(ctx)
	return o.Next.NewContinueAsNewError(ctx, wfn, args...)
}

func (o *genaiWorkflowOutbound) look(ctx workflow.Context) {
	if t := o.in.t; t != nil {
		t.observe(ctx)
	}
}

type genaiActivityInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *genaiActivityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if p := interceptor.Header(ctx)[genaiTurnHeader]; p != nil {
		var traceparent string
		if converter.GetDefaultDataConverter().FromPayload(p, &traceparent) == nil {
			ctx = genai.ContextWithTurn(ctx, genai.DecodeSpanContext(traceparent))
		}
	}
	return a.Next.ExecuteActivity(ctx, in)
}
