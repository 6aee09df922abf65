package workflows_test

import (
	"strings"
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
// of mode: "per-change", "merged" or "lean", in its Recording; with
// " booleans" after the mode, the JSON of an input recorded before
// Recording, which said the same with a boolean per change. "lean alone"
// has lean writes without merged writes, which records per change.
func writesInput(mode, agent string, first *a2a.Message) any {
	base, booleans := strings.CutSuffix(mode, " booleans")
	if booleans {
		in := map[string]any{"Agent": agent, "ContextID": testContextID, "Message": first, "LongTasks": true}
		switch base {
		case "merged":
			in["MergedWrites"] = true
		case "lean":
			in["MergedWrites"], in["LeanWrites"] = true, true
		case "lean alone":
			in["LeanWrites"] = true
		}
		return in
	}
	in := wire.TaskInput{Agent: agent, ContextID: testContextID, Recording: wire.LongTasks, Message: first}
	switch base {
	case "merged":
		in.Recording |= wire.MergedWrites
	case "lean":
		in.Recording |= wire.MergedWrites | wire.LeanWrites
	case "lean alone":
		in.Recording |= wire.LeanWrites
	}
	return in
}

// writesModes are the modes of writesInput: each way to say it, and the
// mode whose writes it makes.
var writesModes = []struct{ mode, writes string }{
	{"per-change", "per-change"}, {"merged", "merged"}, {"lean", "lean"}, {"lean alone", "per-change"},
	{"per-change booleans", "per-change"}, {"merged booleans", "merged"}, {"lean booleans", "lean"}, {"lean alone booleans", "per-change"},
}

// TestLeanWritesCompletion: with lean writes (wire.LeanWrites) a task
// that completes while visibility has it working writes no A2ATaskState;
// one that completes from another state (a turn that answered a question
// and completed in the same workflow task) writes completed. An input
// recorded with the booleans of before wire.Recording writes the same.
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
		for _, m := range writesModes {
			t.Run(tt.agent+"/"+m.mode, func(t *testing.T) {
				env := newTaskEnv(t, echo, worker, asker)
				calls := recordUpsertCalls(env)
				for i := range tt.answers {
					env.RegisterDelayedCallback(func() { sendMessage(env, wire.SendMessageInput{Message: userText("yes")}) }, time.Duration(i+1)*time.Minute)
				}
				env.ExecuteWorkflow(wire.TaskWorkflowName, writesInput(m.mode, tt.agent, userText("hi")))
				final := finalTask(t, env)
				if final.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("final state %s, want completed", final.Status.State)
				}
				var states []string
				for _, c := range *calls {
					states = append(states, c.State)
				}
				if diff := cmp.Diff(tt.want[m.writes], states); diff != "" {
					t.Errorf("%s upserts (-want +got):\n%s", wire.TaskStateKey.GetName(), diff)
				}
			})
		}
	}
}

// TestLeanWritesApprovals: with lean writes the approvals' search
// attributes go out in the upsert of the task's state, one upsert per
// workflow task, whether the input says lean writes in its Recording or
// with the booleans of before.
func TestLeanWritesApprovals(t *testing.T) {
	leanApprovalUpserts := []upsertCall{
		{State: string(a2a.TaskStateInputRequired), Pending: true},
		{Pending: true},
		{State: string(a2a.TaskStateWorking), Pending: true},
	}
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
		{"lean", leanApprovalUpserts},
		{"lean booleans", leanApprovalUpserts},
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
