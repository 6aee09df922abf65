package workflows

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Merged writes (wire.MergedWrites): a task's A2ATaskState search
// attribute and its memo are history events, and each is a visibility
// write. Written at every status change, a turn that answers a waiting task
// and asks the next question wrote two (working, then input-required
// again), and a delegation one for working and one per memo key. With
// merged writes, setStatus and SetMetadata only change the run's state,
// and a coroutine of the run writes what changed once the workflow's own
// code has stopped: the search attribute when the state differs from the
// one visibility has (not for a turn that ends where it began), the memo
// keys set since the last write, in one upsert, once the task waits
// (input-required and the like), as well as before the run ends or
// continues as new.
//
// Lean writes (wire.LeanWrites) leave out what visibility can do
// without: a task that completes while visibility has it working (an echo,
// a delegation in its first turn, any turn whose work outlasted its first
// workflow task) writes no A2ATaskState before it ends, as a run closed
// Completed with A2ATaskState working is a completed task
// (wire.TaskStateCondition); and the approvals' A2APendingApprovals and
// A2AApprovalGroups join the state's upsert instead of writing one of their
// own at every change.
//
// The coroutine is created after the root coroutine, which runs the skill,
// and update handlers run before both in the SDK's dispatcher: within one
// pass over the coroutines it sees the state the skill left when it
// blocked, so a status the skill sets and replaces before blocking (working,
// then a new question) is never written.

// startWrites starts the coroutine of merged writes. The state visibility
// has is the one the API started the task with (working: its first
// message makes it so) or, in a continued run, the one the run before
// wrote before it continued.
//
// A fork that replays its original (fork.go) starts the coroutine once the
// replay is over: nothing is written meanwhile (writesDue), and a
// coroutine less makes each of the replay's many passes cheaper.
func (r *run) startWrites(ctx workflow.Context, continued bool) {
	if !r.recording.MergedWrites() {
		return
	}
	r.visible = a2a.TaskStateWorking
	if continued {
		r.visible = r.task.Status.State
	}
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	r.fork.afterReplay(func() { r.goWrites(ctx) })
}

// goWrites runs the coroutine of merged writes.
func (r *run) goWrites(ctx workflow.Context) {
	workflow.GoNamed(ctx, "a2aflow-writes", func(ctx workflow.Context) {
		for r.recording.MergedWrites() {
			if err := workflow.Await(ctx, r.writesDue); err != nil {
				return
			}
			r.flushWrites(ctx, r.waiting())
		}
	})
}

// writesDue is whether the search attributes or (once the task waits) the
// memo have something to write. A task still submitted waits for its first
// message, in the state the API started it with.
func (r *run) writesDue() bool {
	if !r.recording.MergedWrites() || r.fork.replaying() {
		// A fork delivering its recorded inputs writes once it reached
		// its fork point (or ends: finish writes).
		return false
	}
	if _, ok := r.stateDue(); ok || len(r.saPending) > 0 {
		return true
	}
	if _, ok := r.waitingDue(); ok { // waiting.go
		return true
	}
	return len(r.memoPending) > 0 && r.waiting()
}

// stateDue is the A2ATaskState to write, if any: the task's state when it
// differs from the one visibility has, except, with lean writes, a
// completion while visibility has the task working, which visibility reads
// from the run's close (wire.TaskStateCondition).
func (r *run) stateDue() (a2a.TaskState, bool) {
	state := r.task.Status.State
	if state == a2a.TaskStateSubmitted || state == r.visible {
		return "", false
	}
	if r.recording.LeanWrites() && state == a2a.TaskStateCompleted && r.visible == a2a.TaskStateWorking {
		return "", false
	}
	return state, true
}

// setSearchAttributes records search attribute updates for the next
// merged upsert (lean writes), or upserts them at once.
func (r *run) setSearchAttributes(ctx workflow.Context, what string, sa ...temporal.SearchAttributeUpdate) {
	if r.recording.LeanWrites() {
		r.saPending = append(r.saPending, sa...)
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, sa...); err != nil {
		r.logger.Warn("upsert "+what+" search attributes", "error", err)
	}
}

// waiting is whether the task waits for someone (a user's answer, an
// approval, credentials): the end of a turn.
func (r *run) waiting() bool {
	switch r.task.Status.State {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return true
	}
	return false
}

// setMemo records value under key for the next memo write.
func (r *run) setMemo(key string, value any) {
	if r.memoPending == nil {
		r.memoPending = map[string]any{}
	}
	r.memoPending[key] = value
}

// flushWrites writes the task's state to its search attribute when it
// differs from the one visibility has (stateDue), with the search
// attributes set since the last write and, when memo, the memo keys set
// since then, in one upsert of each.
func (r *run) flushWrites(ctx workflow.Context, memo bool) {
	if !r.recording.MergedWrites() {
		return
	}
	if r.noteWaiting(ctx) { // waiting.go: the task moved on
		memo = true
	}
	sa := r.saPending
	r.saPending = nil
	if state, ok := r.stateDue(); ok {
		sa = append(sa, wire.TaskStateKey.ValueSet(string(state)))
		r.visible = state
	}
	sa = r.withSearchText(ctx, sa) // searchtext.go
	if len(sa) > 0 {
		if err := workflow.UpsertTypedSearchAttributes(ctx, sa...); err != nil {
			r.logger.Warn("upsert task search attributes", "error", err)
		}
	}
	if memo && len(r.memoPending) > 0 {
		pending := r.memoPending
		r.memoPending = nil
		if err := workflow.UpsertMemo(ctx, pending); err != nil {
			r.logger.Warn("upsert memo", "error", err)
		}
	}
}
