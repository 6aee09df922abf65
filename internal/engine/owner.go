package engine

import (
	"context"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// ownerHeader is the Temporal header that carries a task's owner from its
// workflow to its activities.
const ownerHeader = "a2aflow-owner"

// NewOwnerInterceptor returns the worker interceptor that tells a task's
// activities whose task they work for ([workerenv.OwnerOf]), so that an activity
// that reads or writes as the owner (the agent directory, delegation) needs
// no call to Temporal to learn it.
//
// The owner is the one the API set when it started the task: the run's
// [wire.OwnerKey] search attribute as the run started, read before any of the
// task's code runs, and put on every activity the run schedules after the
// workflow's own code (skills included) built its call, so no task or
// model can change it. An activity scheduled without the header (by a
// worker without this interceptor, or before it existed) has no owner from
// it, and its reader asks Temporal instead. Headers are not part of the
// commands a replay compares: histories recorded with or without it replay
// alike.
func NewOwnerInterceptor() interceptor.WorkerInterceptor { return &ownerInterceptor{} }

type ownerInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*ownerInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &ownerWorkflowInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

func (*ownerInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &ownerActivityInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

// ownerWorkflowInbound holds one task run's owner header.
type ownerWorkflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	header *commonpb.Payload // nil for a run that is no task
}

func (w *ownerWorkflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return w.Next.Init(&ownerWorkflowOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, run: w})
}

func (w *ownerWorkflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if workflow.GetInfo(ctx).WorkflowType.Name == wire.TaskWorkflowName {
		// Absent: a task started without authentication, whose owner is "".
		owner, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(wire.OwnerKey)
		// The default converter's JSON of a string: deterministic. A
		// failure only makes the activities ask Temporal.
		w.header, _ = converter.GetDefaultDataConverter().ToPayload(owner)
	}
	return w.Next.ExecuteWorkflow(ctx, in)
}

type ownerWorkflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	run *ownerWorkflowInbound
}

func (o *ownerWorkflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.setHeader(ctx)
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *ownerWorkflowOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.setHeader(ctx)
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

func (o *ownerWorkflowOutbound) setHeader(ctx workflow.Context) {
	setCallHeader(ctx, ownerHeader, o.run.header)
}

type ownerActivityInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *ownerActivityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if p := interceptor.Header(ctx)[ownerHeader]; p != nil {
		var owner string
		if converter.GetDefaultDataConverter().FromPayload(p, &owner) == nil {
			ctx = workerenv.WithOwner(ctx, owner)
		}
	}
	return a.Next.ExecuteActivity(ctx, in)
}
