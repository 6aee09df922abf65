package workflows

import (
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
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
			r.metricsHandler(ctx, nil).Timer(wire.MetricInputRequired).Record(now.Sub(since))
		}
		r.metrics.inputRequiredSince = time.Time{}
	case state == a2a.TaskStateInputRequired && prev != a2a.TaskStateInputRequired:
		r.metrics.inputRequiredSince = now
	}
	if state.Terminal() && prev != state {
		r.metricsHandler(ctx, map[string]string{"state": string(state)}).Counter(wire.MetricTasksEnded).Inc(1)
	}
}

// countApproval counts a settled approval: its wait and outcome.
func (r *run) countApproval(ctx workflow.Context, a *Approval) {
	outcome := wire.ApprovalOutcomeRejected
	switch {
	case a.State == ApprovalCanceled:
		outcome = wire.ApprovalOutcomeCanceled
	case len(a.Decisions) > 0 && a.Decisions[len(a.Decisions)-1].Via == "deadline":
		outcome = wire.ApprovalOutcomeExpired
	case a.State == ApprovalApproved:
		outcome = wire.ApprovalOutcomeApproved
	}
	wait := workflow.Now(ctx).Sub(a.Created)
	r.metricsHandler(ctx, map[string]string{"outcome": outcome}).Timer(wire.MetricApprovalWait).Record(wait)
	if outcome == wire.ApprovalOutcomeCanceled {
		return // nobody decided it
	}
	for _, g := range a.Groups {
		r.metricsHandler(ctx, map[string]string{"outcome": outcome, "group": g}).Timer(wire.MetricApprovalDecision).Record(wait)
	}
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
