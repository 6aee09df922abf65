package workflowstest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// PlaceOrder is the agent's own activity.
func PlaceOrder(_ context.Context, item string) (string, error) { return "PO-" + item, nil }

// orders asks what to order, gets a price from the remote agent "prices",
// waits for a manager and orders.
func orders() *workflows.Agent {
	return &workflows.Agent{
		Name:       "orders",
		Activities: []any{PlaceOrder},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			item, err := t.Ask(ctx, "item", "What should we order?")
			if err != nil {
				return err
			}
			price, err := t.CallAgent(ctx, workflows.CallRequest{Agent: "prices", Text: workflows.MessageText(item)})
			if err != nil {
				return err
			}
			a, err := t.Approve(ctx, workflows.ApprovalRequest{Title: "Order " + workflows.MessageText(item) + "?", Groups: []string{"managers"}})
			if err != nil {
				return err
			}
			if !a.Approved() {
				return workflows.Reject("not approved")
			}
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
			var id string
			if err := workflow.ExecuteActivity(actx, "PlaceOrder", workflows.MessageText(item)).Get(ctx, &id); err != nil {
				return err
			}
			t.Reply(id + " at " + workflows.MessageText(price.Message))
			return nil
		},
	}
}

func prices(m *a2a.Message) *a2a.Task {
	return &a2a.Task{ID: "price-1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("12 EUR for "+workflows.MessageText(m)))}}
}

func TestApprovedOrder(t *testing.T) {
	env := workflowstest.New(t, orders())
	env.RemoteAgent("prices", prices)
	var asked, waiting string
	env.Look(30*time.Minute, func(task *a2a.Task) { asked = workflows.MessageText(task.Status.Message) })
	env.Answer(time.Hour, "desks")
	env.Look(24*time.Hour, func(task *a2a.Task) { waiting = string(task.Status.State) })
	// Not a manager: refused, and the approval still waits.
	env.DecideRefused(47*time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"), func(err error) {
		if !strings.Contains(err.Error(), "managers") {
			t.Errorf("refusal %v does not name the group", err)
		}
	})
	env.Decide(48*time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("mia", "managers"))
	task := env.RunText("orders", "Order something")
	if asked != "What should we order?" || waiting != string(a2a.TaskStateInputRequired) {
		t.Errorf("asked %q, then %s; want the question, then input-required for the approval", asked, waiting)
	}
	if task.Status.State != a2a.TaskStateCompleted || workflows.MessageText(task.Status.Message) != "PO-desks at 12 EUR for desks" {
		t.Errorf("task %s: %q", task.Status.State, workflows.MessageText(task.Status.Message))
	}
}

func TestRejectedOrder(t *testing.T) {
	env := workflowstest.New(t, orders())
	env.RemoteAgent("prices", prices)
	env.Answer(time.Hour, "desks")
	env.Decide(2*time.Hour, workflowstest.ApprovalID(1), workflowstest.Reject("mia", "too dear", "managers"))
	task := env.RunText("orders", "Order something")
	if task.Status.State != a2a.TaskStateRejected {
		t.Errorf("task %s, want rejected", task.Status.State)
	}
}

// TestTaskThatDoesNotEnd: a test that forgets an answer is told so.
func TestTaskThatDoesNotEnd(t *testing.T) {
	ft := &fakeT{TB: t}
	env := workflowstest.New(ft, orders())
	func() {
		defer func() { _ = recover() }()
		env.RunText("orders", "Order something")
	}()
	if !strings.Contains(ft.fatal, "did not end") {
		t.Errorf("Run of a task left waiting: %q, want it to say the task did not end", ft.fatal)
	}
}

// fakeT records a Fatalf instead of ending the test.
type fakeT struct {
	testing.TB
	fatal string
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic("fatal")
}

func (f *fakeT) Helper() {}
