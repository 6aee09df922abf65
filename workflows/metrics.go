package workflows

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// Metrics the task workflow emits. It emits them through
// workflow.GetMetricsHandler, which emits nothing while the workflow
// replays: a worker rebuilding a task from its history (after a restart,
// or when the task left its cache) does not count the task's past again.
// The Temporal client's handler in a2aflow (package metrics) serves them at
// /metrics with a2aflow's labels only (agent, state, outcome): the SDK's
// tags such as namespace and task_queue are dropped, a task ID is never one.
// Emitting a metric records nothing in history, so these need no
// workflow.GetVersion.
const (
	// MetricTasksEnded counts tasks that reached a terminal state, by
	// agent and state: a2aflow_tasks_ended_total.
	MetricTasksEnded = "a2aflow_tasks_ended"
	// MetricInputRequired times each stretch a task spent input-required
	// (asking its user, waiting for approvals or a waitpoint), from entering
	// the state to leaving it, by agent: a2aflow_input_required_seconds.
	MetricInputRequired = "a2aflow_input_required"
	// MetricApprovalWait times an approval from its request to its
	// settlement, by agent and outcome (ApprovalOutcome...):
	// a2aflow_approval_wait_seconds.
	MetricApprovalWait = "a2aflow_approval_wait"
)

// Outcomes of an approval, the outcome label of MetricApprovalWait.
const (
	ApprovalOutcomeApproved = "approved" // approved by its approvers
	ApprovalOutcomeRejected = "rejected" // rejected by an approver
	ApprovalOutcomeExpired  = "expired"  // settled by its deadline (OnTimeout), approved or not
	ApprovalOutcomeCanceled = "canceled" // the task ended while it was pending
)

// runMetrics is what the metrics remember of a run.
type runMetrics struct {
	// inputRequiredSince is when the task entered input-required; zero
	// when it is not, or when it already was when this run started (a task
	// continued as new while waiting): the status's time stands in then.
	inputRequiredSince time.Time
}

// countStatus counts the task's move from prev (its status since prevAt)
// to state: the end of an input-required stretch, the task's end.
func (r *run) countStatus(ctx workflow.Context, prev a2a.TaskState, prevAt *time.Time, state a2a.TaskState) {
	now := workflow.Now(ctx)
	switch {
	case prev == a2a.TaskStateInputRequired && state != a2a.TaskStateInputRequired:
		since := r.metrics.inputRequiredSince
		if since.IsZero() && prevAt != nil {
			since = *prevAt
		}
		if !since.IsZero() {
			r.metricsHandler(ctx, nil).Timer(MetricInputRequired).Record(now.Sub(since))
		}
		r.metrics.inputRequiredSince = time.Time{}
	case state == a2a.TaskStateInputRequired && prev != a2a.TaskStateInputRequired:
		r.metrics.inputRequiredSince = now
	}
	if state.Terminal() && prev != state {
		r.metricsHandler(ctx, map[string]string{"state": string(state)}).Counter(MetricTasksEnded).Inc(1)
	}
}

// countApproval counts a settled approval: its wait and outcome.
func (r *run) countApproval(ctx workflow.Context, a *Approval) {
	outcome := ApprovalOutcomeRejected
	switch {
	case a.State == ApprovalCanceled:
		outcome = ApprovalOutcomeCanceled
	case len(a.Decisions) > 0 && a.Decisions[len(a.Decisions)-1].Via == "deadline":
		outcome = ApprovalOutcomeExpired
	case a.State == ApprovalApproved:
		outcome = ApprovalOutcomeApproved
	}
	r.metricsHandler(ctx, map[string]string{"outcome": outcome}).Timer(MetricApprovalWait).
		Record(workflow.Now(ctx).Sub(a.Created))
}

// metricsHandler is the workflow's replay-safe metrics handler, tagged
// with the agent and tags.
func (r *run) metricsHandler(ctx workflow.Context, tags map[string]string) client.MetricsHandler {
	h := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"agent": r.agentName})
	if len(tags) > 0 {
		h = h.WithTags(tags)
	}
	return h
}
