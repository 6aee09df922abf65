package llmagents

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	_ "time/tzdata" // the clock tool knows every IANA time zone, also in a minimal container

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/expr-lang/expr"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// NotConfiguredMessage is the assistant's answer when the worker has no LLM.
const NotConfiguredMessage = "The assistant needs a large language model and none is configured. " +
	"Set OPENAI_BASE_URL (any OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama) and OPENAI_API_KEY if it needs one, " +
	"or ANTHROPIC_API_KEY or GEMINI_API_KEY, and A2AFLOW_LLM_MODEL to choose the model, where the a2aflow worker runs; then restart it."

// ReplyFromLLM runs the model with tools on thread and replies with its
// answer: the assistant's and every config-file LLM agent's last step.
func ReplyFromLLM(ctx workflow.Context, t *workflows.Task, thread workflows.Thread, tools []llm.Tool, opts ...llm.Option) error {
	answer, err := llm.Worker(tools...).Run(ctx, thread, opts...)
	if llm.IsNotConfigured(err) {
		return errors.New(NotConfiguredMessage)
	}
	if err != nil {
		return err
	}
	if answer == "" {
		answer = "(The model gave no answer.)"
	}
	t.Reply(answer)
	return nil
}

// ActivityTools returns the assistant's activity tools. The worker registers
// them with llm.RegisterTools(w, agents.ActivityTools()...).
func ActivityTools() []llm.Tool {
	return []llm.Tool{clockTool, calculatorTool}
}

// ClockInput is the argument of the clock tool.
type ClockInput struct {
	TimeZone string `json:"timeZone,omitempty" jsonschema:"description=IANA time zone such as Europe/Lisbon or Asia/Tokyo; default UTC"`
}

// ClockOutput is the clock tool's result.
type ClockOutput struct {
	UTC      string `json:"utc"`
	Local    string `json:"local"`
	TimeZone string `json:"timeZone"`
	Weekday  string `json:"weekday"`
}

var clockTool = llm.NewTool("clock", "Returns the current date and time, in UTC and in a time zone.", clockNow)

// clockNow is the clock tool. It is an activity: reading the clock in workflow
// code would not replay.
func clockNow(ctx context.Context, in ClockInput) (ClockOutput, error) {
	zone := in.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return ClockOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("unknown time zone %q; use an IANA name such as Europe/Lisbon", zone), activities.ErrTypeInvalidInput, nil)
	}
	now := time.Now()
	local := now.In(loc)
	return ClockOutput{
		UTC:      now.UTC().Format(time.RFC3339),
		Local:    local.Format(time.RFC3339),
		TimeZone: zone,
		Weekday:  local.Weekday().String(),
	}, nil
}

// CalculatorInput is the argument of the calculator tool.
type CalculatorInput struct {
	Expression string `json:"expression" jsonschema:"description=An arithmetic expression: numbers, + - * / % ** and parentheses, sqrt pow ln log10 exp sin cos tan abs ceil floor round min max, pi and e. Example: 2340 * 17.5 / 100" validate:"required,max=1000"`
}

// CalculatorOutput is the calculator tool's result.
type CalculatorOutput struct {
	Expression string `json:"expression"`
	Result     string `json:"result"`
}

var calculatorTool = llm.NewTool("calculator", "Evaluates an arithmetic expression exactly and returns the result.", calculate)

// calculatorEnv holds the calculator's functions and constants besides expr's
// math builtins.
var calculatorEnv = map[string]any{
	"sqrt": math.Sqrt, "pow": math.Pow, "ln": math.Log, "log10": math.Log10, "exp": math.Exp,
	"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "pi": math.Pi, "e": math.E,
}

// calculate is the calculator tool, on the expr-lang evaluator with every
// builtin off except arithmetic ones: an expression cannot reach anything
// but numbers, and expr bounds its size and memory.
func calculate(ctx context.Context, in CalculatorInput) (CalculatorOutput, error) {
	opts := []expr.Option{expr.Env(calculatorEnv), expr.DisableAllBuiltins()}
	for _, name := range []string{"abs", "ceil", "floor", "round", "min", "max"} {
		opts = append(opts, expr.EnableBuiltin(name))
	}
	invalid := func(err error) error {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("cannot evaluate %q: %v", in.Expression, err), activities.ErrTypeInvalidInput, nil)
	}
	program, err := expr.Compile(in.Expression, opts...)
	if err != nil {
		return CalculatorOutput{}, invalid(err)
	}
	out, err := expr.Run(program, calculatorEnv)
	if err != nil {
		return CalculatorOutput{}, invalid(err)
	}
	var result string
	switch v := out.(type) {
	case int:
		result = strconv.Itoa(v)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return CalculatorOutput{}, invalid(fmt.Errorf("the result is %v", v))
		}
		result = strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		result = strconv.FormatBool(v)
	default:
		return CalculatorOutput{}, invalid(fmt.Errorf("the result is not a number but %T", out))
	}
	return CalculatorOutput{Expression: in.Expression, Result: result}, nil
}

// CallAgentInput is the argument of the call_agent tool.
type CallAgentInput struct {
	Agent   string `json:"agent" jsonschema:"description=Name of the agent in the directory (see list_agents)" validate:"required,max=200"`
	Message string `json:"message" jsonschema:"description=The request to send it, complete and self-contained" validate:"required"`
}

// CallAgentOutput is the call_agent tool's result.
type CallAgentOutput struct {
	Agent     string   `json:"agent"`
	State     string   `json:"state"`
	Answer    string   `json:"answer"`
	Artifacts []string `json:"artifacts,omitempty"`
}

// CallAgentTool delegates to a remote agent with Task.CallAgent: durable,
// with the remote agent's questions asked of our user, and its artifacts
// copied into this task. A remote task that fails or is rejected is a result
// the model reads, not the end of this task.
func CallAgentTool(t *workflows.Task) llm.Tool {
	return llm.WorkflowTool("call_agent", "Delegates a request to a remote A2A agent from the directory and returns its answer; its artifacts are saved to this task.",
		func(ctx workflow.Context, in CallAgentInput) (CallAgentOutput, error) {
			return callAgent(ctx, t, in.Agent, in.Message)
		})
}

// callAgent sends message to the remote agent with Task.CallAgent and
// returns what the model reads of the outcome.
func callAgent(ctx workflow.Context, t *workflows.Task, agent, message string) (CallAgentOutput, error) {
	res, err := t.CallAgent(ctx, workflows.CallRequest{Agent: agent, Text: message})
	var remoteErr *workflows.RemoteTaskError
	if errors.As(err, &remoteErr) {
		return CallAgentOutput{Agent: agent, State: string(remoteErr.State), Answer: remoteErr.Reason}, nil
	}
	if err != nil {
		return CallAgentOutput{}, err
	}
	out := CallAgentOutput{Agent: agent, State: string(a2a.TaskStateCompleted), Answer: res.Text()}
	for _, a := range res.Artifacts {
		out.Artifacts = append(out.Artifacts, a.Name)
	}
	return out, nil
}

// ArtifactView is how the list_artifacts tool shows an artifact to the model.
type ArtifactView struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version any    `json:"version,omitempty"`
	Text    string `json:"text"`
}

// ListArtifactsTool returns the task's artifacts, read in the workflow: they
// are workflow state, so no activity is needed.
func ListArtifactsTool(t *workflows.Task) llm.Tool {
	return llm.WorkflowTool("list_artifacts", "Lists the artifacts (saved documents) of this task with their text.",
		func(ctx workflow.Context, _ struct{}) ([]ArtifactView, error) {
			views := []ArtifactView{}
			for _, a := range t.Artifacts() {
				text := ""
				for _, p := range a.Parts {
					text += p.Text()
				}
				if r := []rune(text); len(r) > 4000 {
					text = string(r[:4000]) + "…"
				}
				views = append(views, ArtifactView{ID: string(a.ID), Name: a.Name, Version: a.Metadata["version"], Text: text})
			}
			return views, nil
		})
}

// SaveArtifactInput is the argument of the save_artifact tool.
type SaveArtifactInput struct {
	Name string `json:"name" jsonschema:"description=Short name such as packing-list; saving a name again makes a new version" validate:"required,max=100"`
	Text string `json:"text" jsonschema:"description=The document in Markdown" validate:"required"`
}

// SaveArtifactTool saves a document as an artifact of the task.
func SaveArtifactTool(t *workflows.Task) llm.Tool {
	return llm.WorkflowTool("save_artifact", "Saves a document as an artifact of this task, for the user to keep.",
		func(ctx workflow.Context, in SaveArtifactInput) (ArtifactView, error) {
			a := workflows.TextArtifact(in.Name, in.Text)
			a.Parts[0].MediaType = "text/markdown"
			saved := t.Artifact(ctx, a)
			return ArtifactView{ID: string(saved.ID), Name: saved.Name, Version: saved.Metadata["version"], Text: "saved"}, nil
		})
}

// DirectoryTools returns the list_agents and remember_agent tools over d,
// activities the worker registers with llm.RegisterTools. Workflow code
// (the router, the assistant) only needs their names and schemas and may
// pass nil.
func DirectoryTools(d *activities.Directory) []llm.Tool {
	return []llm.Tool{
		llm.NewTool("list_agents", "Lists the remote A2A agents this agent knows (its directory), with their descriptions and skills; format \"simple\" gives names, URLs and health only.", d.ListAgents),
		llm.NewTool("remember_agent", "Fetches the agent card at a URL and adds that A2A agent to the directory, so tasks can be delegated to it.", d.RememberAgent),
	}
}

// BuiltinTools returns the built-in activity tools (ActivityTools and the
// directory tools over d) as the activities of a pseudo-agent, which the
// worker registers before the agents' own: an agent that lists one of them
// shares it, and an agent's own tool of one of their names is refused.
func BuiltinTools(d *activities.Directory) *workflows.Agent {
	a := &workflows.Agent{Name: "(built-in tools)"}
	for _, t := range append(ActivityTools(), DirectoryTools(d)...) {
		a.Activities = append(a.Activities, t)
	}
	return a
}
