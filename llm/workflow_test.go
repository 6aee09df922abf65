package llm_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
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

// scripted is a fake Provider: answer decides each response from the call
// number (from 1) and the request.
type scripted struct {
	mu     sync.Mutex
	reqs   []llm.Request
	local  []bool // each call's activity.Info.IsLocalActivity
	answer func(n int, req llm.Request) (llm.Response, error)
}

func (s *scripted) Name() string  { return "scripted" }
func (s *scripted) Model() string { return "scripted-1" }
func (s *scripted) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.local = append(s.local, activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity)
	n := len(s.reqs)
	s.mu.Unlock()
	resp, err := s.answer(n, req)
	resp.Usage = llm.Usage{InputTokens: 100, OutputTokens: 10}
	return resp, err
}

// locals says, call by call, whether it ran as a local activity.
func (s *scripted) locals() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.local...)
}

func (s *scripted) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

// tripPlan is the structured output of the "plan" test agent.
type tripPlan struct {
	City string `json:"city" validate:"required"`
	Days int    `json:"days" validate:"min=1,max=30"`
}

// addInput is the argument of the "add" test tool.
type addInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

var addTool = llm.NewTool("add", "Adds two integers.", func(ctx context.Context, in addInput) (int, error) {
	return in.A + in.B, nil
})

// testAgents are agents whose handlers use the llm helpers.
func testAgents() *engine.Registry {
	plan := &workflows.Agent{Name: "plan", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		p, err := llm.Function[tripPlan](ctx, t.Text(), llm.WithUsage(t))
		if err != nil {
			return err
		}
		t.Artifact(ctx, workflows.JSONArtifact("plan", p))
		return nil
	}}
	loop := &workflows.Agent{Name: "loop", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		answer, err := llm.Worker(llm.AskUser(t), addTool).Run(ctx, t.Thread(), llm.WithUsage(t), llm.WithSystem("You are a test."))
		if err != nil {
			return err
		}
		t.Reply(answer)
		return nil
	}}
	// planAsActivity is plan, its calls ordinary activities whatever the
	// task says.
	planAsActivity := &workflows.Agent{Name: "plan-as-activity", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		p, err := llm.Function[tripPlan](ctx, t.Text(), llm.WithUsage(t), llm.WithLocalActivity(false))
		if err != nil {
			return err
		}
		t.Artifact(ctx, workflows.JSONArtifact("plan", p))
		return nil
	}}
	reg, err := engine.NewRegistry(plan, loop, planAsActivity)
	if err != nil {
		panic(err)
	}
	return reg
}

func newEnv(t *testing.T, p llm.Provider) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflowstest.DeadlockDetectionTimeout})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(testAgents(), engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.RegisterActivity(&activities.LLM{Provider: p})
	llm.RegisterTools(env, addTool)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "task-1"})
	return env
}

func userMessage(text string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	return m
}

func finalTask(t *testing.T, env *testsuite.TestWorkflowEnvironment) *a2a.Task {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var task a2a.Task
	if err := env.GetWorkflowResult(&task); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	return &task
}

func statusText(task *a2a.Task) string {
	return workflows.MessageText(task.Status.Message)
}

func usageOf(task *a2a.Task) any { return task.Metadata[wire.UsageMetadataKey] }

func usage(calls int) any {
	return map[string]any{"inputTokens": float64(100 * calls), "outputTokens": float64(10 * calls), "calls": float64(calls)}
}

func text(s string) llm.Response { return llm.Response{Text: s, StopReason: llm.StopEnd} }

func TestFunction(t *testing.T) {
	tests := []struct {
		name      string
		answers   []string
		wantState a2a.TaskState
		wantPlan  any
		wantText  string // failed status text
		wantCalls int
	}{
		{
			name:      "valid",
			answers:   []string{`{"city":"Lisbon","days":3}`},
			wantState: a2a.TaskStateCompleted,
			wantPlan:  map[string]any{"city": "Lisbon", "days": float64(3)},
			wantCalls: 1,
		},
		{
			name:      "invalid then valid",
			answers:   []string{`{"city":"","days":3}`, "```json\n{\"city\":\"Porto\",\"days\":2}\n```"},
			wantState: a2a.TaskStateCompleted,
			wantPlan:  map[string]any{"city": "Porto", "days": float64(2)},
			wantCalls: 2,
		},
		{
			name:      "invalid beyond the bound",
			answers:   []string{`not json`, `{"city":"Rome","days":99}`, `{"city":"Rome","days":2,"budget":1}`, `{"city":"Rome","days":2}`},
			wantState: a2a.TaskStateFailed,
			wantText:  `the model gave no valid tripPlan in 3 attempts: the answer is not a JSON object matching the schema: json: unknown field "budget"`,
			wantCalls: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) { return text(tt.answers[n-1]), nil }}
			env := newEnv(t, p)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "plan", Message: userMessage("Plan a short trip")})

			task := finalTask(t, env)
			if task.Status.State != tt.wantState {
				t.Fatalf("state = %s (%q), want %s", task.Status.State, statusText(task), tt.wantState)
			}
			if tt.wantText != "" {
				if diff := cmp.Diff(tt.wantText, statusText(task)); diff != "" {
					t.Errorf("status message (-want +got):\n%s", diff)
				}
			}
			if tt.wantPlan != nil {
				if len(task.Artifacts) != 1 {
					t.Fatalf("%d artifacts, want 1", len(task.Artifacts))
				}
				if diff := cmp.Diff(tt.wantPlan, task.Artifacts[0].Parts[0].Data()); diff != "" {
					t.Errorf("plan (-want +got):\n%s", diff)
				}
			}
			reqs := p.requests()
			if len(reqs) != tt.wantCalls {
				t.Fatalf("%d LLM calls, want %d", len(reqs), tt.wantCalls)
			}
			if diff := cmp.Diff(usage(tt.wantCalls), usageOf(task)); diff != "" {
				t.Errorf("usage metadata (-want +got):\n%s", diff)
			}
			// Every call asks for the schema of tripPlan.
			for i, req := range reqs {
				if req.ResponseFormat == nil || req.ResponseFormat.Name != "tripPlan" || !strings.Contains(string(req.ResponseFormat.Schema), `"days":{"type":"integer"}`) {
					t.Errorf("call %d response format = %+v, want tripPlan's schema", i+1, req.ResponseFormat)
				}
			}
			// A retry sees its answer and what was wrong with it.
			if tt.wantCalls > 1 {
				second := reqs[1].Messages
				if len(second) != 3 || second[1].Role != llm.RoleAssistant || second[1].Text != tt.answers[0] ||
					!strings.Contains(second[2].Text, "That answer is invalid:") {
					t.Errorf("second call's messages = %+v, want the prompt, the invalid answer and the validation error", second)
				}
			}
		})
	}
}

func TestFunctionValidationErrorFedBack(t *testing.T) {
	p := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		if n == 1 {
			return text(`{"city":"Lisbon","days":0}`), nil
		}
		return text(`{"city":"Lisbon","days":1}`), nil
	}}
	env := newEnv(t, p)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "plan", Message: userMessage("Plan")})
	finalTask(t, env)
	feedback := p.requests()[1].Messages[2].Text
	if !strings.Contains(feedback, "tripPlan.Days") || !strings.Contains(feedback, "'min' tag") {
		t.Errorf("feedback = %q, want the validator's message about Days", feedback)
	}
}

func TestLLMErrors(t *testing.T) {
	tests := []struct {
		name      string
		provider  llm.Provider
		wantState a2a.TaskState
		wantText  string
		wantCalls int
		minDelay  time.Duration // workflow time the retries took at least
	}{
		{
			name:      "not configured",
			provider:  nil,
			wantState: a2a.TaskStateFailed,
			wantText:  llm.ErrNotConfigured.Error(),
		},
		{
			name: "429 honours Retry-After, then succeeds",
			provider: &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
				if n == 1 {
					return llm.Response{}, &llm.APIError{Provider: "openai", StatusCode: 429, Message: "slow down", RetryAfter: 45 * time.Second}
				}
				return text(`{"city":"Oslo","days":4}`), nil
			}},
			wantState: a2a.TaskStateCompleted,
			wantCalls: 2,
			minDelay:  45 * time.Second,
		},
		{
			name: "500 is retried",
			provider: &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
				if n < 3 {
					return llm.Response{}, &llm.APIError{Provider: "openai", StatusCode: 500, Message: "oops"}
				}
				return text(`{"city":"Oslo","days":4}`), nil
			}},
			wantState: a2a.TaskStateCompleted,
			wantCalls: 3,
		},
		{
			name: "400 is not retried",
			provider: &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
				return llm.Response{}, &llm.APIError{Provider: "openai", StatusCode: 400, Message: "unknown model"}
			}},
			wantState: a2a.TaskStateFailed,
			wantText:  "openai API answered 400: unknown model",
			wantCalls: 1,
		},
	}
	for _, tt := range tests {
		for _, local := range []bool{false, true} {
			name := tt.name
			if local {
				name += ", local activity"
			}
			t.Run(name, func(t *testing.T) {
				if s, ok := tt.provider.(*scripted); ok {
					s.mu.Lock()
					s.reqs, s.local = nil, nil
					s.mu.Unlock()
				}
				env := newEnv(t, tt.provider)
				start := env.Now()
				env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "plan", Message: userMessage("Plan"), Recording: localModelCalls(local)})
				task := finalTask(t, env)
				if s, ok := tt.provider.(*scripted); ok {
					for i, l := range s.locals() {
						if l != local {
							t.Errorf("call %d ran as a local activity: %v, want %v", i+1, l, local)
						}
					}
				}
				if task.Status.State != tt.wantState {
					t.Fatalf("state = %s (%q), want %s", task.Status.State, statusText(task), tt.wantState)
				}
				if tt.wantText != "" {
					if diff := cmp.Diff(tt.wantText, statusText(task)); diff != "" {
						t.Errorf("status message (-want +got):\n%s", diff)
					}
				}
				if s, ok := tt.provider.(*scripted); ok {
					if got := len(s.requests()); got != tt.wantCalls {
						t.Errorf("%d calls, want %d", got, tt.wantCalls)
					}
				}
				if took := env.Now().Sub(start); took < tt.minDelay {
					t.Errorf("took %v of workflow time, want at least %v", took, tt.minDelay)
				}
			})
		}
	}
}

func TestIsNotConfigured(t *testing.T) {
	env := newEnv(t, nil)
	var got error
	reg, _ := engine.NewRegistry(&workflows.Agent{Name: "probe", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		_, got = llm.Function[tripPlan](ctx, "x")
		return nil
	}})
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: "Probe"})
	env.ExecuteWorkflow("Probe", wire.TaskInput{Agent: "probe", Message: userMessage("x")})
	if !llm.IsNotConfigured(got) {
		t.Errorf("IsNotConfigured(%v) = false, want true", got)
	}
}

// toolCall returns a response asking for one tool call.
func toolCall(id, name, args string) llm.Response {
	return llm.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}, StopReason: llm.StopToolUse}
}

func TestWorkerToolLoop(t *testing.T) {
	p := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		switch n {
		case 1:
			return llm.Response{Text: "Adding first.", ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "add", Arguments: `{"a":40,"b":2}`},
				{ID: "c2", Name: "add", Arguments: `{"a":"x"}`},
				{ID: "c3", Name: "nope", Arguments: `{}`},
			}, StopReason: llm.StopToolUse}, nil
		case 2:
			return toolCall("c4", "ask_user", `{"question":"Which city are you in?"}`), nil
		default:
			last := req.Messages[len(req.Messages)-1]
			return text(fmt.Sprintf("The answer is 42, %s.", last.Text)), nil
		}
	}}
	env := newEnv(t, p)
	var waiting *a2a.Task
	env.RegisterDelayedCallback(func() {
		// The loop waits in ask_user: the task asks the model's question.
		value, err := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		_ = value.Get(&waiting)
		env.UpdateWorkflow(wire.UpdateSendMessage, "answer-1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("answer rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, wire.SendMessageInput{Message: userMessage("Lisbon"), ReturnImmediately: true})
	}, 72*time.Hour) // a loop may wait for days

	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "loop", Message: userMessage("What is 40+2? Then greet me by city.")})

	if waiting == nil || waiting.Status.State != a2a.TaskStateInputRequired || statusText(waiting) != "Which city are you in?" {
		t.Fatalf("while waiting the task was %+v, want input-required asking the model's question", waiting)
	}
	task := finalTask(t, env)
	if task.Status.State != a2a.TaskStateCompleted || statusText(task) != "The answer is 42, Lisbon." {
		t.Fatalf("final status %s %q, want completed with the model's answer", task.Status.State, statusText(task))
	}
	reqs := p.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d LLM calls, want 3", len(reqs))
	}
	// The third call sees the whole loop: the question, the three tool
	// results (42, a bad-arguments error, an unknown tool), the question
	// and the user's answer.
	type msgView struct {
		Role    llm.Role
		Text    string
		Calls   int
		IsError bool
	}
	var got []msgView
	for _, m := range reqs[2].Messages {
		got = append(got, msgView{m.Role, m.Text, len(m.ToolCalls), m.IsError})
	}
	want := []msgView{
		{llm.RoleUser, "What is 40+2? Then greet me by city.", 0, false},
		{llm.RoleAssistant, "Adding first.", 3, false},
		{llm.RoleTool, "42", 0, false},
		{llm.RoleTool, "error: the arguments are not a JSON object matching the schema: json: cannot unmarshal string into Go struct field addInput.a of type int", 0, true},
		{llm.RoleTool, `there is no tool named "nope"`, 0, true},
		{llm.RoleAssistant, "", 1, false},
		{llm.RoleTool, "Lisbon", 0, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("third call's messages (-want +got):\n%s", diff)
	}
	if reqs[0].System != "You are a test." || len(reqs[0].Tools) != 2 || reqs[0].Tools[0].Name != "ask_user" || reqs[0].Tools[1].Name != "add" {
		t.Errorf("first call system %q tools %+v, want the system prompt and ask_user, add", reqs[0].System, reqs[0].Tools)
	}
	if diff := cmp.Diff(usage(3), usageOf(task)); diff != "" {
		t.Errorf("usage metadata (-want +got):\n%s", diff)
	}
}

func TestWorkerTooManyTurns(t *testing.T) {
	p := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		return toolCall(fmt.Sprintf("c%d", n), "add", `{"a":1,"b":1}`), nil
	}}
	env := newEnv(t, p)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "loop", Message: userMessage("loop forever")})
	task := finalTask(t, env)
	if task.Status.State != a2a.TaskStateFailed || statusText(task) != "the model did not finish within 12 turns" {
		t.Errorf("final status %s %q, want failed after 12 turns", task.Status.State, statusText(task))
	}
	if got := len(p.requests()); got != 12 {
		t.Errorf("%d calls, want 12", got)
	}
}

func TestWorkerCanceledWhileAsking(t *testing.T) {
	p := &scripted{answer: func(n int, req llm.Request) (llm.Response, error) {
		return toolCall("c1", "ask_user", `{"question":"Sure?"}`), nil
	}}
	env := newEnv(t, p)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(wire.UpdateCancelTask, "cancel-1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("cancel rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, wire.CancelTaskInput{})
	}, time.Hour)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "loop", Message: userMessage("ask me")})
	task := finalTask(t, env)
	if task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("state = %s (%q), want canceled", task.Status.State, statusText(task))
	}
	if got := len(p.requests()); got != 1 {
		t.Errorf("%d calls, want 1: a canceled loop calls the model no more", got)
	}
}

// localModelCalls is the recording of a task whose model calls are local
// activities when local is set.
func localModelCalls(local bool) wire.Recording {
	if local {
		return wire.LocalModelCalls
	}
	return 0
}

// TestLocalModelCalls: a task started with wire.LocalModelCalls makes
// its LLM calls as local activities, a task without it as ordinary
// activities, and WithLocalActivity(false) makes ordinary ones whatever
// the task says.
func TestLocalModelCalls(t *testing.T) {
	for _, tt := range []struct {
		agent     string
		local     bool
		wantLocal bool
	}{
		{"plan", true, true},
		{"plan", false, false},
		{"plan-as-activity", true, false},
	} {
		t.Run(fmt.Sprintf("%s local=%v", tt.agent, tt.local), func(t *testing.T) {
			p := &scripted{answer: func(int, llm.Request) (llm.Response, error) { return text(`{"city":"Oslo","days":4}`), nil }}
			env := newEnv(t, p)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: tt.agent, Message: userMessage("Plan"), Recording: localModelCalls(tt.local)})
			task := finalTask(t, env)
			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("state = %s (%q)", task.Status.State, statusText(task))
			}
			if diff := cmp.Diff([]bool{tt.wantLocal}, p.locals()); diff != "" {
				t.Errorf("calls as local activities (-want +got):\n%s", diff)
			}
		})
	}
}
