package wire

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TaskInput starts a task workflow. The workflow ID is the task ID.
type TaskInput struct {
	// Agent names the agent (in the worker's Registry) that serves the task.
	Agent string
	// ContextID is the A2A context the task belongs to.
	ContextID string
	// Owner is the principal that created the task ("" without auth).
	Owner string
	// Message is an optional first message, for tasks started outside the
	// API (Temporal UI, CLI, schedules). The API sends the first message with
	// the UpdateSendMessage update of Update-with-Start instead.
	Message *a2a.Message
	// Recording is what the task records ([Recording]): the API sets
	// [CurrentRecording], less the changes its operator turned off; a
	// continued run has the run before's. Read it with
	// [TaskInput.RecordingLevel], which also reads the booleans of inputs
	// recorded before it.
	Recording Recording `json:",omitempty"`
	legacyRecording
	// Schedule is the ID of the schedule whose run this task is (the
	// schedules REST resource, on Temporal Schedules): the task's metadata
	// names it under [ScheduleMetadataKey], and its first message
	// (Message, the same for every run) gets the task's ID as its own,
	// so that every run's message ID is unique.
	Schedule string `json:",omitempty"`
	// PushConfig, when set, is a push notification config the task has
	// from its start (a schedule's config for its runs' results). Its
	// secrets are sealed for the schedule ([ScheduleSealBinding]).
	PushConfig *a2a.PushConfig `json:",omitempty"`
	// Fork, when set, makes the task a fork of another (docs/guides/fork.md):
	// its skill runs on the original's recorded results and inputs up to
	// the fork point. Message is then the original's first message.
	Fork *ForkInput `json:",omitempty"`
}

// StartInput returns in. The task workflow's own input embeds a TaskInput
// (with the state a continued run carries), and the worker's interceptors
// read the task's context and agent through this method, whatever the
// embedding type.
func (in TaskInput) StartInput() TaskInput { return in }

// SendMessageInput is the argument of the UpdateSendMessage update.
type SendMessageInput struct {
	// Agent is the agent whose endpoint the request came through; a task of
	// another agent answers TaskNotFound. Empty skips the check.
	Agent string
	// Owner is the authenticated caller; a task created by another principal
	// answers TaskNotFound. Empty (no auth) skips the check.
	Owner string
	// Message is the user's message; its ID is also the update ID, so a
	// retried request is applied once.
	Message *a2a.Message
	// ReturnImmediately returns the task as soon as the message is recorded
	// instead of waiting for it to be interrupted or terminal.
	ReturnImmediately bool
	// HistoryLength limits the returned history: nil all, 0 none, N the last N.
	HistoryLength *int
	// WantTask asks for the task itself in the result ([TaskUpdateResult]
	// Task), with HistoryLength applied, when it is small: a blocking
	// SendMessage then answers without a query that reads the task again.
	WantTask bool `json:",omitempty"`
	// HistorySince limits the history of the task in the result further,
	// to the messages since Message (the caller's own, included), when the
	// workflow still holds it among its recent messages: the default answer
	// of a SendMessage without historyLength, whose size is the turn's, not
	// the task's (docs/concepts.md). Within HistoryLength either way.
	HistorySince bool `json:",omitempty"`
	// PushConfig, when set, adds a webhook as [UpdateCreatePushConfig] does.
	PushConfig *a2a.PushConfig
	// PushGeneration is PushConfig's [CreatePushConfigInput.Generation].
	PushGeneration bool `json:",omitempty"`
	// Approver and ApproverGroups identify the sender when the message is
	// an approval decision (workflows/approval_messages.go): set by the API
	// from authentication, never from the message.
	Approver       string   `json:",omitempty"`
	ApproverGroups []string `json:",omitempty"`
	// OnBehalfOf names the approver whose delegated authority the
	// decision uses, checked by the API (Approver is then "X for Y").
	OnBehalfOf string `json:",omitempty"`
	// Extensions are the URIs of the agent's extensions the request
	// activated (its A2A-Extensions header, checked by the API against
	// Agent.Extensions): recorded here, in history, so the skill reads them
	// deterministically ([Task.Extensions]).
	Extensions []string `json:",omitempty"`
	// IfGenerationMatch, when set (A2A 1.1's
	// SendMessageConfiguration.ifGenerationMatch), makes the message
	// conditional: the validator refuses it with
	// [ErrTypeGenerationMismatch] unless the task's generation (the number
	// [Generation] of its latest event) is this value and no
	// other conditional message was accepted at it. Ignored by a task that
	// has no message yet (the message creates it).
	IfGenerationMatch *int64 `json:",omitempty"`
}

// CancelTaskInput is the argument of the UpdateCancelTask update.
type CancelTaskInput struct {
	// Agent is the agent whose endpoint the request came through; a task of
	// another agent answers TaskNotFound. Empty skips the check.
	Agent string
	// Owner is the authenticated caller; a task created by another principal
	// answers TaskNotFound. Empty (no auth) skips the check.
	Owner string
	// HistoryLength limits the returned history: nil all, 0 none, N the last N.
	HistoryLength *int
}

// GetTaskInput is the argument of the QueryGetTask query.
type GetTaskInput struct {
	// Agent is the agent whose endpoint the request came through; a task of
	// another agent answers TaskNotFound. Empty skips the check.
	Agent string
	// Owner is the authenticated caller; a task created by another principal
	// answers TaskNotFound. Empty (no auth) skips the check.
	Owner string
	// HistoryLength limits the returned history: nil all, 0 none, N the last N.
	HistoryLength *int
	// HistorySince, a message ID, limits the history further to the
	// messages since that one (included), when the workflow still holds it
	// among its recent messages ([SendMessageInput] HistorySince).
	HistorySince string `json:",omitempty"`
}

// ErrTypeNoFirstMessage is the error type a workflow that never received its
// first message fails with: it is no task.
const ErrTypeNoFirstMessage = "NoFirstMessage"

// MaxResultTaskBytes bounds the task a SendMessage result carries
// ([SendMessageInput] WantTask): a larger one is left out, and the caller
// reads it with a query. It keeps every update result in history small,
// whatever the task's age (2,000 such results are 16 MB at most).
const MaxResultTaskBytes = 8 << 10

// MaxForkResultTaskBytes bounds the task a fork's [UpdateForkSettled]
// answers with, once in the fork's history: a fork answers a long task
// whole without a query (a fork's input holds more already).
const MaxForkResultTaskBytes = 128 << 10

// LastMessages applies A2A's historyLength: nil keeps all, 0 none, N the last N.
func LastMessages(history []*a2a.Message, historyLength *int) []*a2a.Message {
	if historyLength == nil {
		return append([]*a2a.Message(nil), history...)
	}
	n := *historyLength
	if n <= 0 {
		return nil
	}
	if n > len(history) {
		n = len(history)
	}
	return append([]*a2a.Message(nil), history[len(history)-n:]...)
}

// SinceMessage returns the messages of history from the one whose ID is id
// (the last such), or history itself when none is.
func SinceMessage(history []*a2a.Message, id string) []*a2a.Message {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i] != nil && history[i].ID == id {
			return history[i:]
		}
	}
	return history
}

// QueryEvents returns a task's numbered events after a sequence number (A2A
// streaming). Its argument is an [EventsInput], its result an [EventsOutput].
const QueryEvents = "Events"

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

// Generation is the A2A 1.1 generation of a task whose latest event is
// number seq, or of the event numbered seq: a task is created (submitted)
// at generation 1 with no event, and each event (a status change, an
// artifact added or updated) raises it by one (workflows/generation.go).
func Generation(seq int64) int64 { return seq + 1 }

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

// Interrupted reports whether a task in state s waits for its user
// (input-required, auth-required).
func Interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}
