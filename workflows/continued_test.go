package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// counterState is the resumable state of the counter agent.
type counterState struct {
	Answers []string `json:"answers"`
}

// counter asks "Next?" until the user says "done", then replies with every
// answer; each wait is resumable, so the task may continue as new there.
func counter() *workflows.Agent {
	return &workflows.Agent{Name: "counter", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		var s counterState
		t.Resume(&s)
		for {
			m, err := t.Ask(ctx, "next", fmt.Sprintf("Next? (%d so far)", len(s.Answers)), workflows.Resumable(&s))
			if err != nil {
				return err
			}
			text := workflows.MessageText(m)
			if text == "done" {
				t.Reply(fmt.Sprint(s.Answers))
				return nil
			}
			s.Answers = append(s.Answers, text)
		}
	}}
}

// continuedInput returns the input a workflow that continued as new handed
// to its next run, failing the test when it did not continue as new.
func continuedInput(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.RunInput {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not end")
	}
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow ended with %v, want continue-as-new", err)
	}
	var in workflows.RunInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatalf("decode the continued input: %v", err)
	}
	if in.Continued == nil {
		t.Fatal("continued input carries no state")
	}
	return in
}

// TestContinueAsNewMidConversation: a task continues as new while it waits
// for an answer; the next run keeps the conversation (history, event
// numbering, push configs, the question), does not ask again, recognises a
// retried message of the first run, and completes with every answer.
func TestContinueAsNewMidConversation(t *testing.T) {
	env := newTaskEnv(t, counter())
	first, a, b := userText("count"), userText("a"), userText("b")
	var sendA, sendB, addPush *update
	env.RegisterDelayedCallback(func() { sendA = sendMessage(env, wire.SendMessageInput{Message: a}) }, time.Minute)
	env.RegisterDelayedCallback(func() {
		addPush = &update{env: env}
		env.UpdateWorkflow(wire.UpdateCreatePushConfig, "push-1", addPush.callbacks(), wire.CreatePushConfigInput{
			Config: &a2a.PushConfig{ID: "hook", URL: "https://hooks.example.com/a2a"},
		})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() { sendB = sendMessage(env, wire.SendMessageInput{Message: b}) }, 3*time.Minute)
	// Temporal suggests continue-as-new: the task is waiting, so it does.
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 4*time.Minute)
	env.RegisterActivityWithOptions(func(context.Context, wire.PushDelivery) error { return nil },
		activity.RegisterOptions{Name: wire.ActivityDeliverPush})

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "counter", ContextID: testContextID, Message: first})
	for name, u := range map[string]*update{"a": sendA, "b": sendB, "push": addPush} {
		if u == nil || !u.done || u.err != nil {
			t.Fatalf("update %s = %+v, want completed", name, u)
		}
	}
	in := continuedInput(t, env)
	c := in.Continued

	wantHistory := []messageView{user("count"), question("next", "Next? (0 so far)"), user("a"),
		question("next", "Next? (1 so far)"), user("b"), question("next", "Next? (2 so far)")}
	if diff := cmp.Diff(wantHistory, viewHistory(c.Task.History)); diff != "" {
		t.Errorf("carried history (-want +got):\n%s", diff)
	}
	if c.Task.Status.State != a2a.TaskStateInputRequired || len(c.Inbox) != 0 || c.Received != 3 || c.Taken != 3 {
		t.Errorf("carried state %s, inbox %d, received %d, taken %d; want input-required, 0, 3, 3",
			c.Task.Status.State, len(c.Inbox), c.Received, c.Taken)
	}
	if len(c.Push) != 1 || c.Push[0].Config.ID != "hook" || c.Push[0].After == 0 {
		t.Errorf("carried push configs %+v, want hook with its progress", c.Push)
	}
	if c.Skill == nil || c.Skill.Wait == nil || c.Skill.Wait.Kind != "input" || c.Skill.Wait.Slot != "next" {
		t.Fatalf("carried skill %+v, want a wait for slot next", c.Skill)
	}
	var s counterState
	if err := json.Unmarshal(c.Skill.State, &s); err != nil || len(s.Answers) != 2 {
		t.Errorf("carried skill state %s (%v), want two answers", c.Skill.State, err)
	}
	if c.LastSeq == 0 || len(c.Events) == 0 || c.Events[len(c.Events)-1].Seq != c.LastSeq {
		t.Errorf("carried events end at %d, last seq %d", c.Events[len(c.Events)-1].Seq, c.LastSeq)
	}

	// The next run.
	env2 := newTaskEnv(t, counter())
	env2.RegisterActivityWithOptions(func(context.Context, wire.PushDelivery) error { return nil },
		activity.RegisterOptions{Name: wire.ActivityDeliverPush})
	var atStart *a2a.Task
	var retried, done *update
	env2.RegisterDelayedCallback(func() {
		atStart = getTask(t, env2, nil)
		retried = sendMessage(env2, wire.SendMessageInput{Message: b}) // a retry of the first run's message
	}, time.Minute)
	env2.RegisterDelayedCallback(func() { done = sendMessage(env2, wire.SendMessageInput{Message: userText("done")}) }, 2*time.Minute)
	start2 := env2.Now()
	env2.ExecuteWorkflow(wire.TaskWorkflowName, in)

	if diff := cmp.Diff(wantHistory, viewHistory(atStart.History)); diff != "" {
		t.Errorf("history at the start of the next run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(status(a2a.TaskStateInputRequired, ptr(question("next", "Next? (2 so far)"))), viewStatus(atStart)); diff != "" {
		t.Errorf("status at the start of the next run (-want +got):\n%s", diff)
	}
	var appErr *temporal.ApplicationError
	if retried == nil || !errors.As(retried.rejected, &appErr) || appErr.Type() != wire.ErrTypeDuplicateMessage {
		t.Errorf("retry of a first-run message: %+v, want rejected as %s", retried, wire.ErrTypeDuplicateMessage)
	}
	completedTask(t, "done", done, start2, 2*time.Minute)
	final := finalTask(t, env2)
	if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("[a b]"))), viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	if n := len(final.History); n != len(wantHistory)+2 {
		t.Errorf("final history has %d messages, want %d", n, len(wantHistory)+2)
	}
	var snap wire.TaskSnapshot
	if err := env2.GetWorkflowResult(&snap); err != nil || snap.EventSeq <= c.LastSeq {
		t.Errorf("final event seq %d (%v), want after the carried %d", snap.EventSeq, err, c.LastSeq)
	}
}

// approver is an agent that asks finance to approve, escalating to
// managers after 48 hours, with a resumable wait.
func approver() *workflows.Agent {
	return &workflows.Agent{Name: "approver", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		state := map[string]string{"claim": workflows.MessageText(t.Message())}
		a, err := t.Approve(ctx, workflows.ApprovalRequest{
			Title: "Pay " + state["claim"], Groups: []string{"finance"},
			Timeout: 48 * time.Hour, OnTimeout: workflows.EscalateAtDeadline,
			EscalateTo: []string{"managers"}, EscalateTimeout: 24 * time.Hour,
		}, workflows.Resumable(state))
		if err != nil {
			return err
		}
		last := a.Decisions[len(a.Decisions)-1]
		t.Reply(fmt.Sprintf("%s by %s (escalated %v)", a.State, last.Approver, a.Escalated))
		return nil
	}}
}

// TestContinueAsNewMidApproval: a task continues as new while an approval
// waits; the next run keeps the approval with its deadline, escalates it at
// the deadline the first run set, sends no second notice for the first
// groups, and takes the managers' decision.
func TestContinueAsNewMidApproval(t *testing.T) {
	var mu sync.Mutex
	var notices []string
	notify := func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterActivityWithOptions(func(_ context.Context, n wire.ApprovalNotice) error {
			mu.Lock()
			defer mu.Unlock()
			notices = append(notices, n.Group)
			return nil
		}, activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
	}
	env := newTaskEnv(t, approver())
	env.SetStartTime(t0)
	notify(env)
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 10*time.Hour)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "approver", ContextID: testContextID, Message: userText("invoice 7")})
	in := continuedInput(t, env)
	c := in.Continued
	if len(c.Approvals.List) != 1 || c.Approvals.List[0].State != workflows.ApprovalPending || c.Approvals.Count != 1 {
		t.Fatalf("carried approvals %+v, want one pending", c.Approvals)
	}
	deadline := c.Approvals.List[0].Deadline
	if deadline == nil || !deadline.Equal(t0.Add(48*time.Hour)) {
		t.Errorf("carried deadline %v, want %v", deadline, t0.Add(48*time.Hour))
	}
	if c.Task.Status.State != a2a.TaskStateInputRequired || !c.Approvals.Waiting {
		t.Errorf("carried status %s (waiting for approval %v), want input-required", c.Task.Status.State, c.Approvals.Waiting)
	}

	env2 := newTaskEnv(t, approver())
	env2.SetStartTime(t0.Add(10 * time.Hour))
	notify(env2)
	var early, managers *decisionUpdate
	// Before the deadline only finance decides.
	env2.RegisterDelayedCallback(func() {
		early = decide(env2, wire.DecideApprovalInput{ApprovalID: c.Approvals.List[0].ID, Approved: true,
			Approver: "mo", ApproverGroups: []string{"managers"}})
	}, time.Hour)
	// 48 h after the first run started the request went to managers.
	env2.RegisterDelayedCallback(func() {
		managers = decide(env2, wire.DecideApprovalInput{ApprovalID: c.Approvals.List[0].ID, Approved: true,
			Approver: "mo", ApproverGroups: []string{"managers"}})
	}, 39*time.Hour)
	env2.ExecuteWorkflow(wire.TaskWorkflowName, in)

	if early == nil || early.rejected == nil {
		t.Errorf("a manager's decision before the escalation was %+v, want refused", early)
	}
	if managers == nil || managers.rejected != nil || !managers.done {
		t.Fatalf("the managers' decision after the escalation = %+v, want accepted", managers)
	}
	if got := managers.at.Sub(t0); got != 49*time.Hour {
		t.Errorf("managers decided at %v, want 49h", got)
	}
	final := finalTask(t, env2)
	if diff := cmp.Diff(status(a2a.TaskStateCompleted, ptr(agent("approved by mo (escalated true)"))), viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"finance", "managers"}, notices); diff != "" {
		t.Errorf("webhook notices over both runs (-want +got):\n%s", diff)
	}
}

// TestNoContinueAsNewWithoutAResumablePoint: a skill that never offers a
// resumable point does not continue as new, and fails with ErrHistoryLimit
// near Temporal's limits instead of being terminated.
func TestNoContinueAsNewWithoutAResumablePoint(t *testing.T) {
	env := newTaskEnv(t, &workflows.Agent{Name: "plain", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		for {
			if _, err := t.Ask(ctx, "x", "Again?"); err != nil {
				return err
			}
		}
	}})
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, time.Minute)
	env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("more")}) }, 2*time.Minute)
	env.RegisterDelayedCallback(func() { env.SetCurrentHistoryLength(46_000) }, 3*time.Minute)
	env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("more")}) }, 4*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "plain", Message: userText("go")})

	final := finalTask(t, env)
	if final.Status.State != a2a.TaskStateFailed {
		t.Fatalf("final state %s, want failed", final.Status.State)
	}
	if text := workflows.MessageText(final.Status.Message); !containsAll(text, "history limit", "no point to continue as new") {
		t.Errorf("final message %q, want it to name the history limit", text)
	}
}

// TestCheckpointContinuesAsNew: a skill's Checkpoint continues the task as
// new when due, and a blocking sender waiting for the skill is released
// unsettled rather than cut off.
func TestCheckpointContinuesAsNew(t *testing.T) {
	env := newTaskEnv(t, &workflows.Agent{Name: "looper", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		var n int
		t.Resume(&n)
		for ; n < 10; n++ {
			if err := workflow.Sleep(ctx, time.Hour); err != nil {
				return err
			}
			if err := t.Checkpoint(ctx, n+1); err != nil {
				return err
			}
		}
		return nil
	}})
	var blocked *update
	env.RegisterDelayedCallback(func() { blocked = sendMessage(env, wire.SendMessageInput{Message: userText("hurry")}) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 150*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "looper", Message: userText("go")})

	in := continuedInput(t, env)
	var n int
	if err := json.Unmarshal(in.Continued.Skill.State, &n); err != nil || n != 3 {
		t.Errorf("carried checkpoint %s (%v), want 3", in.Continued.Skill.State, err)
	}
	if len(in.Continued.Inbox) != 1 || workflows.MessageText(in.Continued.Inbox[0]) != "hurry" {
		t.Errorf("carried inbox %v, want the queued message", in.Continued.Inbox)
	}
	if blocked == nil || !blocked.done || blocked.err != nil || blocked.result.Settled {
		t.Errorf("blocked sender: %+v, want released unsettled", blocked)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestIdleTimeoutCancelsAnAbandonedTask: an agent's IdleTimeout cancels a
// task left waiting for the user's answer longer, saying why; an answer in
// time resets nothing but that question's wait.
func TestIdleTimeoutCancelsAnAbandonedTask(t *testing.T) {
	idle := counter()
	idle.IdleTimeout = 72 * time.Hour
	env := newTaskEnv(t, idle)
	var answer *update
	env.RegisterDelayedCallback(func() { answer = sendMessage(env, wire.SendMessageInput{Message: userText("a")}) }, 71*time.Hour)
	start := env.Now()
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "counter", Message: userText("count")})

	completedTask(t, "answer in time", answer, start, 71*time.Hour)
	final := finalTask(t, env)
	want := status(a2a.TaskStateCanceled, ptr(agent("No answer came for 72h0m0s: the task was canceled.")))
	if diff := cmp.Diff(want, viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	if got := env.Now().Sub(start); got != 143*time.Hour {
		t.Errorf("canceled after %v, want 143h (72h after the last answer)", got)
	}
}

// TestNoFirstMessageIsNoTask: a workflow started without its first message
// (its Update-with-Start update refused, or lost with no worker) is no
// task: GetTask does not find it, and it ends failed with
// ErrTypeNoFirstMessage after the grace period instead of waiting forever.
func TestNoFirstMessageIsNoTask(t *testing.T) {
	env := newTaskEnv(t, counter())
	var getErr error
	env.RegisterDelayedCallback(func() {
		_, getErr = env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
	}, time.Minute)
	start := env.Now()
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "counter"})

	var appErr *temporal.ApplicationError
	if !errors.As(getErr, &appErr) || appErr.Type() != wire.ErrTypeTaskNotFound {
		t.Errorf("GetTask of a workflow without a message: %v, want %s", getErr, wire.ErrTypeTaskNotFound)
	}
	if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeNoFirstMessage {
		t.Errorf("workflow ended with %v, want %s", err, wire.ErrTypeNoFirstMessage)
	}
	if got := env.Now().Sub(start); got != 10*time.Minute {
		t.Errorf("it ended after %v, want the 10 minute grace", got)
	}
}

// TestContinuedRunKeepsItsRecording: a continued run records as the run
// before did: the continue-as-new input carries the task's recording level
// (with wire.LongTasks, which a continued run always has), in Recording,
// whether the first run's input said it in Recording or, recorded before
// Recording, with a boolean per change; and the next run records at it.
// A run recorded before wire.WaitingMemo that turned it on at its park
// (workflow.GetVersion, waiting.go) hands it on too.
func TestContinuedRunKeepsItsRecording(t *testing.T) {
	lean := wire.MergedWrites | wire.LeanWrites | wire.LocalModelCalls
	for _, tt := range []struct {
		name  string
		input any
	}{
		{"recording", wire.TaskInput{Agent: "counter", ContextID: testContextID, Message: userText("count"), Recording: lean}},
		{"booleans", map[string]any{"Agent": "counter", "ContextID": testContextID, "Message": userText("count"),
			"MergedWrites": true, "LeanWrites": true, "LocalModelCalls": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, counter())
			env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, time.Minute)
			env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("a")}) }, 2*time.Minute)
			env.ExecuteWorkflow(wire.TaskWorkflowName, tt.input)
			in := continuedInput(t, env)
			if want := lean | wire.LongTasks | wire.WaitingMemo; in.Recording != want || in.RecordingLevel() != want {
				t.Fatalf("continued with Recording %04b (level %04b), want %04b", in.Recording, in.RecordingLevel(), want)
			}

			// The next run writes as a lean one: its state once per
			// workflow task, and not the completion from working.
			env2 := newTaskEnv(t, counter())
			calls := recordUpsertCalls(env2)
			env2.RegisterDelayedCallback(func() { sendMessage(env2, wire.SendMessageInput{Message: userText("b")}) }, time.Minute)
			env2.RegisterDelayedCallback(func() { sendMessage(env2, wire.SendMessageInput{Message: userText("done")}) }, 2*time.Minute)
			env2.ExecuteWorkflow(wire.TaskWorkflowName, in)
			if final := finalTask(t, env2); final.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("final state %s", final.Status.State)
			}
			var states []string
			for _, c := range *calls {
				states = append(states, c.State)
			}
			// Each answer is taken and asked again in one workflow task;
			// the last completes from input-required.
			if diff := cmp.Diff([]string{string(a2a.TaskStateCompleted)}, states); diff != "" {
				t.Errorf("%s upserts of the next run (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
			}
		})
	}
}
