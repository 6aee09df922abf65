package llmagents_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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
	"github.com/a2aflow/a2aflow/workflows"
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

// TestLLMAgentToolApprovals: [[agents.tool-approvals]] gate tools of any
// source by name: a built-in (calculator, above a condition over its
// arguments) and a remote agent's skill (weather_forecast, every call). The
// model calls both, and a calculator call under the condition, in one turn;
// the two gated calls wait on their own approvals, showing the tool and its
// arguments; the approved calculation runs, the rejected remote call is
// never sent and the model reads why; the ungated call runs at once.
func TestLLMAgentToolApprovals(t *testing.T) {
	spec := llmagents.LLMAgentSpec{Name: "helper", SystemPrompt: "Help.", Tools: []string{"calculator"}, RemoteAgents: []string{"weather"},
		Approvals: []llmagents.ToolApproval{
			{Tool: "calculator", When: `expression contains "*"`, Request: workflows.ApprovalRequest{Groups: []string{"finance"}}},
			{Tool: "weather_forecast", Request: workflows.ApprovalRequest{Groups: []string{"ops"}}},
		}}
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	env := workflowstest.New(t, llmagents.LLMAgent(spec))
	llm.RegisterTools(env, llmagents.ActivityTools()...) // as the worker registers the built-in tools
	env.RegisterActivity(&activities.Tasks{})
	dir := &activities.Directory{}
	env.RegisterActivityWithOptions(dir.AgentSkills, activity.RegisterOptions{Name: wire.ActivityAgentSkills})
	sent := 0
	env.RemoteAgent("weather", func(*a2a.Message) *a2a.Task {
		sent++
		return &a2a.Task{ID: "w-1", ContextID: "w", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
			Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("rain"))}}
	})
	env.LLM(workflowstest.LLMFunc(func(req llm.Request) (llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleUser {
			return llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`},
				{ID: "c2", Name: "weather_forecast", Arguments: `{"message":"Rain in Oslo?"}`},
				{ID: "c3", Name: "calculator", Arguments: `{"expression":"1+1"}`},
			}}, nil
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m.ToolCallID+": "+m.Text)
			}
		}
		return llm.Response{Text: strings.Join(results, " | "), StopReason: llm.StopEnd}, nil
	}))
	// Mocks after every registration (the test environment's rule).
	env.OnActivity((*activities.Tasks)(nil).ContextHistory, mock.Anything, mock.Anything).Return([]*a2a.Message(nil), nil)
	env.OnActivity(wire.ActivityAgentSkills, mock.Anything, activities.AgentSkillsInput{Agent: "weather"}).Return(activities.AgentSkillsOutput{
		Agent: "weather", Skills: []a2a.AgentSkill{{ID: "forecast", Name: "Forecast", Description: "Tomorrow's weather."}}}, nil)
	// The activity tools' calls run together (the calculator's gate waits
	// alone); a workflow tool's (the remote skill's) after them.
	var shown []string
	look := func(list []workflows.Approval) {
		for _, a := range list {
			raw, _ := json.Marshal(a.Request.Action)
			shown = append(shown, fmt.Sprintf("%s %s %v %s", a.ID, a.State, a.Groups, raw))
		}
	}
	env.LookApprovals(time.Minute, look)
	env.Decide(time.Hour, workflowstest.ApprovalID(1), workflowstest.Approve("fiona", "finance"))
	env.LookApprovals(90*time.Minute, look)
	env.Decide(2*time.Hour, workflowstest.ApprovalID(2), workflowstest.Reject("olaf", "no forecasts today", "ops"))
	task := env.RunText("helper", "Work it out.")

	want := []string{
		`task-1-approval-1 pending [finance] {"arguments":{"expression":"6*7"},"tool":"calculator"}`,
		`task-1-approval-1 approved [finance] {"arguments":{"expression":"6*7"},"tool":"calculator"}`,
		`task-1-approval-2 pending [ops] {"arguments":{"message":"Rain in Oslo?"},"tool":"weather_forecast"}`,
	}
	if strings.Join(shown, "\n") != strings.Join(want, "\n") {
		t.Errorf("approvals after a minute and after 90:\n%s\nwant:\n%s", strings.Join(shown, "\n"), strings.Join(want, "\n"))
	}
	got := workflows.MessageText(task.Status.Message)
	for _, part := range []string{`c1: {"expression":"6*7","result":"42"}`, "c2: error: the call of weather_forecast was not approved", "rejected by olaf: no forecasts today", `c3: {"expression":"1+1","result":"2"}`} {
		if !strings.Contains(got, part) {
			t.Errorf("the model read %q, want %q in it", got, part)
		}
	}
	if sent != 0 {
		t.Errorf("the rejected remote call was sent %d times", sent)
	}
}
