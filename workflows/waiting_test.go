package workflows_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// recordWaitingMemos records each memo upsert's a2aflow.waiting key: the
// memo's JSON, "removed" for a nil value (the key's removal); upserts
// without the key are not recorded.
func recordWaitingMemos(env *testsuite.TestWorkflowEnvironment) *[]string {
	var got []string
	env.OnUpsertMemo(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		memo := args.Get(0).(map[string]any)
		v, ok := memo[wire.WaitingMemoKey]
		switch {
		case !ok:
		case v == nil:
			got = append(got, "removed")
		default:
			b, _ := json.Marshal(v)
			got = append(got, string(b))
		}
	})
	return &got
}

// inputMemo is the waiting memo of a question, as recordWaitingMemos has it.
func inputMemo(question string) string {
	b, _ := json.Marshal(wire.Waiting{Kind: wire.WaitingForInput, Question: question})
	return string(b)
}

// TestWaitingMemo: a task recording wire.WaitingMemo writes what it waits
// for in its memo at each park (the counter's question changes with every
// answer: one write a park, none for the turn between), and removes it in
// one upsert when it moves on (here, when it completes).
func TestWaitingMemo(t *testing.T) {
	env := newTaskEnv(t, counter())
	memos := recordWaitingMemos(env)
	env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("a")}) }, time.Minute)
	env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("done")}) }, 2*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "counter", ContextID: testContextID,
		Message: userText("count"), Recording: wire.CurrentRecording})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	want := []string{inputMemo("Next? (0 so far)"), inputMemo("Next? (1 so far)"), "removed"}
	if diff := cmp.Diff(want, *memos); diff != "" {
		t.Errorf("waiting memos (-want +got):\n%s", diff)
	}
}

// TestWaitingMemoOfApprovals: a task waiting for an approval says its ID,
// title, groups, quorum and deadline; a decision that does not reach the
// quorum writes nothing (the memo holds no counts); the approval reached,
// the task moves on and the memo is removed.
func TestWaitingMemoOfApprovals(t *testing.T) {
	var got approvalResult
	req := request(func(r *workflows.ApprovalRequest) { r.Required, r.Groups = 2, []string{"finance", "managers"} })
	env := newApprovalEnv(t, payer(req, 0, &got))
	memos := recordWaitingMemos(env)
	scheduleDecisions(env, []scripted{
		{at: time.Minute, in: by("ann", finance, true, "")},
		{at: 2 * time.Minute, in: by("max", managers, true, "")},
	})
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", ContextID: testContextID,
		Message: userText("pay"), Recording: wire.CurrentRecording})
	if err := env.GetWorkflowError(); err != nil || !got.returned || !got.approval.Approved() {
		t.Fatalf("task: %v, approval %+v", err, got.approval)
	}
	b, _ := json.Marshal(wire.Waiting{Kind: wire.WaitingForApproval, Question: `Waiting for approval: "Pay invoice 42?" by finance or managers.`,
		Approvals: []wire.WaitingApproval{{ID: testApprovalID, Title: "Pay invoice 42?", Groups: []string{"finance", "managers"},
			Required: 2, Deadline: deadline(24 * time.Hour)}}})
	if diff := cmp.Diff([]string{string(b), "removed"}, *memos); diff != "" {
		t.Errorf("waiting memos (-want +got):\n%s", diff)
	}
}

// TestWaitingMemoCrossesContinueAsNew: what the memo says crosses
// continue-as-new (continuedTask.Waiting): the next run of a task parked
// on a question does not write it again, writes the next question and
// removes it when the task moves on. A task
// recorded before wire.WaitingMemo writes it too once its worker runs this
// code (workflow.GetVersion), and its next run records wire.WaitingMemo.
func TestWaitingMemoCrossesContinueAsNew(t *testing.T) {
	for _, tt := range []struct {
		name      string
		recording wire.Recording
	}{
		{"current", wire.CurrentRecording},
		{"recorded before", wire.LongTasks | wire.MergedWrites | wire.LeanWrites | wire.LocalModelCalls},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, counter())
			memos := recordWaitingMemos(env)
			env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, time.Minute)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "counter", ContextID: testContextID,
				Message: userText("count"), Recording: tt.recording})
			in := continuedInput(t, env)
			if !in.RecordingLevel().WaitingMemo() {
				t.Errorf("the next run records %05b, without the waiting memo", in.RecordingLevel())
			}
			if diff := cmp.Diff([]string{inputMemo("Next? (0 so far)")}, *memos); diff != "" {
				t.Errorf("first run's waiting memos (-want +got):\n%s", diff)
			}
			if c := in.Continued.Waiting; c == nil || c.Question != "Next? (0 so far)" {
				t.Fatalf("the continued state's waiting memo: %+v", c)
			}

			env2 := newTaskEnv(t, counter())
			memos2 := recordWaitingMemos(env2)
			env2.RegisterDelayedCallback(func() { sendMessage(env2, wire.SendMessageInput{Message: userText("a")}) }, time.Minute)
			env2.RegisterDelayedCallback(func() { sendMessage(env2, wire.SendMessageInput{Message: userText("done")}) }, 2*time.Minute)
			env2.ExecuteWorkflow(wire.TaskWorkflowName, in)
			if err := env2.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			// The question still asked is not written again; the next is.
			if diff := cmp.Diff([]string{inputMemo("Next? (1 so far)"), "removed"}, *memos2); diff != "" {
				t.Errorf("next run's waiting memos (-want +got):\n%s", diff)
			}
		})
	}
}
