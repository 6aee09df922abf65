// Package link is where package workflows hands its task workflow to
// package engine. The task workflow and the Task an agent's handler gets are
// one piece of code over one state, so they live together in package
// workflows, unexported; package workflows sets [NewTaskWorkflow] when it is
// initialised (the pattern of google.golang.org/grpc/internal), and package
// engine offers the typed functions the worker, the replayer and the tests
// call. Nothing but those two packages, the demo agents (for
// [MergedWrites]) and package llm (for [LocalModelCalls]) uses link.
package link

import (
	"time"

	"go.temporal.io/sdk/workflow"

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

// NewTaskWorkflow returns the workflow function of the task workflow (a
// func(workflow.Context, input) (*wire.TaskSnapshot, error)) serving
// agents, a []*workflows.Agent with unique names. Package workflows sets it.
var NewTaskWorkflow func(agents any, o Options) any

// NewForkInterceptor returns the worker interceptor (an
// interceptor.WorkerInterceptor) that answers a fork's activities from its
// recorded results. Package workflows sets it.
var NewForkInterceptor func() any

// MergedWrites reports whether the task whose skill ctx (or a context
// derived from it) belongs to was started with wire.TaskInput.MergedWrites:
// by an API of 2026-11-27 or later, whose worker had every change of the
// demo agents made before, so that such a change needs no
// workflow.GetVersion marker (two history events and a visibility write)
// for the tasks it started. False outside a task. Package workflows sets it.
var MergedWrites func(ctx workflow.Context) bool

// LocalModelCalls reports whether the task whose skill ctx (or a context
// derived from it) belongs to was started with
// wire.TaskInput.LocalModelCalls: package llm then makes its calls as
// local activities. False outside a task. Package workflows sets it.
var LocalModelCalls func(ctx workflow.Context) bool
