package engine

import (
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/link"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Options configures the task workflow of a worker: its notifier, webhook
// retries, the default retry budget of remote calls and its history limits.
// The zero value works.
type Options = link.Options

// HistoryLimits says when a task continues as new or, when its skill cannot,
// fails (Options.Limits).
type HistoryLimits = link.HistoryLimits

// PushOptions tunes webhook retries (Options.Push).
type PushOptions = link.PushOptions

// DefaultRetryBudget is how long an unreachable remote agent is retried
// when the worker sets no other budget (Options.RetryBudget).
const DefaultRetryBudget = link.DefaultRetryBudget

// TaskWorkflow returns the workflow function of the task workflow serving
// reg's agents, to register under wire.TaskWorkflowName.
func TaskWorkflow(reg *Registry, o Options) any {
	return link.Handed[*workflows.Agent]().New(reg.Agents(), o)
}

// NewForkInterceptor returns the task workflow's worker interceptor: it
// answers the activities of a forked task from the original's recorded
// results (docs/guides/fork.md), keeps the task's current details up to
// date with its calls under way and gives calls without a summary one
// (docs/guides/inspecting-runs.md). Every worker and replayer of the task
// workflow needs it: a fork's history replays only with it.
func NewForkInterceptor() interceptor.WorkerInterceptor {
	return link.Handed[*workflows.Agent]().ForkInterceptor()
}

// WorkerRegistry is what a worker, a workflow replayer or the SDK's test
// environment offers to register workflows and activities on.
type WorkerRegistry interface {
	worker.WorkflowRegistry
	worker.ActivityRegistry
}

// Register registers, on w, the task workflow serving reg's agents under
// wire.TaskWorkflowName, the workflow of ended tasks' push configs
// (EndedPushConfigsWorkflow), and the agents' own activities
// (Agent.Activities) under their names.
func Register(w WorkerRegistry, reg *Registry, o Options) error {
	if err := RegisterActivities(w, reg.Agents()...); err != nil {
		return err
	}
	w.RegisterWorkflowWithOptions(TaskWorkflow(reg, o), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	w.RegisterWorkflowWithOptions(EndedPushConfigsWorkflow, workflow.RegisterOptions{Name: wire.EndedPushConfigsWorkflowName})
	return nil
}
