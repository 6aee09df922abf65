package workflows

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// QueryEvents returns a task's numbered events after a sequence number (A2A
// streaming). Its argument is an [EventsInput], its result an [EventsOutput].
const QueryEvents = "Events"

// maxEvents is how many recent events a task keeps for subscribers. One
// further behind gets the current task instead (EventsOutput.Task), which is
// what A2A's SubscribeToTask starts with anyway.
const maxEvents = 1000

// Event is one numbered status or artifact change of a task. Numbers start
// at 1 and have no gaps, so any API replica can stream a task from any point
// and a reconnecting client misses nothing.
type Event struct {
	// Seq is the event's number within its task.
	Seq int64 `json:"seq"`
	// Status is set for a status change.
	Status *a2a.TaskStatusUpdateEvent `json:"status,omitempty"`
	// Artifact is set for a new artifact or an artifact chunk.
	Artifact *a2a.TaskArtifactUpdateEvent `json:"artifact,omitempty"`
}

// A2A returns the event as the protocol streams it.
func (e Event) A2A() a2a.Event {
	if e.Artifact != nil {
		return e.Artifact
	}
	return e.Status
}

// EventsInput is the argument of the QueryEvents query.
type EventsInput struct {
	// Agent and Owner scope the read as in [GetTaskInput].
	Agent string
	Owner string
	// After is the last event the caller has; events after it are returned.
	After int64
	// WithTask also returns the current task.
	WithTask bool
	// HistoryLength limits the returned task's history: nil all, 0 none, N the last N.
	HistoryLength *int
}

// EventsOutput is the result of the QueryEvents query.
type EventsOutput struct {
	// Task is the current task, when asked for or when the caller is too far
	// behind for the retained events (then Events starts after a gap).
	Task *a2a.Task `json:"task,omitempty"`
	// Events are the events after EventsInput.After, oldest first.
	Events []Event `json:"events,omitempty"`
	// Last is the number of the task's latest event.
	Last int64 `json:"last"`
}

// TaskSnapshot is the result of the SendMessage update: the task and the
// number of its latest event when the snapshot was taken, so a streaming
// caller continues from exactly there. It marshals as the task's JSON plus
// one field, so it decodes as an a2a.Task too.
type TaskSnapshot struct {
	*a2a.Task
	// EventSeq is the number of the task's latest event in this snapshot.
	EventSeq int64 `json:"a2aflowEventSeq"`
}

// Notifier learns that a task has a new event, so a streaming API in the same
// process can query it at once instead of waiting for its next poll. It is a
// hint: it must not block, and a lost hint only delays the event until the
// next poll. The workflow calls it only when not replaying.
type Notifier interface {
	Notify(taskID string, seq int64)
}

// emit numbers and records an event and hints the notifier.
func (r *run) emit(ctx workflow.Context, e Event) {
	r.lastSeq++
	e.Seq = r.lastSeq
	r.events = append(r.events, e)
	if len(r.events) > maxEvents {
		r.events = append([]Event(nil), r.events[len(r.events)-maxEvents:]...)
	}
	if r.notifier != nil && !workflow.IsReplaying(ctx) {
		r.notifier.Notify(string(r.task.ID), e.Seq) //workflowcheck:ignore a non-blocking hint with no effect on workflow state
	}
}

// eventsAfter answers QueryEvents.
func (r *run) eventsAfter(in EventsInput) EventsOutput {
	out := EventsOutput{Last: r.lastSeq}
	first := r.lastSeq - int64(len(r.events)) + 1 // number of the oldest retained event
	after := in.After
	if in.WithTask || after < first-1 {
		out.Task = r.snapshot(in.HistoryLength)
	}
	if after < first-1 {
		after = first - 1
	}
	if after < r.lastSeq {
		out.Events = append([]Event(nil), r.events[after-first+1:]...)
	}
	return out
}
