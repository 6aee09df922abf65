package llmagents_test

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

// TestLLMAgentRemoteSkillTools: an LLM agent from a spec offers the model its
// enabled tools and one tool per skill of each remote agent's card, named
// AGENT_SKILL (a name taken gets a number), described from the skill; a
// remote agent the directory does not know gives no tools, and the task
// still answers. The spec's model goes into the request.
func TestLLMAgentRemoteSkillTools(t *testing.T) {
	spec := llmagents.LLMAgentSpec{Name: "helper", SystemPrompt: "Be brief.", Model: "spec-model",
		Tools: []string{"calculator", "call_agent"}, RemoteAgents: []string{"weather", "ghost"}}
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	reg, err := engine.NewRegistry(llmagents.LLMAgent(spec))
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflowstest.DeadlockDetectionTimeout})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testTaskID})
	f := &fakeLLM{script: func(n int, req llm.Request) llm.Response {
		return llm.Response{Text: "done", StopReason: llm.StopEnd}
	}}
	env.RegisterActivity(&activities.LLM{Provider: f})
	env.RegisterActivity(&activities.Tasks{})
	dir := &activities.Directory{}
	env.RegisterActivityWithOptions(dir.AgentSkills, activity.RegisterOptions{Name: wire.ActivityAgentSkills})
	env.OnActivity((*activities.Tasks)(nil).ContextHistory, mock.Anything, mock.Anything).Return([]*a2a.Message(nil), nil)
	env.OnActivity(wire.ActivityAgentSkills, mock.Anything, activities.AgentSkillsInput{Agent: "weather"}).Return(activities.AgentSkillsOutput{
		Agent: "weather", Description: "Forecasts.",
		Skills: []a2a.AgentSkill{
			{ID: "forecast", Name: "Forecast", Description: "Tomorrow's weather.", Examples: []string{"Rain in Oslo?"}},
			{ID: "fore cast", Name: "Forecast again", Description: "The same, by another ID."},
			{ID: "fore_cast", Name: "Forecast thrice", Description: "The same, by a third ID."},
		},
	}, nil)
	env.OnActivity(wire.ActivityAgentSkills, mock.Anything, activities.AgentSkillsInput{Agent: "ghost"}).Return(activities.AgentSkillsOutput{},
		temporal.NewNonRetryableApplicationError(`no agent "ghost" in the directory`, activities.ErrTypeAgentUnknown, nil))
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "helper", Message: userText("hello")})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var task a2a.Task
	if err := env.GetWorkflowResult(&task); err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s", task.Status.State)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d LLM calls, want 1", len(reqs))
	}
	var names []string
	descs := map[string]string{}
	for _, s := range reqs[0].Tools {
		names = append(names, s.Name)
		descs[s.Name] = s.Description
	}
	if got := strings.Join(names, " "); got != "calculator call_agent weather_forecast weather_fore_cast weather_fore_cast2" {
		t.Errorf("tools = %q", got)
	}
	if d := descs["weather_forecast"]; !strings.Contains(d, "Tomorrow's weather.") || !strings.Contains(d, "Rain in Oslo?") {
		t.Errorf("weather_forecast's description = %q", d)
	}
	if reqs[0].Model != "spec-model" || reqs[0].System != "Be brief." {
		t.Errorf("request model %q, system %q", reqs[0].Model, reqs[0].System)
	}
}

func TestLLMAgentSpecCheck(t *testing.T) {
	for _, tc := range []struct {
		spec llmagents.LLMAgentSpec
		want string
	}{
		{llmagents.LLMAgentSpec{Name: "a", SystemPrompt: "x", Tools: []string{"calculater"}}, `unknown tool "calculater"`},
		{llmagents.LLMAgentSpec{Name: "a"}, "needs a system-prompt"},
	} {
		if err := tc.spec.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}
