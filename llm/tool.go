package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// ToolActivityPrefix starts the activity name of every activity tool:
// "tool:calculator" is the calculator tool.
const ToolActivityPrefix = "tool:"

// ToolActivityOptions are the activity options of an activity tool's call:
// a minute per attempt, three attempts.
var ToolActivityOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
}

// Tool is a function the model may call in a Worker loop. Make one with
// [NewTool] (an activity: I/O, clocks, anything non-deterministic) or
// [WorkflowTool] (workflow code: asking the user, waiting, child workflows).
type Tool struct {
	spec ToolSpec
	// activityFn is the function to register for an activity tool; nil for a workflow tool.
	activityFn any
	// check refuses arguments that do not fit the tool, before any gate.
	check  func(arguments string) error
	invoke func(ctx workflow.Context, call ToolCall) (string, error)
	gate   *Gate // nil: calls run at once
	// parallel marks a workflow tool whose calls may run together
	// (Concurrent); activity tools always may.
	parallel bool
	// activity replaces the default activity options of an activity or MCP
	// tool's calls (ToolActivity).
	activity *workflow.ActivityOptions
	err      error // a bad definition, reported when the loop runs
	// extension marks a tool run by another service (an MCP server's).
	extension bool
	// source is where the tool comes from, for the approval policies
	// (context.source): "go", "workflow", "mcp:SERVER", or ToolSource's.
	source string
	// annotations are what the tool says of itself (Annotate; an MCP
	// server's annotations), for the approval policies.
	annotations wire.ToolAnnotations
}

// concurrent reports whether the tool's calls may run alongside others of
// the same turn.
func (t Tool) concurrent() bool { return t.activityFn != nil || t.parallel }

// Concurrent marks a workflow tool whose calls may run alongside the other
// calls of a turn: it neither asks the user nor waits on anything another
// call could change. Activity tools are concurrent already.
func Concurrent() ToolOption { return func(t *Tool) { t.parallel = true } }

// ToolActivity sets the activity options of the tool's calls, for a tool
// that runs as an activity (NewTool, an MCP server's tool; a workflow tool
// has none): the start-to-close timeout after which a call whose worker
// died is tried again, a heartbeat timeout for a tool that heartbeats, the
// retry policy. Without it a call runs with [ToolActivityOptions] (an MCP
// tool's with [MCPCallOptions]). The loop still sets the summary the
// Temporal UI shows and, for an approved call, the activity ID its
// [CallKey] is made of.
func ToolActivity(ao workflow.ActivityOptions) ToolOption {
	return func(t *Tool) { t.activity = &ao }
}

// toolCallOptions is the activity options of a call: the tool's own
// (ToolActivity) or def, with the summary and an approved call's ID.
func toolCallOptions(ctx workflow.Context, def workflow.ActivityOptions, summary string) workflow.ActivityOptions {
	if own, ok := ctx.Value(toolActivityKey{}).(workflow.ActivityOptions); ok {
		def = own
	}
	ao := withSummary(def, summary)
	if key, ok := ctx.Value(callKeyKey{}).(string); ok {
		ao.ActivityID = key // an approved call: its activity is keyed by the approval
	}
	return ao
}

// toolActivityKey carries a tool's ToolActivity options from run to its
// invoke.
type toolActivityKey struct{}

// Name returns the tool's name.
func (t Tool) Name() string { return t.spec.Name }

// Spec returns the tool as the model sees it.
func (t Tool) Spec() ToolSpec { return t.spec }

// ActivityName returns the tool's activity name, or "" for a workflow tool.
func (t Tool) ActivityName() string {
	if t.activityFn == nil {
		return ""
	}
	return ToolActivityPrefix + t.spec.Name
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func newSpec[In any](name, description string) (ToolSpec, error) {
	if !toolName.MatchString(name) {
		return ToolSpec{Name: name}, fmt.Errorf("tool name %q: want 1 to 64 letters, digits, '_' or '-': %w", name, ErrInvalidRequest)
	}
	schema, err := SchemaFor[In]() //workflowcheck:ignore reflection over a Go type: the same schema on every replay
	if err != nil {
		return ToolSpec{Name: name}, fmt.Errorf("tool %s: %w", name, err)
	}
	return ToolSpec{Name: name, Description: description, Parameters: schema}, nil
}

// NewTool returns a tool that runs fn as its own activity, named
// "tool:"+name, so Temporal retries it and the UI shows each call with its
// arguments. The model's arguments are decoded into In (whose JSON schema,
// from its json and jsonschema tags, the model is shown) and validated with
// its `validate` tags first: invalid arguments go back to the model as an
// error without running fn. Out is returned to the model as JSON (a string
// as is). An agent brings its tools as it brings its activities: list the
// tool in Agent.Activities and the worker registers it (a program built on
// a2aflow.Main needs no other step; [RegisterTools] does it by hand). opts
// may gate the tool's calls ([RequireApproval]); fn can make its side
// effect idempotent with [CallKey].
func NewTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) Tool {
	spec, err := newSpec[In](name, description)
	t := Tool{spec: spec, activityFn: fn, err: err, check: checkArguments[In], source: "go"}
	activityName := ToolActivityPrefix + name
	t.invoke = func(ctx workflow.Context, call ToolCall) (string, error) {
		var in In
		err := decodeValid(call.Arguments, &in, false) //workflowcheck:ignore decoding and validating arguments is deterministic
		if err != nil {
			return "", &argumentsError{err}
		}
		actx := workflow.WithActivityOptions(ctx, toolCallOptions(ctx, ToolActivityOptions, "tool "+name+" "+call.Arguments))
		var out Out
		if err := workflow.ExecuteActivity(actx, activityName, in).Get(ctx, &out); err != nil {
			return "", err
		}
		return resultText(out) //workflowcheck:ignore encoding/json sorts map keys: the same text on every replay
	}
	return t.With(opts...)
}

// checkArguments refuses arguments that do not decode into In or fail its
// validate tags.
func checkArguments[In any](arguments string) error {
	var in In
	if err := decodeValid(arguments, &in, false); err != nil {
		return &argumentsError{err}
	}
	return nil
}

// WorkflowTool returns a tool that runs fn in the workflow. fn is workflow
// code: deterministic, with workflow.Sleep and friends, and free to ask the
// user (see [AskUser]) or wait for an approval, for days; the loop waits with
// it, across restarts. Arguments, results and opts are handled as in
// [NewTool].
func WorkflowTool[In, Out any](name, description string, fn func(ctx workflow.Context, in In) (Out, error), opts ...ToolOption) Tool {
	spec, err := newSpec[In](name, description)
	t := Tool{spec: spec, err: err, check: checkArguments[In], source: "workflow"}
	t.invoke = func(ctx workflow.Context, call ToolCall) (string, error) {
		var in In
		err := decodeValid(call.Arguments, &in, false) //workflowcheck:ignore decoding and validating arguments is deterministic
		if err != nil {
			return "", &argumentsError{err}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		return resultText(out) //workflowcheck:ignore encoding/json sorts map keys: the same text on every replay
	}
	return t.With(opts...)
}

// RegisterTools registers the activity tools among tools on a worker, each
// under its ActivityName. Workflow tools need no registration and are skipped.
func RegisterTools(r worker.ActivityRegistry, tools ...Tool) {
	for _, t := range tools {
		if t.activityFn != nil && t.err == nil {
			r.RegisterActivityWithOptions(t.activityFn, activity.RegisterOptions{Name: t.ActivityName()})
		}
	}
}

// AskUserInput is the argument of the ask_user tool.
type AskUserInput struct {
	Question string `json:"question" jsonschema:"description=The question to ask the user, in one or two sentences." validate:"required"`
}

// AskUser returns the ask_user tool: the model asks the user a question
// through t.Ask, the task is input-required until the answer comes (however
// long that takes), and the answer's text is the tool's result.
func AskUser(t *workflows.Task) Tool {
	return WorkflowTool("ask_user",
		"Ask the user a question and wait for the answer. Use it when you need information only the user has.",
		func(ctx workflow.Context, in AskUserInput) (string, error) {
			answer, err := t.Ask(ctx, "ask_user", in.Question)
			if err != nil {
				return "", err
			}
			return workflows.MessageText(answer), nil
		})
}

// argumentsError is a model's tool call whose arguments do not fit the tool.
type argumentsError struct{ err error }

func (e *argumentsError) Error() string { return "the arguments are " + e.err.Error() }
func (e *argumentsError) Unwrap() error { return e.err }

func resultText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode tool result: %w", err)
	}
	return string(raw), nil
}

// withSummary sets the activity's one-line summary shown in the Temporal UI.
func withSummary(o workflow.ActivityOptions, summary string) workflow.ActivityOptions {
	o.Summary = wire.OneLine(summary, 200)
	return o
}

// Call runs the tool once with arguments (a JSON object; "" is no
// arguments) outside a model loop: a router that picked the tool itself, a
// skill calling it directly. Invalid arguments are an error that says what
// is wrong; a gated tool waits for its approval first, and a rejection is an
// error; the result is what the model would see (JSON, or a string as is).
func (t Tool) Call(ctx workflow.Context, arguments string) (string, error) {
	if t.err != nil {
		return "", t.err
	}
	out, _, err := t.run(ctx, ToolCall{Name: t.spec.Name, Arguments: arguments}, "")
	return out, err
}

// gateOutcome is how a call's gate decided (gateCall), for its trace.
type gateOutcome struct {
	decision, approvalID string
	policyVersion        int64
}

// run makes one call: the arguments checked, the gate passed (reason is
// what the model said with the call), the tool invoked with the arguments
// approved. It also returns how the gate decided.
func (t Tool) run(ctx workflow.Context, call ToolCall, reason string) (string, gateOutcome, error) {
	if t.check != nil {
		// Decoding and validating arguments is deterministic.
		if err := t.check(call.Arguments); err != nil { //workflowcheck:ignore
			return "", gateOutcome{}, err
		}
	}
	args, approvalID, decision, version, err := t.gateCall(ctx, call, reason)
	gate := gateOutcome{decision: decision, approvalID: approvalID, policyVersion: version}
	if err != nil {
		return "", gate, err
	}
	if approvalID != "" && decision != decisionGranted {
		ctx = workflow.WithValue(ctx, callKeyKey{}, "call-"+approvalID)
	}
	if t.activity != nil {
		ctx = workflow.WithValue(ctx, toolActivityKey{}, *t.activity)
	}
	out, err := t.invoke(ctx, ToolCall{ID: call.ID, Name: call.Name, Arguments: string(args)})
	return out, gate, err
}

// toolType is the call's gen_ai.tool.type: an MCP server's tool is an
// extension, run elsewhere; a Go tool a function.
func (t Tool) toolType() string {
	if t.extension {
		return "extension"
	}
	return "function"
}

// CallKey returns, in a tool's activity, a key unique to this call of the
// tool and the same on every retry of it: the task's ID and the call's
// activity ID, which for an approved call names its approval. A tool that
// moves money or books a seat passes it to the service as an idempotency
// key, so that a retry after a crash (Temporal runs an activity at least
// once) is not a second payment.
func CallKey(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	info := activity.GetInfo(ctx)
	return info.WorkflowExecution.ID + "/" + info.ActivityID
}

// IsInvalidArguments reports whether err is a tool call's arguments not
// fitting the tool (from [Tool.Call]): the caller's mistake, not the tool's.
func IsInvalidArguments(err error) bool {
	var argErr *argumentsError
	return errors.As(err, &argErr)
}
