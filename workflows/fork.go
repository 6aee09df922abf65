package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Forks (docs/guides/fork.md). A fork is a new task whose input holds the
// original's recorded activity results and inputs (wire.ForkInput). Its
// skill runs from the start; the fork unit below delivers the recorded
// inputs, each when the task waits for input, while the task's history
// holds fewer messages than the fork point, and the worker interceptor of
// this file answers the skill's activities from the recorded results:
// such an activity is never scheduled, so no side effect runs twice.

// forkReplay is the fork unit: the state of a fork's replay of its
// original. A task that is no fork has no input and does nothing.
type forkReplay struct {
	unitBase
	r *run `carry:"-"`

	// input is the wire.ForkInput's JSON (in, decoded, is this run's).
	input json.RawMessage
	in    *wire.ForkInput `carry:"-"`
	used  []bool          // per recorded activity: its result was used
	next  int             // the next recorded input to deliver
	cut   bool            // the fork point is reached: no more input is delivered
	live  bool            // the replay is over: every activity runs
	// refused is why the fork failed: the agent changed since the original ran.
	refused string
	// later are what waits for the replay's end to start (afterReplay).
	later []func() `carry:"-"`
}

// replaysWithout reports whether the run replays an original that never
// called activityType (a task recorded before the call was added): the
// fork must not call it either until it runs live.
func (f *forkReplay) replaysWithout(activityType string) bool {
	return f.in != nil && !f.live &&
		!slices.ContainsFunc(f.in.Activities, func(a wire.RecordedActivity) bool { return a.Type == activityType })
}

// carriedFork is the fork unit's part of continuedTask.
type carriedFork struct {
	Input   json.RawMessage `json:"input"`
	Used    []bool          `json:"used,omitempty"`
	Next    int             `json:"next,omitempty"`
	Cut     bool            `json:"cut,omitempty"`
	Live    bool            `json:"live,omitempty"`
	Refused string          `json:"refused,omitempty"`
}

func (f *forkReplay) carry(c *continuedTask) {
	if f.input == nil {
		return
	}
	c.Fork = &carriedFork{Input: f.input, Used: slices.Clone(f.used), Next: f.next, Cut: f.cut, Live: f.live, Refused: f.refused}
}

func (f *forkReplay) restore(c *continuedTask) {
	if c.Fork == nil {
		return
	}
	f.input, f.used, f.next, f.cut, f.live, f.refused = c.Fork.Input, slices.Clone(c.Fork.Used), c.Fork.Next, c.Fork.Cut, c.Fork.Live, c.Fork.Refused
	f.decode()
}

// decode reads the input's JSON; a fork whose input does not decode
// replays nothing (it cannot happen: the API wrote it).
func (f *forkReplay) decode() {
	var in wire.ForkInput
	err := json.Unmarshal(f.input, &in) //workflowcheck:ignore
	if err != nil {
		f.r.logger.Error("fork input does not decode; the fork runs live", "error", err)
		f.live, f.cut = true, true
		return
	}
	f.in = &in
	if len(f.used) < len(in.Activities) {
		f.used = append(f.used, make([]bool, len(in.Activities)-len(f.used))...)
	}
}

// begin makes the run a fork of in, in its first run.
func (f *forkReplay) begin(in *wire.ForkInput) error {
	raw, err := json.Marshal(in) //workflowcheck:ignore (the JSON of the same input is the same bytes)
	if err != nil {
		return err
	}
	f.input = raw
	f.decode()
	r := f.r
	if r.task.Metadata == nil {
		r.task.Metadata = map[string]any{}
	}
	r.task.Metadata[wire.ForkMetadataKey] = f.origin()
	return nil
}

func (f *forkReplay) origin() map[string]any {
	o := map[string]any{"from": string(f.in.From), "atMessage": f.in.AtMessage}
	if f.in.Retry {
		o["retry"] = true
	}
	if f.refused != "" {
		o["refused"] = f.refused
	}
	return o
}

// limit is how many of the recorded activities the fork may use now: those
// that completed before the next input to deliver (all after the last).
func (f *forkReplay) limit() int {
	if f.next < len(f.in.Inputs) {
		return min(f.in.Inputs[f.next].After, len(f.in.Activities))
	}
	return len(f.in.Activities)
}

// answer answers an activity call of the fork from its recorded results:
// a settled future and true, or false when the activity must run (the
// replay is over, or this is no fork). A call that matches no recorded
// result while some remain fails the fork and never runs.
func (f *forkReplay) answer(ctx workflow.Context, activityType string, args []any) (workflow.Future, bool) {
	return f.answerCall(ctx, activityType, args, false)
}

// answerLocal is answer for a local activity. Temporal's history does not
// hold a local activity's input (its marker holds the type and the
// result), so a local activity is matched by its type and its order among
// the original's local activities.
func (f *forkReplay) answerLocal(ctx workflow.Context, activityType string, args []any) (workflow.Future, bool) {
	return f.answerCall(ctx, activityType, args, true)
}

// answerTimer answers a timer of the fork: one the original started with
// the same duration and that fired before the next input to deliver fires
// at once, recorded or not in the fork's history (no timer is started).
// Any other timer is started as usual: the original canceled it, or it had
// not fired at the fork point.
func (f *forkReplay) answerTimer(ctx workflow.Context, d time.Duration) (workflow.Future, bool) {
	if f.in == nil || f.live || d <= 0 {
		return nil, false
	}
	hash := d.String()
	limit := f.limit()
	for i := 0; i < limit; i++ {
		a := f.in.Activities[i]
		if f.used[i] || a.Kind != wire.RecordedTimer || a.Hash != hash {
			continue
		}
		f.used[i] = true
		fut, set := workflow.NewFuture(ctx)
		set.Set(true, nil)
		return fut, true
	}
	return nil, false
}

func (f *forkReplay) answerCall(ctx workflow.Context, activityType string, args []any, local bool) (workflow.Future, bool) {
	if f.in == nil || f.live || !wire.ForkRecorded(activityType) {
		return nil, false
	}
	r := f.r
	kind := ""
	if local {
		kind = wire.RecordedLocalActivity
	}
	payloads, err := converter.GetDefaultDataConverter().ToPayloads(args...)
	if err != nil {
		return nil, false // the SDK refuses it the same way
	}
	var data [][]byte
	for _, p := range payloads.GetPayloads() {
		data = append(data, p.GetData())
	}
	hash := wire.ForkHash(data, r.task.ID, r.task.ContextID)
	limit := f.limit()
	for i := 0; i < limit; i++ {
		a := f.in.Activities[i]
		if f.used[i] || a.Type != activityType || !forkMatches(a, kind, hash) {
			continue
		}
		f.used[i] = true
		fut, set := workflow.NewFuture(ctx)
		if a.Failure != nil {
			set.Set(nil, temporal.NewApplicationErrorWithOptions(a.Failure.Message, a.Failure.Type,
				temporal.ApplicationErrorOptions{NonRetryable: a.Failure.NonRetryable}))
		} else if len(a.Result) == 0 {
			set.Set(nil, nil)
		} else {
			out := &commonpb.Payloads{}
			for _, p := range a.Result {
				out.Payloads = append(out.Payloads, &commonpb.Payload{Metadata: p.Metadata, Data: p.Data})
			}
			set.Set(out, nil)
		}
		return fut, true
	}
	// A fired timer the fork did not start again (a deadline computed
	// otherwise) is no call of the skill: it never makes a mismatch.
	unused := -1
	for i := 0; i < limit; i++ {
		if !f.used[i] && f.in.Activities[i].Kind != wire.RecordedTimer {
			unused = i
			break
		}
	}
	if unused < 0 && (f.cut || f.next >= len(f.in.Inputs) || r.history.total() >= f.in.AtMessage) {
		// Past the fork point: from here the task runs live.
		f.goLive()
		return nil, false
	}
	var why string
	if unused >= 0 {
		why = fmt.Sprintf("its skill calls %s with an input the original's call %d (%s) did not have",
			activityType, unused+1, f.in.Activities[unused].Type)
		if i := slices.IndexFunc(f.in.Activities[unused:limit], func(a wire.RecordedActivity) bool { return a.Type == activityType }); i < 0 {
			why = fmt.Sprintf("its skill calls %s where the original called %s (call %d)",
				activityType, f.in.Activities[unused].Type, unused+1)
		}
	} else {
		why = fmt.Sprintf("its skill calls %s, which the original had not completed before its next input", activityType)
	}
	err = f.refuse(ctx, why)
	fut, set := workflow.NewFuture(ctx)
	set.Set(nil, err)
	return fut, true
}

// forkMatches reports whether recorded activity a answers a call of kind
// with input hash. An activity's hash must be the call's; so must a local
// activity's, when its result named one (wire.LocalForkHash), else it
// answers by its order. A model call (CompleteChat) is answered by a
// recorded one of either kind with its hash: the original and the fork
// make a call a local activity or not by when it came (a turn of a stream,
// a workflow task that answered an update), which a fork, fed its inputs
// at once, cannot repeat.
func forkMatches(a wire.RecordedActivity, kind, hash string) bool {
	switch {
	case a.Kind == wire.RecordedTimer:
		return false
	case a.Kind == kind && kind == wire.RecordedLocalActivity && a.Hash == "":
		return true
	case a.Kind == kind:
		return a.Hash == hash
	}
	return a.Type == wire.ActivityCompleteChat && a.Hash != "" && a.Hash == hash
}

// goLive ends the replay: no more recorded input is delivered, every
// activity runs.
func (f *forkReplay) goLive() {
	if f.live {
		return
	}
	f.live, f.cut = true, true
	if n := len(f.used) - len(slices.DeleteFunc(slices.Clone(f.used), func(u bool) bool { return u })); n > 0 {
		f.r.logger.Info("fork runs live", "recorded results used", n, "of", len(f.used))
	}
}

// refuse fails the fork: the agent changed since the original ran.
func (f *forkReplay) refuse(ctx workflow.Context, why string) error {
	msg := fmt.Sprintf("the agent changed since task %s ran: %s; the fork stopped before running anything live", f.in.From, why)
	err := temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeForkMismatch, nil)
	if f.refused == "" {
		f.refused = msg
		f.r.task.Metadata[wire.ForkMetadataKey] = f.origin()
		f.r.failWith(ctx, err)
	}
	f.live, f.cut = true, true
	return err
}

// forkQuorumChange is the workflow.GetVersion change ID of a fork's
// replay going on after a recorded decision that settles no approval:
// before it, the replay waited for a status change that never came.
const forkQuorumChange = "a2aflow.fork-quorum"

// replaying is whether the fork is delivering its recorded inputs: the
// fork point is not reached yet.
func (f *forkReplay) replaying() bool { return f.in != nil && !f.cut && !f.live }

// settled is whether the fork has reached its fork point and then stopped
// to wait or ended: what [wire.UpdateForkSettled] waits for.
func (f *forkReplay) settled() bool {
	r := f.r
	return r.task.Status.State.Terminal() || (!f.replaying() && wire.Interrupted(r.task.Status.State))
}

// register sets the handler of wire.UpdateForkSettled, which the API
// starts a fork with.
func (f *forkReplay) register(ctx workflow.Context) error {
	r := f.r
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateForkSettled, func(ctx workflow.Context, in wire.ForkSettledInput) (wire.TaskUpdateResult, error) {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
		if err := workflow.Await(ctx, func() bool { return f.settled() || r.continuing }); err != nil {
			return wire.TaskUpdateResult{}, err
		}
		res := r.updateResult(f.settled())
		if res.Settled {
			res.Task = r.boundedSnapshot(in.HistoryLength, wire.MaxForkResultTaskBytes)
		}
		return res, nil
	}, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, in wire.ForkSettledInput) error {
			if err := r.checkAccessOrFirst(in.Agent, in.Owner); err != nil {
				return err
			}
			if f.in == nil {
				return temporal.NewApplicationError(fmt.Sprintf("task %s is no fork", r.task.ID), wire.ErrTypeUnsupportedOperation)
			}
			return nil
		},
		Description: "a2aflow: answer once the fork reached its fork point",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateForkSettled, err)
	}
	return nil
}

// afterReplay runs start now, or, in a fork with merged writes (a fork
// the API started since forks replay in one workflow task) that replays
// its recorded inputs, once the replay is over: coroutines of the run that
// have nothing to do while it replays (the merged writes, the watch of the
// history's limits) start then, so that each pass of the replay's
// workflow task calls fewer coroutines.
func (f *forkReplay) afterReplay(start func()) {
	if !f.r.recording.MergedWrites() || !f.replaying() {
		start()
		return
	}
	f.later = append(f.later, start)
}

// replayOver starts what waited for the replay's end.
func (f *forkReplay) replayOver() {
	later := f.later
	f.later = nil
	for _, start := range later {
		start()
	}
}

// deliverInputs delivers the recorded inputs, each when the task waits for
// input, until the fork point. It runs in the skill's context (the
// activities of the decisions it delivers are answered from the records).
func (f *forkReplay) deliverInputs(ctx workflow.Context) {
	if f.in == nil || f.cut {
		f.replayOver()
		return
	}
	r := f.r
	stopped := func() bool { return r.task.Status.State.Terminal() || r.failure != nil || f.cut }
	replay := func(ctx workflow.Context) {
		for f.next < len(f.in.Inputs) {
			if err := workflow.Await(ctx, func() bool { return stopped() || wire.Interrupted(r.task.Status.State) }); err != nil || stopped() {
				return
			}
			if r.history.total() >= f.in.AtMessage {
				break
			}
			seq := r.statusSeq
			held := r.approvals.heldDecisions()
			if err := f.deliver(ctx, f.in.Inputs[f.next]); err != nil {
				_ = f.refuse(ctx, fmt.Sprintf("its recorded input %d (%s) is refused: %s", f.next+1, f.in.Inputs[f.next].Update, userMessage(err)))
				return
			}
			f.next++
			after := r.statusSeq
			if after == seq && r.approvals.heldDecisions() > held &&
				workflow.GetVersion(ctx, forkQuorumChange, workflow.DefaultVersion, 1) == 1 {
				// A decision that settles nothing (the first of the two
				// an approval's quorum needs, or one for an approval not
				// asked yet): the task waits on, as the original did.
				continue
			}
			// The input moves the task on: wait for its next status.
			if err := workflow.Await(ctx, func() bool { return stopped() || r.statusSeq > after }); err != nil {
				return
			}
		}
		f.cut = true
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		replay(ctx)
		f.replayOver() // not deferred: not when the dispatcher closes the coroutine
	})
}

// deliver hands one recorded input to the task as its update would, with
// the original's IDs replaced by the fork's.
func (f *forkReplay) deliver(ctx workflow.Context, in wire.RecordedInput) error {
	r := f.r
	arg := wire.ForkArg(in.Arg, f.in.From, r.task.ID, f.in.FromContextID, r.task.ContextID)
	switch in.Update {
	case wire.UpdateSendMessage:
		var m wire.SendMessageInput
		err := json.Unmarshal(arg, &m) //workflowcheck:ignore
		if err != nil {
			return err
		}
		m.ReturnImmediately, m.WantTask, m.HistoryLength, m.HistorySince, m.PushConfig = true, false, nil, false, nil
		if m.Message != nil {
			m.Message.TaskID, m.Message.ContextID = "", ""
		}
		if err := r.validateSendMessage(ctx, m); err != nil {
			return err
		}
		_, err = r.sendMessage(ctx, m)
		return err
	case wire.UpdateDecideApproval:
		var d wire.DecideApprovalInput
		err := json.Unmarshal(arg, &d) //workflowcheck:ignore
		if err != nil {
			return err
		}
		r.updates++
		_, err = r.decide(ctx, d)
		return err
	case wire.UpdateCompleteWaitpoint:
		var c wire.CompleteWaitpointInput
		err := json.Unmarshal(arg, &c) //workflowcheck:ignore
		if err != nil {
			return err
		}
		c.Token = nil // the original's token opens the original's waitpoint only
		if err := r.validateWaitpointCompletion(ctx, c); err != nil {
			return err
		}
		r.updates++
		_, err = r.completeWaitpoint(ctx, c)
		return err
	}
	return fmt.Errorf("unknown input %s", in.Update)
}

// forkFirstMessage is the fork's first message as its history shows it:
// the original's, listing the original in referenceTaskIds. The skill
// reads the original's unchanged (Task.ReferenceTaskIDs is the skill's
// input).
func forkFirstMessage(m *a2a.Message, from a2a.TaskID) *a2a.Message {
	c := *m
	c.ReferenceTasks = append(slices.Clone(m.ReferenceTasks), from)
	return &c
}
