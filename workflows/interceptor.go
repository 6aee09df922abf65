package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// newTaskInterceptor returns the worker interceptor of task workflows. It
// answers a fork's activities from its recorded results (fork.go): every
// worker and replayer of task workflows must have it, without it a fork's
// history does not replay. It also keeps the task's current details up to
// date with the calls under way (details.go), and gives every activity,
// local activity and timer that has no summary one (an activity's type
// and its agent), which the Temporal UI shows in the run's timeline.
// Neither changes what a task records but the commands' user metadata,
// which replay does not compare.
func newTaskInterceptor() interceptor.WorkerInterceptor { return &taskInterceptor{} }

type taskInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*taskInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &taskInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type taskInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (i *taskInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&taskOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}})
}

type taskOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *taskOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	t, ok := TaskFrom(ctx)
	if !ok {
		return o.Next.ExecuteActivity(ctx, activityType, args...)
	}
	if fut, answered := t.r.fork.answer(ctx, activityType, args); answered {
		return fut
	}
	opts := workflow.GetActivityOptions(ctx)
	if opts.Summary == "" && (opts.StartToCloseTimeout > 0 || opts.ScheduleToCloseTimeout > 0) {
		opts.Summary = t.r.defaultSummary(activityType)
		ctx = workflow.WithActivityOptions(ctx, opts)
	}
	fut := o.Next.ExecuteActivity(ctx, activityType, args...)
	t.r.callStarted(ctx, orDefault(opts.Summary, activityType), fut)
	return fut
}

func (o *taskOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	t, ok := TaskFrom(ctx)
	if !ok {
		return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
	}
	if fut, answered := t.r.fork.answerLocal(ctx, activityType, args); answered {
		return fut
	}
	opts := workflow.GetLocalActivityOptions(ctx)
	if opts.Summary == "" && (opts.StartToCloseTimeout > 0 || opts.ScheduleToCloseTimeout > 0) {
		opts.Summary = t.r.defaultSummary(activityType)
		ctx = workflow.WithLocalActivityOptions(ctx, opts)
	}
	fut := o.Next.ExecuteLocalActivity(ctx, activityType, args...)
	t.r.callStarted(ctx, orDefault(opts.Summary, activityType), fut)
	return fut
}

func (o *taskOutbound) NewTimer(ctx workflow.Context, d time.Duration) workflow.Future {
	return o.NewTimerWithOptions(ctx, d, workflow.TimerOptions{})
}

func (o *taskOutbound) NewTimerWithOptions(ctx workflow.Context, d time.Duration, options workflow.TimerOptions) workflow.Future {
	t, ok := TaskFrom(ctx)
	if !ok {
		return o.Next.NewTimerWithOptions(ctx, d, options)
	}
	if fut, answered := t.r.fork.answerTimer(ctx, d); answered {
		return fut
	}
	switch options.Summary {
	case "", "Sleep", "AwaitWithTimeout": // none, or the SDK's own words
		options.Summary = fmt.Sprintf("timer of %s in the %s skill", d, t.r.agentName)
	}
	t.r.showEndedCalls(ctx)
	return o.Next.NewTimerWithOptions(ctx, d, options)
}

func (o *taskOutbound) Await(ctx workflow.Context, condition func() bool) error {
	o.show(ctx)
	return o.Next.Await(ctx, condition)
}

func (o *taskOutbound) AwaitWithTimeout(ctx workflow.Context, timeout time.Duration, condition func() bool) (bool, error) {
	o.show(ctx)
	return o.Next.AwaitWithTimeout(ctx, timeout, condition)
}

func (o *taskOutbound) AwaitWithOptions(ctx workflow.Context, options workflow.AwaitOptions, condition func() bool) (bool, error) {
	o.show(ctx)
	return o.Next.AwaitWithOptions(ctx, options, condition)
}

// show brings the task's current details up to date before the skill
// blocks: calls that ended since are no longer under way.
func (o *taskOutbound) show(ctx workflow.Context) {
	if t, ok := TaskFrom(ctx); ok {
		t.r.showEndedCalls(ctx)
	}
}

// defaultSummary is the summary of an activity that has none.
func (r *run) defaultSummary(activityType string) string {
	return fmt.Sprintf("%s (%s skill)", activityType, r.agentName)
}
