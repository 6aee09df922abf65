package workflows

import (
	"bytes"
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// The waiting memo (wire.WaitingMemo): a task that parks says in its memo
// what it waits for (wire.Waiting under wire.WaitingMemoKey), so that the
// console's list reads it from the visibility row instead of querying each
// waiting task. It rides the merged writes (writes.go): set in the memo
// upsert the park makes anyway, and removed in one upsert when the task
// moves on (a visibility write per unpark, none while it works). A change
// while the task stays parked (a second approval requested) writes it again;
// decisions and remote states do not change it (the memo holds no counts).
//
// waitShown, what visibility holds, crosses continue-as-new: the next run
// of a parked task writes nothing, and removes it when the task moves on.

// waitingMemoChange is the workflow.GetVersion change by which a task
// recorded before wire.WaitingMemo writes the memo from its next park.
const waitingMemoChange = "a2aflow-waiting-memo"

// Whether the run writes the waiting memo (run.waitMemo): not asked yet,
// or the answer of workflow.GetVersion.
const (
	waitMemoUnasked = iota
	waitMemoOff
	waitMemoOn
)

// waitingMemoMay reports whether the run writes, or may write, the waiting
// memo: its recording holds wire.WaitingMemo, or it has merged writes and
// has not been told no by workflow.GetVersion.
func (r *run) waitingMemoMay() bool {
	return r.recording.WaitingMemo() || (r.recording.MergedWrites() && r.waitMemo != waitMemoOff)
}

// waitingMemoOn reports whether the run writes the waiting memo, asking
// workflow.GetVersion once when its recording does not say so (a task
// started before wire.WaitingMemo: a replay of its history gets the old
// path, a live run the new one).
func (r *run) waitingMemoOn(ctx workflow.Context) bool {
	if r.recording.WaitingMemo() {
		return true
	}
	if !r.recording.MergedWrites() {
		return false
	}
	if r.waitMemo == waitMemoUnasked {
		r.waitMemo = waitMemoOff
		if workflow.GetVersion(ctx, waitingMemoChange, workflow.DefaultVersion, 1) == 1 {
			r.waitMemo = waitMemoOn
		}
	}
	return r.waitMemo == waitMemoOn
}

// nextRecording is the recording a continued run gets: the run's, with
// wire.WaitingMemo when workflow.GetVersion turned it on in this run.
func (r *run) nextRecording() wire.Recording {
	if r.waitMemo == waitMemoOn {
		return r.recording | wire.WaitingMemo
	}
	return r.recording
}

// waitingDue returns what the memo should say the task waits for (nil: the
// task does not wait) when it differs from what visibility holds. Cheap
// while the task works and visibility holds nothing: the coroutine of
// merged writes asks it at every pass.
func (r *run) waitingDue() (*wire.Waiting, bool) {
	if !r.waitingMemoMay() || r.task == nil {
		return nil, false
	}
	if !r.waiting() {
		return nil, r.waitShown != nil
	}
	w := r.waitingNow()
	return w, !sameWaiting(w, r.waitShown)
}

// sameWaiting compares two memos as visibility holds them, in JSON (a
// deadline restored from a continued run's input has another location).
func sameWaiting(a, b *wire.Waiting) bool {
	if a == nil || b == nil {
		return a == b
	}
	ja, errA := json.Marshal(a) //workflowcheck:ignore (structs and slices, no map: the same bytes every time)
	jb, errB := json.Marshal(b) //workflowcheck:ignore
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// noteWaiting puts what the task waits for in the pending memo when it
// changed since visibility had it, and reports whether the memo must be
// written now although the task does not wait (it moved on: the key is
// removed).
func (r *run) noteWaiting(ctx workflow.Context) bool {
	w, due := r.waitingDue()
	if !due || !r.waitingMemoOn(ctx) {
		return false
	}
	r.waitShown = w
	if w == nil {
		r.setMemo(wire.WaitingMemoKey, nil) // a nil payload removes the key
		return true
	}
	r.setMemo(wire.WaitingMemoKey, w)
	return false
}

// waitingNow is what the task waits for, from the run's state, every text
// cut to its bound (wire.WaitingItems and the rune bounds).
func (r *run) waitingNow() *wire.Waiting {
	w := &wire.Waiting{Kind: wire.WaitingForInput}
	switch {
	case r.task.Status.State == a2a.TaskStateAuthRequired:
		w.Kind = wire.WaitingForCredential
	case r.approvals.waiting:
		w.Kind = wire.WaitingForApproval
	case r.waitpoints.waiting:
		w.Kind = wire.WaitingForWaitpoint
	}
	w.Question = wire.OneLine(MessageText(r.task.Status.Message), wire.WaitingTextRunes)
	name := func(s string) string { return wire.OneLine(s, wire.WaitingNameRunes) }
	for _, a := range r.approvals.list {
		if a.State != ApprovalPending {
			continue
		}
		if len(w.Approvals) == wire.WaitingItems {
			w.More++
			continue
		}
		wa := wire.WaitingApproval{ID: a.ID, Title: name(a.Request.Title), Required: max(a.Request.Required, 1), Deadline: a.Deadline}
		for _, g := range a.Groups[:min(len(a.Groups), wire.WaitingItems)] {
			wa.Groups = append(wa.Groups, name(g))
		}
		w.Approvals = append(w.Approvals, wa)
	}
	for _, p := range r.waitpoints.list {
		if p.State != WaitpointPending {
			continue
		}
		if len(w.Waitpoints) == wire.WaitingItems {
			w.More++
			continue
		}
		w.Waitpoints = append(w.Waitpoints, wire.WaitingWaitpoint{ID: p.ID, Name: name(p.Name), Deadline: p.Deadline})
	}
	if c := r.credentials.wait; c != nil && w.Kind == wire.WaitingForCredential {
		w.Credential = &wire.WaitingCredential{Service: name(c.Service), AuthType: name(c.AuthType), Agent: name(c.Agent), RemoteTask: name(c.RemoteTask)}
	}
	for _, d := range r.delegations.list {
		if d.State.Terminal() || d.TaskID == "" {
			continue
		}
		if len(w.Remote) == wire.WaitingItems {
			w.More++
			continue
		}
		w.Remote = append(w.Remote, wire.WaitingRemoteTask{Agent: name(d.Agent), TaskID: name(string(d.TaskID))})
	}
	return w
}

// carryWaiting and restoreWaiting hand what visibility holds to the next
// run (the run replaces waitShown, never changes it).
func (r *run) carryWaiting(c *continuedTask) { c.Waiting = r.waitShown }

func (r *run) restoreWaiting(c *continuedTask) { r.waitShown = c.Waiting }
