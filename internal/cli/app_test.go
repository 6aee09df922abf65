package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// testApp is a program's app with two agents of its own.
func testApp() *App {
	handle := func(ctx workflow.Context, t *workflows.Task) error { t.Reply(t.Text()); return nil }
	return &App{Agents: []*workflows.Agent{{Name: "travel", Handle: handle}, {Name: "echo", Handle: handle}, {Name: "expenses", Handle: handle}}}
}

func TestRunRefusesInvalidAgents(t *testing.T) {
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	for _, tc := range []struct {
		name   string
		agents []*workflows.Agent
		want   string
	}{
		{"none", nil, "no agents"},
		{"nil", []*workflows.Agent{nil}, "agent 0 is nil"},
		{"duplicate", []*workflows.Agent{{Name: "a", Handle: handle}, {Name: "a", Handle: handle}}, `"a"`},
		{"bad activity", []*workflows.Agent{{Name: "a", Handle: handle, Activities: []any{42}}}, "Activities[0] is a int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(context.Background(), &App{Agents: tc.agents}, []string{"version"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	root := NewRoot(&App{Agents: testApp().Agents, Version: "po 1.2.3"})
	root.SetArgs([]string{"version"})
	root.SetOut(&out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "po 1.2.3") || !strings.Contains(got, " go1.") {
		t.Errorf("version printed %q, want the app's version and Go's", got)
	}
}

// TestRegistryCopiesAgents: flags such as --idle-timeout change the served
// copies, never the program's agents.
func TestRegistryCopiesAgents(t *testing.T) {
	app := testApp()
	reg, err := app.registry()
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range reg.Agents() {
		if a == app.Agents[i] {
			t.Fatalf("registry holds the program's agent %q itself", a.Name)
		}
	}
	if reg.Default().Name != app.Agents[0].Name {
		t.Errorf("default agent %q, want the first, %q", reg.Default().Name, app.Agents[0].Name)
	}
}

func TestPrintTaskNamesPendingApproval(t *testing.T) {
	waiting := &a2a.Task{ID: "t-1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Approve?"),
			a2a.NewDataPart(map[string]any{"approvalId": "t-1-approval-1", "title": "Expense"}))}}
	var out bytes.Buffer
	printTask(&out, waiting, "http://x")
	if !strings.Contains(out.String(), "approve t-1-approval-1 --as NAME") || strings.Contains(out.String(), "Answer with") {
		t.Errorf("printTask of a task waiting for an approval:\n%s", out.String())
	}
	waiting.Status.Message = a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Where to?"))
	out.Reset()
	printTask(&out, waiting, "http://x")
	if !strings.Contains(out.String(), "send --agent http://x --task t-1") {
		t.Errorf("printTask of a task asking a question:\n%s", out.String())
	}
}

// TestFollowEventsNamesPendingApproval: a streamed send that ends waiting
// for an approval says how to decide it (approve/reject, the inbox), not
// how to answer a question.
func TestFollowEventsNamesPendingApproval(t *testing.T) {
	status := &a2a.TaskStatusUpdateEvent{TaskID: "t-1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Approve?"),
			a2a.NewDataPart(map[string]any{"approvalId": "t-1-approval-1"}))}}
	var out bytes.Buffer
	_ = followEvents(&out, &clientFlags{agent: "http://h:8080/agents/expenses"}, "send", func(yield func(a2a.Event, error) bool) {
		yield(status, nil)
	})
	for _, want := range []string{"approve t-1-approval-1 --as NAME --api http://h:8080", "reject t-1-approval-1", "http://h:8080/inbox"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stream output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Answer with") {
		t.Errorf("stream output tells to answer a question:\n%s", out.String())
	}
}
