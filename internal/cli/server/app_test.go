package server

import (
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// testApp is a program's app with two agents of its own.
func testApp() *App {
	handle := func(ctx workflow.Context, t *workflows.Task) error { t.Reply(t.Text()); return nil }
	return &App{Agents: []*workflows.Agent{{Name: "travel", Handle: handle}, {Name: "echo", Handle: handle}, {Name: "expenses", Handle: handle}}}
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
