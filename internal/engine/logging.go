package engine

import (
	"context"
	"log/slog"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"
)

// The keys of a task on its log lines: every line a task's workflow code
// (workflow.GetLogger) and activities (activity.GetLogger) log carries
// them, as the API's lines about the task do.
const (
	LogKeyTaskID    = "task_id"
	LogKeyContextID = "context_id"
	LogKeyAgent     = "agent"
)

// TaskLoggerKey is the key of an empty attribute group on the loggers
// [NewLoggingInterceptor] gives workflow and activity code. slog's handlers
// print no empty group; a handler of the Temporal client's logger can look
// for it to tell those lines from the SDK's own (a2aflow logs the SDK's at
// warn and above unless --log-level is debug, and the agents' at
// --log-level).
const TaskLoggerKey = "a2aflow.task_logger"

// IsTaskLoggerMark reports whether a is the mark of TaskLoggerKey.
func IsTaskLoggerMark(a slog.Attr) bool {
	return a.Key == TaskLoggerKey && a.Value.Kind() == slog.KindGroup && len(a.Value.Group()) == 0
}

// taskLogHeader is the Temporal header that carries a task's keys from its
// workflow to its activities.
const taskLogHeader = "a2aflow-task"

// taskKeys are what a task's log lines carry.
type taskKeys struct {
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
	Agent     string `json:"agent,omitempty"`
}

// args returns the keys as logger arguments, after the mark and component.
func (k taskKeys) args(component string) []any {
	out := []any{slog.Group(TaskLoggerKey), "component", component}
	for _, kv := range [...][2]string{{LogKeyTaskID, k.TaskID}, {LogKeyContextID, k.ContextID}, {LogKeyAgent, k.Agent}} {
		if kv[1] != "" {
			out = append(out, kv[0], kv[1])
		}
	}
	return out
}

// NewLoggingInterceptor returns the worker interceptor that adds a task's
// keys (task_id, context_id, agent) to the loggers its code gets:
// workflow.GetLogger in a [wire.TaskWorkflowName] run (any workflow whose first
// argument has a [wire.TaskInput]), keys computed once per run, and
// activity.GetLogger in the activities it schedules, to which a Temporal
// header carries them. The loggers stay the SDK's: the workflow's is
// replay-safe (silent while history replays) and both keep the SDK's
// fields (WorkflowID, RunID, ActivityType...). Headers are not part of the
// commands a replay compares, so histories recorded with or without it
// replay alike.
//
// Trace and span IDs: with tracing on, the SDK's tracing interceptor
// (go.temporal.io/sdk/contrib/opentelemetry, on the client, so before this
// one in the worker's chain) adds its span's IDs (TraceID, SpanID) to the
// logger these lines build on. This interceptor adds the task's keys to the
// spans of the workflow and activities (tracing.go).
func NewLoggingInterceptor() interceptor.WorkerInterceptor { return &loggingInterceptor{} }

type loggingInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*loggingInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &logWorkflowInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

func (*loggingInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &logActivityInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

// logWorkflowInbound holds one run's keys.
type logWorkflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	args   []any             // the logger arguments, nil before ExecuteWorkflow
	header *commonpb.Payload // the keys for the activities; nil for no task
}

func (w *logWorkflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return w.Next.Init(&logWorkflowOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, run: w})
}

func (w *logWorkflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	var keys taskKeys
	var task *wire.TaskInput
	if len(in.Args) > 0 {
		if v, ok := in.Args[0].(interface{ StartInput() wire.TaskInput }); ok {
			started := v.StartInput()
			task = &started
		}
	}
	if task != nil {
		keys = taskKeys{TaskID: workflow.GetInfo(ctx).WorkflowExecution.ID, ContextID: task.ContextID, Agent: task.Agent}
		// The default converter's JSON of a struct: deterministic. A
		// failure only loses the keys of the activities' lines.
		w.header, _ = converter.GetDefaultDataConverter().ToPayload(keys)
		annotateWorkflowSpan(ctx, keys) // tracing.go
	}
	w.args = keys.args("workflow")
	return w.Next.ExecuteWorkflow(ctx, in)
}

type logWorkflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	run *logWorkflowInbound
}

func (o *logWorkflowOutbound) GetLogger(ctx workflow.Context) log.Logger {
	args := o.run.args
	if args == nil {
		args = taskKeys{}.args("workflow")
	}
	return log.With(o.Next.GetLogger(ctx), args...)
}

func (o *logWorkflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.setHeader(ctx)
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *logWorkflowOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.setHeader(ctx)
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

func (o *logWorkflowOutbound) setHeader(ctx workflow.Context) {
	setCallHeader(ctx, taskLogHeader, o.run.header)
}

// setCallHeader sets the header key of the activity call being made with
// ctx to p (nil: leaves it), over any value the caller put there.
func setCallHeader(ctx workflow.Context, key string, p *commonpb.Payload) {
	if p == nil {
		return
	}
	if h := interceptor.WorkflowHeader(ctx); h != nil {
		h[key] = p
	}
}

type logActivityInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

type taskKeysKey struct{}

func (a *logActivityInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return a.Next.Init(&logActivityOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}})
}

func (a *logActivityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if p := interceptor.Header(ctx)[taskLogHeader]; p != nil {
		var keys taskKeys
		if converter.GetDefaultDataConverter().FromPayload(p, &keys) == nil {
			ctx = context.WithValue(ctx, taskKeysKey{}, keys)
			ctx = workerenv.WithTask(ctx, keys.TaskID, keys.ContextID, keys.Agent)
			annotateActivitySpan(ctx, keys) // tracing.go
		}
	}
	return a.Next.ExecuteActivity(ctx, in)
}

type logActivityOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
}

func (o *logActivityOutbound) GetLogger(ctx context.Context) log.Logger {
	keys, ok := ctx.Value(taskKeysKey{}).(taskKeys)
	if !ok && activity.IsActivity(ctx) {
		// Scheduled by a task workflow without the header (before this
		// interceptor, or by another worker): the task is the workflow.
		if info := activity.GetInfo(ctx); info.WorkflowType != nil && info.WorkflowType.Name == wire.TaskWorkflowName {
			keys.TaskID = info.WorkflowExecution.ID
		}
	}
	return log.With(o.Next.GetLogger(ctx), keys.args("activity")...)
}
