package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// The workflow examples run their agents in Temporal's test environment
// (go.temporal.io/sdk/testsuite), whose clock jumps over waits, with a
// scripted model in place of the worker's CompleteChat activity (on a real
// worker, activities.LLM over the configured llm.Provider): no Temporal
// server and no LLM needed, and go test checks their outputs.

// exampleModel answers each LLM call; it is the CompleteChat activity of the
// examples. It prints every call as the Temporal UI summarises it.
type exampleModel func(call int, req llm.Request) llm.Response

// exampleEnv returns a test environment running the task workflow for agent,
// with model answering its LLM calls and tools registered as a worker
// registers them.
func exampleEnv(agent *workflows.Agent, model exampleModel, tools ...llm.Tool) *testsuite.TestWorkflowEnvironment {
	reg, err := engine.NewRegistry(agent)
	if err != nil {
		panic(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "task-1"})
	var mu sync.Mutex
	calls := 0
	env.RegisterActivityWithOptions(func(_ context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		resp := model(calls, req)
		resp.Usage = llm.Usage{InputTokens: 100, OutputTokens: 20}
		return resp, nil
	}, activity.RegisterOptions{Name: llm.ActivityCompleteChat})
	llm.RegisterTools(env, tools...)
	return env
}

// exampleRun runs a task of the environment's agent from the user's first
// message and returns the task as it ended.
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

// exampleStatus prints the task's state and status message.
func exampleStatus(task *a2a.Task) {
	if text := workflows.MessageText(task.Status.Message); text != "" {
		fmt.Println(task.Status.State, text)
	} else {
		fmt.Println(task.Status.State)
	}
}

// exampleUsage prints the task's token usage as its metadata records it.
func exampleUsage(task *a2a.Task) {
	var u workflows.TokenUsage
	raw, _ := json.Marshal(task.Metadata[wire.UsageMetadataKey])
	if err := json.Unmarshal(raw, &u); err != nil {
		panic(err)
	}
	fmt.Printf("usage: %+v\n", u)
}

// Plan is the answer ExampleFunction asks the model for.
type Plan struct {
	City string `json:"city" jsonschema:"description=The city to visit." validate:"required"`
	Days int    `json:"days" validate:"min=1,max=30"`
}

// SchemaFor gives the JSON schema Function and the tools show the model: from
// the json and jsonschema tags; no property is optional and none other is
// allowed, as strict structured output wants.
func ExampleSchemaFor() {
	schema, err := llm.SchemaFor[Plan]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(schema))
	// Output:
	// {"properties":{"city":{"type":"string","description":"The city to visit."},"days":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["city","days"]}
}

// Function is one LLM call with structured output: the answer is decoded
// into a Plan and validated with its `validate` tags. An invalid answer is
// asked again with what was wrong, here once: the model first plans 0 days.
func ExampleFunction() {
	planner := &workflows.Agent{
		Name: "planner",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			plan, err := llm.Function[Plan](ctx, t.Text(),
				llm.WithSystem("You plan short trips."), llm.WithUsage(t))
			if err != nil {
				return err // no valid answer in 3 attempts, or the LLM call failed
			}
			t.Artifact(ctx, workflows.JSONArtifact("plan", plan))
			return nil
		},
	}
	model := func(call int, req llm.Request) llm.Response {
		fmt.Printf("call %d: %s, %d messages\n", call, req.ResponseFormat.Name, len(req.Messages))
		if call == 1 {
			return llm.Response{Text: `{"city":"Lisbon","days":0}`}
		}
		fmt.Println("  told:", req.Messages[len(req.Messages)-1].Text)
		return llm.Response{Text: `{"city":"Lisbon","days":3}`}
	}

	task := exampleRun(exampleEnv(planner, model), "planner", "A long weekend by the sea")
	exampleStatus(task)
	raw, _ := json.Marshal(task.Artifacts[0].Parts[0].Data())
	fmt.Println("plan:", string(raw))
	exampleUsage(task)
	// Output:
	// call 1: Plan, 1 messages
	// call 2: Plan, 3 messages
	//   told: That answer is invalid: the answer is not valid: Key: 'Plan.Days' Error:Field validation for 'Days' failed on the 'min' tag. Answer again with only a JSON object that matches the schema.
	// TASK_STATE_COMPLETED
	// plan: {"city":"Lisbon","days":3}
	// usage: {InputTokens:200 CachedInputTokens:0 OutputTokens:40 Calls:2 CostUSD:0}
}

// AddInput is the argument of the add tool.
type AddInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

// add is an activity tool: a worker runs it as the activity "tool:add",
// retried by Temporal, each call shown in the Temporal UI with its arguments.
var add = llm.NewTool("add", "Adds two integers.", func(_ context.Context, in AddInput) (int, error) {
	return in.A + in.B, nil
})

// Worker is the tool loop: the model answers, calls tools and sees their
// results until it answers without a tool call. AskUser is a workflow tool:
// the task is input-required with the model's question until the user
// answers, here two days later.
func ExampleWorker() {
	host := &workflows.Agent{
		Name: "host",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			answer, err := llm.Worker(llm.AskUser(t), add).Run(ctx, t.Thread(),
				llm.WithSystem("You book tables."), llm.WithUsage(t))
			if err != nil {
				return err
			}
			t.Reply(answer)
			return nil
		},
	}
	model := func(call int, req llm.Request) llm.Response {
		last := req.Messages[len(req.Messages)-1]
		fmt.Printf("call %d sees %s: %s\n", call, last.Role, last.Text)
		switch call {
		case 1:
			return llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ask_user", Arguments: `{"question":"How many adults and children?"}`}}}
		case 2:
			return llm.Response{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "add", Arguments: `{"a":2,"b":3}`}}}
		default:
			return llm.Response{Text: "Booked a table for " + last.Text + "."}
		}
	}

	env := exampleEnv(host, model, add) // registers the add activity, as llm.RegisterTools does on a worker
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
		var waiting a2a.Task
		_ = v.Get(&waiting)
		exampleStatus(&waiting)
		answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("2 adults, 3 children"))
		env.UpdateWorkflow(wire.UpdateSendMessage, answer.ID, &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { fmt.Println(err) }, OnComplete: func(any, error) {},
		}, wire.SendMessageInput{Message: answer, ReturnImmediately: true})
	}, 48*time.Hour)
	task := exampleRun(env, "host", "A table for tonight, please.")
	exampleStatus(task)
	exampleUsage(task)
	// Output:
	// call 1 sees user: A table for tonight, please.
	// TASK_STATE_INPUT_REQUIRED How many adults and children?
	// call 2 sees tool: 2 adults, 3 children
	// call 3 sees tool: 5
	// TASK_STATE_COMPLETED Booked a table for 5.
	// usage: {InputTokens:300 CachedInputTokens:0 OutputTokens:60 Calls:3 CostUSD:0}
}

// A Tool can also be called without a model, by a skill or a router that
// chose it itself: the arguments are checked against its schema first.
func ExampleTool_Call() {
	calc := &workflows.Agent{
		Name: "calc",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			for _, args := range []string{`{"a":40,"b":2}`, `{"a":"forty"}`} {
				out, err := add.Call(ctx, args)
				switch {
				case llm.IsInvalidArguments(err):
					t.Progress(ctx, fmt.Sprintf("%s: invalid arguments", args))
				case err != nil:
					return err
				default:
					t.Progress(ctx, fmt.Sprintf("%s: %s", args, out))
				}
			}
			return nil
		},
	}
	task := exampleRun(exampleEnv(calc, nil, add), "calc", "add")
	for _, m := range task.History[1:] {
		fmt.Println(workflows.MessageText(m))
	}
	// Output:
	// {"a":40,"b":2}: 42
	// {"a":"forty"}: invalid arguments
}

// RegisterTools registers the activity tools on a worker (any
// worker.ActivityRegistry: a worker.Worker, or a test environment as here),
// each under its ActivityName. A workflow tool runs in the workflow and
// needs no registration.
func ExampleRegisterTools() {
	tools := []llm.Tool{add, llm.WorkflowTool("wait", "Waits some seconds.",
		func(ctx workflow.Context, in struct{ Seconds int }) (string, error) {
			return "waited", workflow.Sleep(ctx, time.Duration(in.Seconds)*time.Second)
		})}
	for _, tool := range tools {
		fmt.Printf("%s: activity %q\n", tool.Name(), tool.ActivityName())
	}

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestActivityEnvironment()
	llm.RegisterTools(env, tools...)
	v, err := env.ExecuteActivity(add.ActivityName(), AddInput{A: 1, B: 2})
	if err != nil {
		panic(err)
	}
	var sum int
	_ = v.Get(&sum)
	fmt.Println("tool:add(1, 2) =", sum)
	// Output:
	// add: activity "tool:add"
	// wait: activity ""
	// tool:add(1, 2) = 3
}

// NewOpenAI talks to any OpenAI-compatible Chat Completions endpoint:
// OpenAI, Ollama, vLLM, llama.cpp's server. Here a local fake of one. The
// worker calls the provider in the CompleteChat activity; llm.FromEnv picks
// one from the environment (OPENAI_BASE_URL, ANTHROPIC_API_KEY...).
func ExampleNewOpenAI() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.URL.Path, strings.Contains(string(body), `"model":"llama3.2"`))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "1", "object": "chat.completion", "created": 1700000000, "model": "llama3.2",
			"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Lisbon."}}],
			"usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}`)
	}))
	defer srv.Close()

	p := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "llama3.2"})
	resp, err := p.Complete(context.Background(), llm.Request{
		System:   "Answer in one word.",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Capital of Portugal?"}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s (%s, %s, %+v)\n", resp.Text, resp.Model, resp.StopReason, resp.Usage)
	// Output:
	// /v1/chat/completions true
	// Lisbon. (llama3.2, end, {InputTokens:12 CachedInputTokens:0 OutputTokens:3 CostUSD:0})
}
