package workflows_test

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// upsertCall is one UpsertTypedSearchAttributes of a task: the A2ATaskState
// it writes ("" none) and whether it writes A2APendingApprovals.
type upsertCall struct {
	State   string
	Pending bool
}

func recordUpsertCalls(env *testsuite.TestWorkflowEnvironment) *[]upsertCall {
	var calls []upsertCall
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		state, _ := sa.GetKeyword(wire.TaskStateKey)
		calls = append(calls, upsertCall{State: state, Pending: sa.ContainsKey(wire.PendingApprovalsKey)})
	})
	return &calls
}

// writesInput is the input of a task started by the API with the writes
// of mode: "per-change", "merged" or "lean".
func writesInput(mode, agent string, first *a2a.Message) wire.TaskInput {
	in := wire.TaskInput{Agent: agent, ContextID: testContextID, LongTasks: true, Message: first}
	switch mode {
	case "merged":
		in.MergedWrites = true
	case "lean":
		in.MergedWrites, in.LeanWrites = true, true
	}
	return in
}

// TestLeanWritesCompletion: with lean writes (TaskInput.LeanWrites) a task
// that completes while visibility has it working writes no A2ATaskState;
// one that completes from another state (a turn that answered a question
// and completed in the same workflow task) writes completed.
func TestLeanWritesCompletion(t *testing.T) {
	// echo completes in its first turn; worker answers a question, works
	// ten minutes (working is written), then completes; asker completes in
	// the turn of its answer.
	echo := &workflows.Agent{Name: "echo", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		t.Reply(t.Text())
		return nil
	}}
	worker := &workflows.Agent{Name: "worker", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Ask(ctx, "go", "Go?"); err != nil {
			return err
		}
		if err := workflow.Sleep(ctx, 10*time.Minute); err != nil {
			return err
		}
		t.Reply("Done.")
		return nil
	}}
	asker := &workflows.Agent{Name: "asker", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := t.Ask(ctx, "name", "Name?")
		if err != nil {
			return err
		}
		t.Reply("Hello " + workflows.MessageText(answer))
		return nil
	}}
	const (
		working  = string(a2a.TaskStateWorking)
		input    = string(a2a.TaskStateInputRequired)
		complete = string(a2a.TaskStateCompleted)
	)
	for _, tt := range []struct {
		agent   string
		answers int
		want    map[string][]string // by mode: A2ATaskState upserts
	}{
		{"echo", 0, map[string][]string{"per-change": {working, complete}, "merged": {complete}, "lean": nil}},
		{"worker", 1, map[string][]string{"per-change": {working, input, working, complete}, "merged": {input, working, complete}, "lean": {input, working}}},
		{"asker", 1, map[string][]string{"per-change": {working, input, working, complete}, "merged": {input, complete}, "lean": {input, complete}}},
	} {
		for _, mode := range []string{"per-change", "merged", "lean"} {
			t.Run(tt.agent+"/"+mode, func(t *testing.T) {
				env := newTaskEnv(t, echo, worker, asker)
				calls := recordUpsertCalls(env)
				for i := range tt.answers {
					env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("yes")}) }, time.Duration(i+1)*time.Minute)
				}
				env.ExecuteWorkflow(wire.TaskWorkflowName, writesInput(mode, tt.agent, userText("hi")))
				final := finalTask(t, env)
				if final.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("final state %s, want completed", final.Status.State)
				}
				var states []string
				for _, c := range *calls {
					states = append(states, c.State)
				}
				if diff := cmp.Diff(tt.want[mode], states); diff != "" {
					t.Errorf("%s upserts (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
				}
			})
		}
	}
}

// TestLeanWritesApprovals: with lean writes the approvals' search
// attributes go out in the upsert of the task's state, one upsert per
// workflow task.
func TestLeanWritesApprovals(t *testing.T) {
	req := request(func(r *workflows.ApprovalRequest) {
		r.Timeout, r.OnTimeout, r.EscalateTo, r.EscalateTimeout = time.Hour, workflows.EscalateAtDeadline, []string{"managers", "directors"}, 2*time.Hour
	})
	for _, tt := range []struct {
		mode string
		want []upsertCall
	}{
		// Asked (input-required), escalated, decided (working), then the
		// payer's hour of work and its completion.
		{"merged", []upsertCall{
			{Pending: true}, {State: string(a2a.TaskStateInputRequired)},
			{Pending: true},
			{Pending: true}, {State: string(a2a.TaskStateWorking)},
			{State: string(a2a.TaskStateCompleted)},
		}},
		{"lean", []upsertCall{
			{State: string(a2a.TaskStateInputRequired), Pending: true},
			{Pending: true},
			{State: string(a2a.TaskStateWorking), Pending: true},
		}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			var got approvalResult
			env := newApprovalEnv(t, payer(req, 0, &got))
			calls := recordUpsertCalls(env)
			env.RegisterDelayedCallback(func() { decide(env, by("max", []string{"directors"}, true, "ok")) }, 2*time.Hour)
			env.ExecuteWorkflow(wire.TaskWorkflowName, writesInput(tt.mode, "payer", userText("pay")))
			final := finalTask(t, env)
			if final.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("final state %s, want completed", final.Status.State)
			}
			if diff := cmp.Diff(tt.want, *calls); diff != "" {
				t.Errorf("upserts (-want +got):\n%s", diff)
			}
		})
	}
}
