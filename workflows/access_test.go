package workflows_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// TestAccessRule drives every way into a task owned by alice, whose skill
// waits for an approval by finance, as each kind of caller: the rule of
// access.go answers in the workflow itself.
func TestAccessRule(t *testing.T) {
	noGroups := wire.NoApproverGroups
	tests := []struct {
		name string
		// act runs at 10 minutes, once the approval waits.
		act func(env *testsuite.TestWorkflowEnvironment) func() (accepted bool, err error)
		// wantType is the refusal's error type, "" when it is let through.
		wantType string
	}{
		{
			name: "mallory's decision message on alice's task: not found, nothing recorded",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return sendAs(env, wire.SendMessageInput{Owner: "mallory", Message: decisionMessage(testApprovalID, true, "mine"),
					Approver: "mallory", ApproverGroups: noGroups})
			},
			wantType: wire.ErrTypeApprovalNotFound,
		},
		{
			name: "mallory's early decision for an approval to come: not found",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return sendAs(env, wire.SendMessageInput{Owner: "mallory", Message: decisionMessage(testTaskID+"-approval-2", true, ""),
					Approver: "mallory", ApproverGroups: noGroups})
			},
			wantType: wire.ErrTypeApprovalNotFound,
		},
		{
			name: "mallory's plain message: task not found",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return sendAs(env, wire.SendMessageInput{Owner: "mallory", Message: userText("hello")})
			},
			wantType: wire.ErrTypeTaskNotFound,
		},
		{
			name: "mallory's REST decision: not found",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return decideAs(env, wire.DecideApprovalInput{ApprovalID: testApprovalID, Approved: true,
					Approver: "mallory", Principal: "mallory", ApproverGroups: noGroups})
			},
			wantType: wire.ErrTypeApprovalNotFound,
		},
		{
			name: "alice approving her own request (she is in finance too): refused",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return decideAs(env, wire.DecideApprovalInput{ApprovalID: testApprovalID, Approved: true,
					Approver: "alice", Principal: "alice", ApproverGroups: finance})
			},
			wantType: wire.ErrTypeApprovalRefused,
		},
		{
			name: "fiona of finance, by message: the decision only",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return sendAs(env, wire.SendMessageInput{Owner: "fiona", Message: decisionMessage(testApprovalID, true, "ok"),
					Approver: "fiona", ApproverGroups: finance})
			},
		},
		{
			name: "fiona's decision message with a push config: refused",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return sendAs(env, wire.SendMessageInput{Owner: "fiona", Message: decisionMessage(testApprovalID, true, "ok"),
					Approver: "fiona", ApproverGroups: finance, PushConfig: &a2a.PushConfig{ID: "spy", URL: "https://spy.example.com"}})
			},
			wantType: wire.ErrTypeInvalidParams,
		},
		{
			name: "fiona over REST",
			act: func(env *testsuite.TestWorkflowEnvironment) func() (bool, error) {
				return decideAs(env, wire.DecideApprovalInput{ApprovalID: testApprovalID, Approved: true,
					Approver: "fiona", Principal: "fiona", ApproverGroups: finance})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv(t, &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Pay", Groups: finance, Timeout: time.Hour})
				if err != nil {
					return err
				}
				t.Reply(a.State)
				return nil
			}})
			env.RegisterActivityWithOptions(func(context.Context, wire.ApprovalNotice) error { return nil },
				activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
			var outcome func() (bool, error)
			var seen map[string][]workflows.Approval
			env.RegisterDelayedCallback(func() {
				outcome = tt.act(env)
				seen = map[string][]workflows.Approval{}
				for _, who := range []wire.Caller{{Principal: "alice"}, {Principal: "mallory", Groups: noGroups}, {Principal: "fiona", Groups: finance}} {
					v, qerr := env.QueryWorkflow(wire.QueryApprovals, who)
					if qerr != nil {
						t.Fatalf("approvals as %s: %v", who.Principal, qerr)
					}
					var list []workflows.Approval
					_ = v.Get(&list)
					seen[who.Principal] = list
				}
			}, 10*time.Minute)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", Owner: "alice", Message: userText("pay")})

			accepted, err := outcome()
			var appErr *temporal.ApplicationError
			switch {
			case tt.wantType == "" && (err != nil || !accepted):
				t.Errorf("accepted=%v err %v, want it let through", accepted, err)
			case tt.wantType != "" && (accepted || !errors.As(err, &appErr) || appErr.Type() != tt.wantType):
				t.Errorf("accepted=%v err %v, want refused as %s", accepted, err, tt.wantType)
			}
			// Whatever happened, only alice's message is in her task's history.
			final := finalTask(t, env)
			for _, m := range final.History {
				if m.Role == a2a.MessageRoleUser && workflows.MessageText(m) != "pay" {
					t.Errorf("history holds another caller's message %v", viewMessage(m))
				}
			}
			// Reading approvals: the requester and finance see it, mallory nothing.
			got := map[string]int{}
			for who, list := range seen {
				got[who] = len(list)
			}
			if diff := cmp.Diff(map[string]int{"alice": 1, "fiona": 1, "mallory": 0}, got); diff != "" {
				t.Errorf("approvals each caller reads (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContradictingDecisionSaysWhoDecided: once fiona approved, her
// rejection (or anyone's) is refused with who decided what.
func TestContradictingDecisionSaysWhoDecided(t *testing.T) {
	env := newApprovalEnv(t, &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		_, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Pay", Groups: finance})
		if err != nil {
			return err
		}
		return workflow.Sleep(ctx, time.Hour)
	}})
	var second *decisionUpdate
	env.RegisterDelayedCallback(func() { decide(env, by("fiona", finance, true, "fine")) }, 10*time.Minute)
	env.RegisterDelayedCallback(func() { second = decide(env, by("fiona", finance, false, "changed my mind")) }, 20*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", Message: userText("pay")})
	want := "approval task-1-approval-1 is already approved: fiona approved it at 2026-03-02T09:10:00Z (via rest)"
	checkRejected(t, "the contradicting decision", second.rejected, wire.ErrTypeApprovalRefused, want)
}

// sendAs sends a SendMessage update; the returned function reports, once
// the workflow ran, whether it was accepted.
func sendAs(env *testsuite.TestWorkflowEnvironment, in wire.SendMessageInput) func() (bool, error) {
	u := sendMessage(env, in)
	return func() (bool, error) { return u.accepted, u.rejected }
}

// decideAs sends a DecideApproval update, as sendAs.
func decideAs(env *testsuite.TestWorkflowEnvironment, in wire.DecideApprovalInput) func() (bool, error) {
	u := decide(env, in)
	return func() (bool, error) { return u.accepted, u.rejected }
}

// selfApprovalPolicies let the requester approve her own small payments:
// a policy says so (@groups with "requester"); a big one needs finance
// only, and a step no policy speaks of asks as the skill asked (finance).
const selfApprovalPolicies = `@id("small") @groups("requester,finance")
permit (principal, action == Action::"approveStep", resource) when { context.step == "small" };
@id("big") @groups("finance")
permit (principal, action == Action::"approveStep", resource) when { context.step == "big" };
`

// TestSelfApprovalByPolicy: the task's owner never approves her own
// request, even as a member of its group, unless a policy says so; a
// delegate holding her authority may not either, and one holding an
// approver's decides as that approver, once.
func TestSelfApprovalByPolicy(t *testing.T) {
	store, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if _, err := store.AddPolicyVersion(context.Background(), "agent/payer", selfApprovalPolicies, "root", "self"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, step string
		in         wire.DecideApprovalInput
		accepted   bool
	}{
		{"a policy lets the requester approve", "small", wire.DecideApprovalInput{Approver: "alice", Principal: "alice", ApproverGroups: finance}, true},
		{"a policy asks finance only", "big", wire.DecideApprovalInput{Approver: "alice", Principal: "alice", ApproverGroups: finance}, false},
		{"no policy speaks of it", "other", wire.DecideApprovalInput{Approver: "alice", Principal: "alice", ApproverGroups: finance}, false},
		{"a delegate of the requester", "big", wire.DecideApprovalInput{Approver: "dana for alice", OnBehalfOf: "alice", Principal: "dana", ApproverGroups: finance}, false},
		{"a delegate of fiona", "big", wire.DecideApprovalInput{Approver: "dana for fiona", OnBehalfOf: "fiona", Principal: "dana", ApproverGroups: finance}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTaskEnv(t, &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
				a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Pay", Step: tc.step, Groups: finance, Timeout: time.Hour})
				if err != nil {
					return err
				}
				t.Reply(a.State)
				return nil
			}})
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflowstest.DeadlockDetectionTimeout,
				BackgroundActivityContext: workerenv.With(context.Background(), &workerenv.Env{DB: store.DB(), Policies: policies.NewEngine(store)})})
			env.RegisterActivityWithOptions(func(context.Context, wire.ApprovalNotice) error { return nil },
				activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
			var outcome func() (bool, error)
			in := tc.in
			in.ApprovalID, in.Approved = testApprovalID, true
			env.RegisterDelayedCallback(func() { outcome = decideAs(env, in) }, 10*time.Minute)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", Owner: "alice", Message: userText("pay")})
			accepted, err := outcome()
			var appErr *temporal.ApplicationError
			switch {
			case tc.accepted && (!accepted || err != nil):
				t.Errorf("refused: %v", err)
			case !tc.accepted && (accepted || !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeApprovalRefused):
				t.Errorf("accepted=%v err %v, want refused", accepted, err)
			}
			if final := finalTask(t, env); tc.accepted != (workflows.MessageText(final.Status.Message) == workflows.ApprovalApproved) {
				t.Errorf("the skill got %q", workflows.MessageText(final.Status.Message))
			}
		})
	}
}

// TestOneAuthorityDecidesOnce: in a quorum of two, fiona's authority
// counts once, whether she uses it or her delegate does; the delegate's
// own decision is another.
func TestOneAuthorityDecidesOnce(t *testing.T) {
	env := newApprovalEnv(t, &workflows.Agent{Name: "payer", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Pay", Groups: finance, Required: 2})
		if err != nil {
			return err
		}
		t.Reply(a.State)
		return nil
	}})
	forFiona := wire.DecideApprovalInput{ApprovalID: testApprovalID, Approved: true, Approver: "dana for fiona", OnBehalfOf: "fiona", ApproverGroups: finance, Via: "rest"}
	var second, third *decisionUpdate
	env.RegisterDelayedCallback(func() { decide(env, by("fiona", finance, true, "")) }, 10*time.Minute)
	env.RegisterDelayedCallback(func() { second = decide(env, forFiona) }, 20*time.Minute)
	env.RegisterDelayedCallback(func() { third = decide(env, by("dana", finance, true, "")) }, 30*time.Minute)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "payer", Message: userText("pay")})
	checkRejected(t, "dana for fiona after fiona", second.rejected, wire.ErrTypeApprovalRefused, "fiona already decided approval task-1-approval-1: fiona approved it at 2026-03-02T09:10:00Z (via rest)")
	if third.rejected != nil || !third.accepted {
		t.Errorf("dana's own decision: %v", third.rejected)
	}
	if got := workflows.MessageText(finalTask(t, env).Status.Message); got != workflows.ApprovalApproved {
		t.Errorf("the skill got %q, want approved", got)
	}
}
