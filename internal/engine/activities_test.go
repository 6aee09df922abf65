package engine_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Quote is an activity function: registered under its Go name, "Quote".
func Quote(_ context.Context, item string) (int, error) { return len(item) * 10, nil }

// Supplier's exported methods are activities: "Order" and "Cancel".
type Supplier struct{ orders []string }

func (s *Supplier) Order(_ context.Context, item string) (string, error) {
	s.orders = append(s.orders, item)
	return "PO-1", nil
}

func (s *Supplier) Cancel(_ context.Context, id string) error { return nil }

func notAnActivity(string) string { return "" }

func TestCheckActivities(t *testing.T) {
	agent := func(name string, acts ...any) *workflows.Agent {
		return &workflows.Agent{Name: name, Activities: acts, Handle: func(workflow.Context, *workflows.Task) error { return nil }}
	}
	shared := &Supplier{}
	for _, tc := range []struct {
		name   string
		agents []*workflows.Agent
		want   string // part of the error; "" for none
	}{
		{"none", []*workflows.Agent{agent("a")}, ""},
		{"function, struct, named", []*workflows.Agent{agent("a", Quote, &Supplier{}, workflows.Activity("Estimate", func(context.Context) (int, error) { return 1, nil }))}, ""},
		{"one function shared by two agents", []*workflows.Agent{agent("a", Quote), agent("b", Quote)}, ""},
		{"one struct shared by two agents", []*workflows.Agent{agent("a", shared), agent("b", shared)}, ""},
		{"two structs under one name", []*workflows.Agent{agent("a", &Supplier{}), agent("b", &Supplier{})}, `activity name "Cancel" is taken by another activity of agent "a"`},
		{"two functions under one name", []*workflows.Agent{agent("a", Quote), agent("b", workflows.Activity("Quote", func(context.Context) error { return nil }))}, `"Quote" is taken`},
		{"a built-in name", []*workflows.Agent{agent("a", workflows.Activity(wire.ActivityDeliverPush, Quote))}, "is one of a2aflow's own"},
		{"an LLM tool's name", []*workflows.Agent{agent("a", workflows.Activity("tool:clock", Quote))}, "is one of a2aflow's own"},
		{"a closure", []*workflows.Agent{agent("a", func(context.Context) error { return nil })}, "has no name of its own"},
		{"a method value", []*workflows.Agent{agent("a", shared.Order)}, "has no name of its own"},
		{"not an activity", []*workflows.Agent{agent("a", notAnActivity)}, "must return error"},
		{"context not first", []*workflows.Agent{agent("a", workflows.Activity("X", func(string, context.Context) error { return nil }))}, "only as its first argument"},
		{"not a function", []*workflows.Agent{agent("a", "Quote")}, "is a string"},
		{"a struct without methods", []*workflows.Agent{agent("a", &struct{ n int }{})}, "has no exported methods"},
		{"an empty name", []*workflows.Agent{agent("a", workflows.Activity("", Quote))}, "needs a name"},
		{"a nil function", []*workflows.Agent{agent("a", workflows.Activity("X", nil))}, "not a function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := engine.CheckActivities(tc.agents...)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckActivities: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckActivities = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestAgentActivitiesRun runs a task whose handler calls the agent's own
// activities by name, registered by RegisterActivities alone.
func TestAgentActivitiesRun(t *testing.T) {
	supplier := &Supplier{}
	po := &workflows.Agent{
		Name:       "po",
		Activities: []any{Quote, supplier, workflows.Activity("Approver", func(context.Context, int) (string, error) { return "ops", nil })},
		Handle: func(ctx workflow.Context, task *workflows.Task) error {
			ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
			var price int
			var id, approver string
			if err := workflow.ExecuteActivity(ctx, "Quote", "chairs").Get(ctx, &price); err != nil {
				return err
			}
			if err := workflow.ExecuteActivity(ctx, "Order", "chairs").Get(ctx, &id); err != nil {
				return err
			}
			if err := workflow.ExecuteActivity(ctx, "Approver", price).Get(ctx, &approver); err != nil {
				return err
			}
			task.Reply(id + " " + approver)
			return nil
		},
	}
	env := exampleEnv(po)
	if err := engine.RegisterActivities(env, po); err != nil {
		t.Fatal(err)
	}
	task := exampleRun(env, "po", "order chairs")
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s: %v", task.Status.State, task.Status.Message)
	}
	if got := workflows.MessageText(task.Status.Message); got != "PO-1 ops" {
		t.Errorf("reply %q, want %q", got, "PO-1 ops")
	}
	if len(supplier.orders) != 1 {
		t.Errorf("Order ran %d times, want 1", len(supplier.orders))
	}

	if err := engine.RegisterActivities(exampleEnv(po), &workflows.Agent{Name: "x", Activities: []any{1}}); err == nil {
		t.Error("RegisterActivities accepted an int as an activity")
	}
}

// exampleEnv returns a test environment running the task workflow for
// agents (without their activities).
func exampleEnv(agents ...*workflows.Agent) *testsuite.TestWorkflowEnvironment {
	reg, err := engine.NewRegistry(agents...)
	if err != nil {
		panic(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "task-1"})
	return env
}

// exampleRun starts a task of agent with the user's first message and
// returns the task as it ended.
func exampleRun(env *testsuite.TestWorkflowEnvironment, agent, text string) *a2a.Task {
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{
		Agent:   agent,
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
	})
	var task a2a.Task
	if err := env.GetWorkflowResult(&task); err != nil {
		panic(err)
	}
	return &task
}
