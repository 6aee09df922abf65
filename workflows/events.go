package workflows

import (
	"github.com/a2aflow/a2aflow/internal/wire"
	"go.temporal.io/sdk/workflow"
)

// maxEvents is how many recent events a task keeps for subscribers. One
// further behind gets the current task instead (EventsOutput.Task), which is
// what A2A's SubscribeToTask starts with anyway.
const maxEvents = 1000

// emit numbers and records an event and hints the notifier.
func (r *run) emit(ctx workflow.Context, e wire.Event) {
	r.lastSeq++
	e.Seq = r.lastSeq
	r.events = append(r.events, e)
	if len(r.events) > maxEvents {
		r.events = append([]wire.Event(nil), r.events[len(r.events)-maxEvents:]...)
	}
	if r.notifier != nil && !workflow.IsReplaying(ctx) {
		r.notifier.Notify(string(r.task.ID), e.Seq) //workflowcheck:ignore a non-blocking hint with no effect on workflow state
	}
}

// eventsAfter answers QueryEvents.
func (r *run) eventsAfter(in wire.EventsInput) wire.EventsOutput {
	out := wire.EventsOutput{Last: r.lastSeq}
	first := r.lastSeq - int64(len(r.events)) + 1 // number of the oldest retained event
	after := in.After
	if in.WithTask || after < first-1 {
		out.Task = r.snapshot(in.HistoryLength)
	}
	if after < first-1 {
		after = first - 1
	}
	if after < r.lastSeq {
		out.Events = append([]wire.Event(nil), r.events[after-first+1:]...)
	}
	return out
}
