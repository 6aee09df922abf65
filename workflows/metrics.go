package workflows

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// MetricTasksEnded is the counter of tasks that reached a terminal state,
// by agent and state. The workflow emits it through the SDK's
// replay-safe metrics handler (nothing while replaying), so it is served
// with the Temporal SDK's series: a2aflow_tasks_ended_total at /metrics.
const MetricTasksEnded = "a2aflow_tasks_ended"

// countEnded counts the task's end in state.
func (r *run) countEnded(ctx workflow.Context, state a2a.TaskState) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"agent": r.agentName, "state": string(state)}).
		Counter(MetricTasksEnded).Inc(1)
}
