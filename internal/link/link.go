package link

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/interceptor"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// PushOptions tunes how webhooks are retried. The zero value works.
type PushOptions struct {
	// MaxRetryInterval caps the backoff between attempts to deliver one
	// event, which starts at one second and doubles. Default 5 minutes.
	MaxRetryInterval time.Duration
	// GiveUpAfter is how long one event is retried. A webhook that fails
	// that long is disabled: it gets no further events until its config is
	// created again. Default 24 hours.
	GiveUpAfter time.Duration
	// AttemptTimeout bounds one delivery attempt. Default 30 seconds.
	AttemptTimeout time.Duration
}

// DefaultRetryBudget is how long an unreachable remote agent is retried,
// unless the worker sets another default (Options.RetryBudget).
const DefaultRetryBudget = 5 * time.Minute

// HistoryLimits says when a task continues as new or, when its skill cannot,
// fails. The zero value uses the defaults.
type HistoryLimits struct {
	// ContinueAfterEvents continues as new at the next resumable point once
	// the run's history has this many events, whatever Temporal suggests.
	// Default 10,000 (Temporal suggests it at 4,096 by default).
	ContinueAfterEvents int
	// ContinueAfterBytes does the same for the history's size. Default 10 MB
	// (Temporal suggests it at 4 MB by default).
	ContinueAfterBytes int
	// FailAfterEvents, FailAfterBytes and FailAfterUpdates end a task whose
	// skill never offers a resumable point, before Temporal's own limits
	// (51,200 events, 50 MB, 2,000 updates) terminate it. Defaults 45,000
	// events, 40 MB and 1,900 updates.
	FailAfterEvents  int
	FailAfterBytes   int
	FailAfterUpdates int
}

// WithDefaults returns l with its zero fields set to their defaults.
func (l HistoryLimits) WithDefaults() HistoryLimits {
	if l.ContinueAfterEvents <= 0 {
		l.ContinueAfterEvents = 10_000
	}
	if l.ContinueAfterBytes <= 0 {
		l.ContinueAfterBytes = 10 << 20
	}
	if l.FailAfterEvents <= 0 {
		l.FailAfterEvents = 45_000
	}
	if l.FailAfterBytes <= 0 {
		l.FailAfterBytes = 40 << 20
	}
	if l.FailAfterUpdates <= 0 {
		l.FailAfterUpdates = 1_900
	}
	return l
}

// Options configures the task workflow of a worker. The zero value works.
type Options struct {
	// Notifier hints of every new task event, for an API in the same
	// process as the worker or the hint channels to other processes; nil
	// hints nothing (streams poll).
	Notifier wire.Notifier
	// Push tunes webhook retries.
	Push PushOptions
	// RetryBudget is the default CallRequest.RetryBudget of the tasks'
	// remote calls; zero is DefaultRetryBudget.
	RetryBudget time.Duration
	// Limits says when tasks continue as new or fail for their size.
	Limits HistoryLimits
}

// TaskWorkflow is what package workflows hands to package engine, for
// agents of type A (*workflows.Agent).
type TaskWorkflow[A any] struct {
	// New returns the workflow function of the task workflow serving
	// agents, whose names are unique, to register under
	// wire.TaskWorkflowName: a func(workflow.Context, input)
	// (*wire.TaskSnapshot, error) whose input type is package workflows'
	// own, typed any as worker.WorkflowRegistry.RegisterWorkflow takes it.
	New func(agents []A, o Options) any
	// ForkInterceptor returns the worker interceptor that answers a fork's
	// activities from its original's recorded results.
	ForkInterceptor func() interceptor.WorkerInterceptor
}

// handed is the TaskWorkflow package workflows handed over.
var handed any

// Hand hands the task workflow over. Package workflows calls it once, when
// it is initialised.
func Hand[A any](w TaskWorkflow[A]) {
	if handed != nil {
		panic("link: the task workflow was handed over twice")
	}
	handed = w
}

// Handed returns the task workflow package workflows handed over. Package
// engine calls it with A *workflows.Agent; importing package workflows
// ensures it was handed over.
func Handed[A any]() TaskWorkflow[A] {
	w, ok := handed.(TaskWorkflow[A])
	if !ok {
		panic(fmt.Sprintf("link: no task workflow of %T was handed over (%T was)", *new(A), handed))
	}
	return w
}
