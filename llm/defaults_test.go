package llm_test

import (
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// TestWithDefaults: a context's defaults (how a config file gives an
// agent its model and provider) reach the calls that name none, and a call
// naming its own model keeps it.
func TestWithDefaults(t *testing.T) {
	p := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) { return text("ok"), nil }}
	inner := func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := llm.Worker().Run(ctx, t.Thread()); err != nil {
			return err
		}
		_, err := llm.Worker().Run(ctx, t.Thread(), llm.WithModel("explicit"))
		return err
	}
	agent := &workflows.Agent{Name: "configured", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		return inner(llm.WithDefaults(ctx, "scripted", "file-model"), t)
	}}
	reg, err := engine.NewRegistry(agent)
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflowstest.DeadlockDetectionTimeout})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.RegisterActivity(&activities.LLM{Provider: p})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "task-defaults"})
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "configured", Message: userMessage("hi")})
	finalTask(t, env)
	reqs := p.requests()
	if len(reqs) != 2 || reqs[0].Model != "file-model" || reqs[0].Provider != "scripted" || reqs[1].Model != "explicit" || reqs[1].Provider != "scripted" {
		t.Errorf("requests' model/provider = %+v, want file-model then explicit, both from provider scripted", reqs)
	}
}
