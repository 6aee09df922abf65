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
	Task *TaskSnapshot `json:"task,omitempty"`
	// Events are the events after EventsInput.After, oldest first.
	Events []Event `json:"events,omitempty"`
	// Last is the number of the task's latest event.
	Last int64 `json:"last"`
}

// TaskSnapshot is the task as the GetTask and Events queries and the
// workflow's result give it: the task with its recent history, the number
// of its latest event when the snapshot was taken (so a streaming caller
// continues from exactly there) and the pages of older history a reader
// loads from the payload store. It marshals as the task's JSON plus a few
// fields, so it decodes as an a2a.Task too.
type TaskSnapshot struct {
	*a2a.Task
	// EventSeq is the number of the task's latest event in this snapshot.
	EventSeq int64 `json:"a2aflowEventSeq"`
	// EarlierHistory are the pages (oldest first) holding the messages
	// before Task.History that the asked historyLength needs; see history.go.
	EarlierHistory []HistoryPage `json:"a2aflowEarlierHistory,omitempty"`
	// HistoryLength is how many messages the task's whole history holds.
	HistoryLength int `json:"a2aflowHistoryLength,omitempty"`
	// Agent and Owner say whose the task is, for readers of a workflow's
	// result (a query checks access inside the workflow).
	Agent string `json:"a2aflowAgent,omitempty"`
	Owner string `json:"a2aflowOwner,omitempty"`
	// NoTask is set on the result of a workflow that never received a
	// message, which is no task (see firstMessageGrace).
	NoTask bool `json:"a2aflowNoTask,omitempty"`
}

// TaskUpdateResult is the result of the SendMessage and CancelTask updates.
// It is bounded, whatever the task's age: the task itself is read with the
// GetTask or Events query, unless a blocking send asked for it and it is
// small ([MaxResultTaskBytes]).
type TaskUpdateResult struct {
	// EventSeq is the number of the task's latest event when the update
	// answered.
	EventSeq int64 `json:"eventSeq"`
	// State is the task's state then.
	State a2a.TaskState `json:"state"`
	// Settled reports whether what the caller waits for happened: the task
	// took the message and is interrupted, or ended (a cancel: ended), or
	// the message was only to be recorded (returnImmediately). When false
	// (the task continued as new, or too many senders waited at once), the
	// caller follows the task's events after EventSeq for the rest.
	Settled bool `json:"settled"`
	// Status, Messages and Artifacts are the task's status, the number of
	// messages in its history and of its artifacts when the update
	// answered: a stream starts from the task as it was then, and the
	// events after EventSeq bring it up to date.
	Status    *a2a.TaskStatus `json:"status,omitempty"`
	Messages  int             `json:"messages,omitempty"`
	Artifacts int             `json:"artifacts,omitempty"`
	// Task is the task after the message, as GetTask reads it, when the
	// send asked for it (WantTask) and it is at most MaxResultTaskBytes.
	Task *TaskSnapshot `json:"task,omitempty"`
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
