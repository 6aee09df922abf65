package workflows

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Merged writes (wire.TaskInput.MergedWrites): a task's A2ATaskState search
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
	if !r.merged {
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
		for r.merged {
			if err := workflow.Await(ctx, r.writesDue); err != nil {
				return
			}
			r.flushWrites(ctx, r.waiting())
		}
	})
}

// writesDue is whether the search attribute or (once the task waits) the
// memo has something to write. A task still submitted waits for its first
// message, in the state the API started it with.
func (r *run) writesDue() bool {
	if !r.merged || r.fork.replaying() {
		// A fork delivering its recorded inputs writes once it reached
		// its fork point (or ends: finish writes).
		return false
	}
	state := r.task.Status.State
	if state != a2a.TaskStateSubmitted && state != r.visible {
		return true
	}
	return len(r.memoPending) > 0 && r.waiting()
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
// differs from the one visibility has and, when memo, the memo keys set
// since the last write, in one upsert.
func (r *run) flushWrites(ctx workflow.Context, memo bool) {
	if !r.merged {
		return
	}
	if state := r.task.Status.State; state != a2a.TaskStateSubmitted && state != r.visible {
		if err := workflow.UpsertTypedSearchAttributes(ctx, wire.TaskStateKey.ValueSet(string(state))); err != nil {
			r.logger.Warn("upsert task state search attribute", "error", err)
		}
		r.visible = state
	}
	if memo && len(r.memoPending) > 0 {
		pending := r.memoPending
		r.memoPending = nil
		if err := workflow.UpsertMemo(ctx, pending); err != nil {
			r.logger.Warn("upsert memo", "error", err)
		}
	}
}
