package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Thread is a conversation as an immutable value: the messages of a task, and
// optionally of its context's earlier tasks, oldest first. Adding returns a
// new thread and leaves the old one as it was, so a skill can keep a thread,
// try a continuation, and go back. Treat the messages as read-only.
type Thread struct {
	msgs []*a2a.Message
}

// NewThread returns a thread of msgs (nil messages are dropped).
func NewThread(msgs ...*a2a.Message) Thread {
	return Thread{}.Add(msgs...)
}

// Add returns a new thread with msgs after the thread's messages.
func (th Thread) Add(msgs ...*a2a.Message) Thread {
	// A fresh array every time: appending to a shared one would let two
	// threads grown from the same parent overwrite each other's messages.
	out := make([]*a2a.Message, 0, len(th.msgs)+len(msgs))
	out = append(out, th.msgs...)
	for _, m := range msgs {
		if m != nil {
			out = append(out, m)
		}
	}
	return Thread{msgs: out}
}

// AddText returns a new thread with a text message from role.
func (th Thread) AddText(role a2a.MessageRole, text string) Thread {
	return th.Add(&a2a.Message{Role: role, Parts: a2a.ContentParts{a2a.NewTextPart(text)}})
}

// Messages returns the thread's messages, oldest first, in a new slice.
func (th Thread) Messages() []*a2a.Message {
	return append([]*a2a.Message(nil), th.msgs...)
}

// Len returns the number of messages.
func (th Thread) Len() int { return len(th.msgs) }

// Last returns the latest message, or nil for an empty thread.
func (th Thread) Last() *a2a.Message {
	if len(th.msgs) == 0 {
		return nil
	}
	return th.msgs[len(th.msgs)-1]
}

// Thread returns the task's conversation so far: its history of user and
// agent messages (questions, answers, progress), oldest first. It does not
// include the context's earlier tasks; [Task.ContextThread] does. A long
// task's thread holds the recent messages the workflow keeps (from
// [HistoryPageSize] to twice that); older ones are in the payload store.
func (t *Task) Thread() Thread {
	return NewThread(t.r.history.recent...)
}

// ErrTaskNotFound is returned (wrapped) by Task.ReferencedTask for a task that
// does not exist, is no longer retained, or belongs to another principal.
var ErrTaskNotFound = errors.New("task not found")

// readTaskOptions are the activity options of the task-reading activities:
// a read is cheap and idempotent, so it is retried a few times.
var readTaskOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		MaximumAttempts:        5,
		NonRetryableErrorTypes: []string{wire.ErrTypeTaskNotFound},
	},
}

// ReferencedTask reads another task, typically one of [Task.ReferenceTaskIDs]
// that this task refines, through the ActivityFetchTask activity: the read is
// recorded in history, so a replay sees the same task. A task that cannot be
// found (or belongs to another principal) is an error wrapping [ErrTaskNotFound].
func (t *Task) ReferencedTask(ctx workflow.Context, id a2a.TaskID) (*a2a.Task, error) {
	actx := workflow.WithActivityOptions(ctx, withSummary(readTaskOptions, "read task "+string(id)))
	var task *a2a.Task
	err := workflow.ExecuteActivity(actx, wire.ActivityFetchTask, wire.FetchTaskInput{TaskID: id, Owner: t.r.owner}).Get(ctx, &task)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == wire.ErrTypeTaskNotFound {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read task %s: %w", id, err)
	}
	if task == nil {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return task, nil
}

// ContextThread returns the conversation of the task's whole context: the
// history of the context's earlier tasks (of the same owner, oldest first,
// at most the latest 20, read through the ActivityContextHistory activity
// and so recorded in history), then this task's own. Tasks are found through
// Temporal visibility, which lags writes by moments: a task started in the
// same second may be missing.
func (t *Task) ContextThread(ctx workflow.Context) (Thread, error) {
	actx := workflow.WithActivityOptions(ctx, withSummary(readTaskOptions, "read context "+t.r.task.ContextID))
	var earlier []*a2a.Message
	started := workflow.GetInfo(ctx).WorkflowStartTime
	if f := t.r.fork.in; f != nil && f.Started != nil {
		// A fork reads the context as its original did: the tasks started
		// before the original (a new input field: no recorded history has it).
		started = *f.Started
	}
	err := workflow.ExecuteActivity(actx, wire.ActivityContextHistory, wire.ContextHistoryInput{
		ContextID:     t.r.task.ContextID,
		Owner:         t.r.owner,
		Exclude:       t.r.task.ID,
		StartedBefore: started,
	}).Get(ctx, &earlier)
	if err != nil {
		return Thread{}, fmt.Errorf("read the earlier tasks of context %s: %w", t.r.task.ContextID, err)
	}
	return NewThread(earlier...).Add(t.r.history.recent...), nil
}

func withSummary(o workflow.ActivityOptions, summary string) workflow.ActivityOptions {
	o.Summary = summary
	return o
}
