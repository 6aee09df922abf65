package workflows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// TestCurrentDetails: the task's current details, as the Temporal UI
// reads them (the __temporal_workflow_metadata query), name what the task
// waits for at each wait (the question, the approval with its groups,
// quorum and deadline, the waitpoint, the credential request), the call
// under way while it runs and no longer once it ended, and the cost so
// far; the summary of the task heads them.
func TestCurrentDetails(t *testing.T) {
	const lookup = "LookUpFares"
	var whileLookingUp string
	trip := &workflows.Agent{Name: "trip",
		Activities: []any{workflows.Activity(lookup, func(context.Context, string) (string, error) { return "120 EUR", nil })},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			if _, err := t.Ask(ctx, "destination", "Where to? (city)"); err != nil {
				return err
			}
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
			fut := workflow.ExecuteActivity(actx, lookup, "Lisbon")
			whileLookingUp = workflow.GetCurrentDetails(ctx)
			if err := fut.Get(ctx, nil); err != nil {
				return err
			}
			t.AddTokenUsage(workflows.TokenUsage{InputTokens: 1200, OutputTokens: 300, Calls: 2, CostUSD: 0.0123})
			if _, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Pay 120 EUR?", Groups: []string{"finance", "managers"},
				Required: 2, Timeout: 48 * time.Hour}); err != nil {
				return err
			}
			if _, err := t.WaitFor(ctx, workflows.WaitpointRequest{Name: "ticket", Timeout: time.Hour}); err != nil {
				return err
			}
			if _, err := t.RequireCredential(ctx, workflows.CredentialRequest{Service: "github", AuthType: "bearer", Prompt: "A GitHub token, please."}); err != nil {
				return err
			}
			t.Reply("Booked.")
			return nil
		}}
	env := workflowstest.New(t, trip)
	start := env.Now().UTC()
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
	looks := map[string][]string{}
	look := func(after time.Duration, name string) {
		env.LookDetails(after, func(details string) { looks[name] = append(looks[name], details) })
	}
	look(time.Minute, "question")
	env.Answer(2*time.Minute, "Lisbon")
	look(3*time.Minute, "approval")
	env.Decide(4*time.Minute, workflowstest.ApprovalID(1), workflowstest.Approve("mia", "finance"))
	look(5*time.Minute, "one approval")
	env.Decide(6*time.Minute, workflowstest.ApprovalID(1), workflowstest.Approve("bo", "managers"))
	look(7*time.Minute, "waitpoint")
	env.CompleteWaitpoint(8*time.Minute, workflowstest.WaitpointID(1), map[string]any{"ticket": 7})
	look(9*time.Minute, "credential")
	ref := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Credential provided for github."),
		a2a.NewDataPart(map[string]any{wire.CredentialRefKey: "cred-1", "service": "github", "authType": "bearer"}))
	env.AnswerMessage(10*time.Minute, ref)

	task := env.RunText("trip", "Book a trip\nto somewhere warm")
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s, want completed", task.Status.State)
	}
	approvalID, waitpointID := workflowstest.ApprovalID(1), workflowstest.WaitpointID(1)
	for _, tc := range []struct {
		look      string
		want, not []string
	}{
		{look: "question", want: []string{"**trip · Book a trip**", "**State:** input-required since " + at(0),
			"**Waiting for:**", "- the user's answer to: Where to? (city)"}, not: []string{"Doing", "Cost"}},
		{look: "approval", want: []string{"**State:** input-required since " + at(2*time.Minute),
			"- approval `" + approvalID + "` \"Pay 120 EUR?\" by `finance` or `managers`, 0 of 2 approval(s), deadline " + at(2*time.Minute+48*time.Hour),
			"**Cost so far:** 2 model call(s), 1200 input and 300 output tokens, 0.0123 USD"},
			not: []string{"Doing", lookup, "the user's answer"}},
		{look: "one approval", want: []string{"1 of 2 approval(s)"}},
		{look: "waitpoint", want: []string{"- waitpoint `" + waitpointID + "` (ticket), deadline " + at(6*time.Minute+time.Hour)},
			not: []string{"approval `"}},
		{look: "credential", want: []string{"**State:** auth-required", "- a credential for `github` (bearer)"}, not: []string{"waitpoint `"}},
	} {
		got := looks[tc.look]
		if len(got) != 1 {
			t.Errorf("%s: %d looks, want 1", tc.look, len(got))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got[0], w) {
				t.Errorf("%s: the details lack %q:\n%s", tc.look, w, got[0])
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got[0], n) {
				t.Errorf("%s: the details hold %q:\n%s", tc.look, n, got[0])
			}
		}
	}
	if want := "- " + lookup + " (trip skill) (since " + at(2*time.Minute) + ")"; !strings.Contains(whileLookingUp, want) {
		t.Errorf("while the activity runs, the details lack %q:\n%s", want, whileLookingUp)
	}
	v, err := env.QueryWorkflow("__temporal_workflow_metadata")
	if err != nil {
		t.Fatal(err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	if d := md.GetCurrentDetails(); !strings.Contains(d, "**State:** completed") || strings.Contains(d, "Waiting for") {
		t.Errorf("the completed task's details:\n%s", d)
	}
}

// TestCurrentDetailsOfADelegation: while a remote agent's question waits
// for our user, the details name the question and the remote agent with
// its task; once the remote task completed, neither.
func TestCurrentDetailsOfADelegation(t *testing.T) {
	router := &workflows.Agent{Name: "router", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		res, err := t.CallAgent(ctx, workflows.CallRequest{Agent: "flights", Text: t.Text()})
		if err != nil {
			return err
		}
		t.Reply(res.Text())
		return nil
	}}
	env := workflowstest.New(t, router)
	env.RemoteAgent("flights", func(m *a2a.Message) *a2a.Task {
		task := &a2a.Task{ID: "remote-7", ContextID: "rc", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
			Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Booked TP 123."))}}
		if m.TaskID == "" {
			task.Status = a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Which day?"))}
		}
		return task
	})
	var asked, done string
	env.LookDetails(time.Minute, func(d string) { asked = d })
	env.Answer(2*time.Minute, "Friday")
	task := env.RunText("router", "A flight to Lisbon")
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s, want completed", task.Status.State)
	}
	for _, want := range []string{"- the user's answer to: Which day?", "- remote agent `flights`, its task `remote-7` (input-required)"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the details lack %q:\n%s", want, asked)
		}
	}
	v, err := env.QueryWorkflow("__temporal_workflow_metadata")
	var md sdkpb.WorkflowMetadata
	if err == nil {
		err = v.Get(&md)
	}
	if done = md.GetCurrentDetails(); err != nil || strings.Contains(done, "remote agent") {
		t.Errorf("the completed task's details (%v):\n%s", err, done)
	}
}
