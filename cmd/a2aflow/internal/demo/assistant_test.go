package demo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
)

// fakeLLM is a Provider answering from a script by call number (from 1).
type fakeLLM struct {
	mu     sync.Mutex
	reqs   []llm.Request
	script func(n int, req llm.Request) llm.Response
}

func (f *fakeLLM) Name() string  { return "fake" }
func (f *fakeLLM) Model() string { return "fake-1" }
func (f *fakeLLM) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	resp := f.script(n, req)
	resp.Usage = llm.Usage{InputTokens: 50, OutputTokens: 5}
	return resp, nil
}

func (f *fakeLLM) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

func callTool(id, name, args string) llm.Response {
	return llm.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}, StopReason: llm.StopToolUse}
}

// newAssistantEnv is newTaskEnv with the assistant's activities: the LLM
// activity on provider (nil: not configured), its tools, and the task
// readers, whose context history is mocked as earlier.
func newAssistantEnv(provider llm.Provider, earlier []*a2a.Message) *testsuite.TestWorkflowEnvironment {
	env := newTaskEnv()
	env.RegisterActivity(&activities.LLM{Provider: provider})
	llm.RegisterTools(env, llmagents.ActivityTools()...)
	env.RegisterActivity(&activities.Tasks{})
	env.OnActivity((*activities.Tasks)(nil).ContextHistory, mock.Anything, mock.Anything).Return(earlier, nil)
	return env
}

func TestAssistant(t *testing.T) {
	f := &fakeLLM{script: func(n int, req llm.Request) llm.Response {
		switch n {
		case 1:
			return callTool("c1", "calculator", `{"expression":"2340 * 17.5 / 100"}`)
		case 2:
			result := req.Messages[len(req.Messages)-1].Text
			return callTool("c2", "save_artifact", fmt.Sprintf(`{"name":"tip","text":"# Tip\n\n%s"}`, strings.ReplaceAll(result, `"`, `\"`)))
		case 3:
			return callTool("c3", "list_artifacts", ``)
		default:
			return llm.Response{Text: "17.5% of 2,340 is 409.5; I saved it as the artifact tip.", StopReason: llm.StopEnd}
		}
	}}
	earlier := []*a2a.Message{
		{Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("My budget is 2,340 EUR.")}},
		{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("Noted.")}},
	}
	env := newAssistantEnv(f, earlier)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "assistant", ContextID: "ctx-1", Message: userText("What is 17.5% of it?")})

	final := finalTask(t, env)
	want := statusView{State: a2a.TaskStateCompleted, Message: agent("17.5% of 2,340 is 409.5; I saved it as the artifact tip.")}
	if diff := cmp.Diff(want, viewStatus(final)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	reqs := f.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d LLM calls, want 4", len(reqs))
	}
	// The first call sees the context's earlier task, then this task, and
	// every tool, with the system prompt.
	var first []string
	for _, m := range reqs[0].Messages {
		first = append(first, string(m.Role)+": "+m.Text)
	}
	if diff := cmp.Diff([]string{"user: My budget is 2,340 EUR.", "assistant: Noted.", "user: What is 17.5% of it?"}, first); diff != "" {
		t.Errorf("first call's messages (-want +got):\n%s", diff)
	}
	var tools []string
	for _, spec := range reqs[0].Tools {
		tools = append(tools, spec.Name)
	}
	if diff := cmp.Diff([]string{"ask_user", "list_artifacts", "save_artifact", "call_agent", "clock", "calculator", "list_agents", "remember_agent"}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if !strings.Contains(reqs[0].System, "calculator") {
		t.Errorf("system prompt %q does not mention the calculator", reqs[0].System)
	}
	// The real calculator activity computed the result.
	if got := reqs[1].Messages[len(reqs[1].Messages)-1].Text; got != `{"expression":"2340 * 17.5 / 100","result":"409.5"}` {
		t.Errorf("calculator result = %s", got)
	}
	// list_artifacts shows the artifact save_artifact made.
	wantList := `[{"id":"task-1-artifact-1","name":"tip","version":1,"text":"# Tip\n\n{\"expression\":\"2340 * 17.5 / 100\",\"result\":\"409.5\"}"}]`
	if got := reqs[3].Messages[len(reqs[3].Messages)-1].Text; got != wantList {
		t.Errorf("list_artifacts result = %s, want %s", got, wantList)
	}
	if len(final.Artifacts) != 1 || final.Artifacts[0].Name != "tip" || final.Artifacts[0].Parts[0].MediaType != "text/markdown" {
		t.Errorf("artifacts = %+v, want the saved markdown artifact tip", final.Artifacts)
	}
	wantUsage := map[string]any{"inputTokens": float64(200), "outputTokens": float64(20), "calls": float64(4)}
	if diff := cmp.Diff(any(wantUsage), final.Metadata[wire.UsageMetadataKey]); diff != "" {
		t.Errorf("usage metadata (-want +got):\n%s", diff)
	}
}

func TestAssistantWithoutLLM(t *testing.T) {
	env := newAssistantEnv(nil, nil)
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "assistant", Message: userText("hello")})
	want := statusView{State: a2a.TaskStateFailed, Message: agent(llmagents.NotConfiguredMessage)}
	if diff := cmp.Diff(want, viewStatus(finalTask(t, env))); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
}

func TestAssistantWithoutContextHistory(t *testing.T) {
	// The context's earlier tasks cannot be read: the assistant answers from
	// the task alone.
	f := &fakeLLM{script: func(n int, req llm.Request) llm.Response {
		return llm.Response{Text: fmt.Sprintf("%d message(s)", len(req.Messages)), StopReason: llm.StopEnd}
	}}
	env := newTaskEnv()
	env.RegisterActivity(&activities.LLM{Provider: f})
	env.RegisterActivity(&activities.Tasks{})
	env.OnActivity((*activities.Tasks)(nil).ContextHistory, mock.Anything, mock.Anything).
		Return(nil, temporal.NewNonRetryableApplicationError("visibility is down", "Unavailable", nil))
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "assistant", Message: userText("hello")})
	want := statusView{State: a2a.TaskStateCompleted, Message: agent("1 message(s)")}
	if diff := cmp.Diff(want, viewStatus(finalTask(t, env))); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
}
