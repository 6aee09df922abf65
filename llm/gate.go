package llm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Gate makes a tool's calls wait for a person's approval before they run:
// the task waits input-required on an ordinary approval record (the inbox,
// `a2aflow approvals`, REST, A2A decision parts, approval webhooks) showing
// the tool, its arguments and the model's reason. Approvers approve, reject
// with a comment (the model reads the rejection as the tool's result and
// carries on), or approve edited arguments, which the tool's parameter
// schema checks (the record keeps both). An approved call runs once: its
// activity is keyed by the approval, and the tool gets the key
// ([CallKey]) to make its side effect idempotent across retries.
//
// The gate applies to any tool: Go tools ([NewTool], [WorkflowTool] with
// [RequireApproval]), MCP tools and remote agents' skills
// ([Tool.With]), and the built-in tools of config-file agents.
type Gate struct {
	// Request is the approval each gated call waits on: Groups (required),
	// Required (N of M), Timeout, OnTimeout (default: reject, which the
	// model reads as a rejection), EscalateTo, EscalateTimeout. A Title or
	// Details set here are kept; by default the title names the tool and
	// its arguments and the details are the model's reason. Action and
	// EditSchema are the call's.
	Request workflows.ApprovalRequest
	// When, if set, gates only the calls for which it holds (see [If]);
	// the zero Condition gates every call.
	When Condition
	// Grantable lets an approver approve the tool for the rest of the task:
	// its later calls then run without asking (workflows.Task.Granted; the
	// grant crosses continue-as-new).
	Grantable bool
}

// Condition is a test on a tool call's arguments; make one with [If].
type Condition struct {
	test func(args json.RawMessage) (bool, error)
	src  string
}

// If returns the condition cond on a call's arguments decoded into In (a
// struct of the tool's parameters, or map[string]any for any tool), e.g.
//
//	llm.If(func(in PayInvoiceInput) bool { return in.Amount > 1000 })
//
// cond runs in the workflow: it must be deterministic. Arguments that do
// not decode into In make the call gated.
func If[In any](cond func(In) bool) Condition {
	return Condition{src: fmt.Sprintf("%T", cond), test: func(args json.RawMessage) (bool, error) {
		var in In
		if len(strings.TrimSpace(string(args))) == 0 {
			args = json.RawMessage("{}")
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return true, err
		}
		return cond(in), nil
	}}
}

// ToolOption changes a tool: give it to [NewTool] or [WorkflowTool], or to
// [Tool.With] for a tool made elsewhere.
type ToolOption func(*Tool)

// RequireApproval gates the tool's calls with g.
func RequireApproval(g Gate) ToolOption {
	return func(t *Tool) {
		if len(g.Request.Groups) == 0 && t.err == nil {
			t.err = fmt.Errorf("tool %s: its approval gate names no approver group: %w", t.spec.Name, ErrInvalidRequest)
		}
		gate := g
		t.gate = &gate
	}
}

// With returns the tool with opts applied: a gate for an MCP tool, a
// remote agent's skill, a built-in one.
func (t Tool) With(opts ...ToolOption) Tool {
	for _, o := range opts {
		o(&t)
	}
	return t
}

// Gated reports whether the tool has an approval gate.
func (t Tool) Gated() bool { return t.gate != nil }

// GrantKey is the key under which approvers grant a tool for the rest of
// a task (workflows.Task.Granted).
func GrantKey(tool string) string { return "tool:" + tool }

// ToolCallAction is the Action of a gated call's approval request: what the
// approver sees and decides on.
type ToolCallAction struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Reason is what the model said with the call, if anything.
	Reason string `json:"reason,omitempty"`
}

// callKeyKey keys, in the workflow context of a tool call, the key the
// call's activity runs under.
type callKeyKey struct{}

// How a gate let a call through or stopped it (wire.ToolCallTrace.Decision).
const (
	decisionNone     = "none"
	decisionGranted  = "granted"
	decisionApproved = "approved"
	decisionEdited   = "approved_edited"
	decisionRejected = "rejected"
	// decisionAllowed: the approval policies allowed it without a person;
	// decisionDenied: they forbade it.
	decisionAllowed = "allowed"
	decisionDenied  = "denied"
)

// gateCall runs a gated call's approval. It returns the arguments to call
// the tool with (the approved edit, or the model's), the ID of the
// approval the call runs under ("" when it needed none), how the gate
// decided (decisionNone...), the version of the policies that judged it,
// or an error: a rejection or a policy's refusal, which the model reads as
// the tool's result, or the context's.
//
// In a task whose history has policy gates (wire.PolicyChange), the
// approval policies in force judge every call first (judgedCall); in one
// recorded before, the tool's own gate decides as it always did.
func (t Tool) gateCall(ctx workflow.Context, call ToolCall, reason string) (json.RawMessage, string, string, int64, error) {
	args := json.RawMessage(call.Arguments)
	if len(strings.TrimSpace(call.Arguments)) == 0 {
		args = json.RawMessage("{}")
	}
	if judge, ok := wire.PolicyJudgeOf(ctx); ok {
		if _, inTask := workflows.TaskFrom(ctx); inTask {
			d, judged := judge.JudgePolicy(ctx, wire.PolicyInput{Action: wire.PolicyCallTool, Tool: t.spec.Name,
				Source: t.source, Arguments: args, Annotations: t.annotations})
			if judged {
				return t.judgedCall(ctx, args, reason, d)
			}
		}
	}
	g := t.gate
	if g == nil || !t.gateHolds(args) {
		return args, "", decisionNone, 0, nil
	}
	task, ok := workflows.TaskFrom(ctx)
	if !ok {
		return nil, "", "", 0, fmt.Errorf("tool %s needs approval, and its call runs outside a task", t.spec.Name)
	}
	if a, ok := task.Granted(GrantKey(t.spec.Name)); ok {
		workflow.GetLogger(ctx).Info("gated tool call runs under a grant", "tool", t.spec.Name, "approval", a.ID)
		return args, a.ID, decisionGranted, 0, nil
	}
	args, id, decision, err := t.askApprovals(ctx, task, args, reason, []workflows.ApprovalRequest{g.Request})
	return args, id, decision, 0, err
}

// gateHolds reports whether the tool's own gate asks for an approval of a
// call with args: it has one, and its condition holds (or fails).
func (t Tool) gateHolds(args json.RawMessage) bool {
	if t.gate == nil {
		return false
	}
	if t.gate.When.test != nil {
		// A pure function of the arguments.
		gated, err := t.gate.When.test(args) //workflowcheck:ignore
		if err == nil && !gated {
			return false
		}
	}
	return true
}

// judgedCall decides a call the policies judged d, by the rule of
// docs/guides/policies.md: a forbid refuses it (the model reads why); the
// approvals a policy requires are asked in turn; a call the policies could
// not judge waits for a person (the tool's gate's groups, else the loop's
// safe-by-default approvers, else DefaultPolicyApprovers); the tool's own
// gate (a Go gate, a config file's tool-approvals) is a require-approval
// of the tool's layer, which beats a policy's allow; and a call no policy
// spoke of and no gate holds runs, unless the loop is safe by default
// (WithSafeByDefault), when its approvers decide.
func (t Tool) judgedCall(ctx workflow.Context, args json.RawMessage, reason string, d wire.PolicyDecision) (json.RawMessage, string, string, int64, error) {
	task, _ := workflows.TaskFrom(ctx)
	record := &workflows.PolicyRecord{Version: d.Version, Effect: d.Effect, Policies: d.Policies, Reason: d.Reason}
	if d.Effect == wire.PolicyDeny {
		return nil, "", decisionDenied, d.Version, &deniedCallError{tool: t.spec.Name, reason: d.Reason, version: d.Version}
	}
	safe, _ := ctx.Value(safeByDefaultKey{}).([]string)
	base := workflows.ApprovalRequest{}
	if t.gate != nil {
		base = t.gate.Request
	}
	var asks []workflows.ApprovalRequest
	switch {
	case d.Effect == wire.PolicyApprove:
		for _, pa := range d.Approvals {
			asks = append(asks, policyRequest(base, pa))
		}
		// The tool's own gate is one more approval, of the tool's layer,
		// last (unless a policy asks the same groups already).
		if t.gateHolds(args) && !slices.ContainsFunc(asks, func(r workflows.ApprovalRequest) bool {
			return slices.Equal(r.Groups, base.Groups)
		}) {
			asks = append(asks, base)
		}
	case d.Effect == wire.PolicyFailed:
		req := base
		if len(req.Groups) == 0 {
			req.Groups = safe
		}
		if len(req.Groups) == 0 {
			req.Groups = DefaultPolicyApprovers
		}
		req.Details = "The approval policies could not decide (" + d.Reason + "): a person decides."
		asks = append(asks, req)
	case t.gateHolds(args):
		asks = append(asks, base)
	case d.Effect == wire.PolicyNone && len(safe) > 0:
		asks = append(asks, workflows.ApprovalRequest{Groups: safe})
	case d.Effect == wire.PolicyAllow:
		return args, "", decisionAllowed, d.Version, nil
	default:
		return args, "", decisionNone, d.Version, nil
	}
	if a, ok := task.Granted(GrantKey(t.spec.Name)); ok {
		workflow.GetLogger(ctx).Info("gated tool call runs under a grant", "tool", t.spec.Name, "approval", a.ID)
		return args, a.ID, decisionGranted, d.Version, nil
	}
	for i := range asks {
		asks[i].Policy = record
	}
	args, id, decision, err := t.askApprovals(ctx, task, args, reason, asks)
	return args, id, decision, d.Version, err
}

// askApprovals asks reqs in turn for the call with args: each shows the
// tool, its arguments and the model's reason; a rejection ends the call,
// and an approval with edited arguments passes them on.
func (t Tool) askApprovals(ctx workflow.Context, task *workflows.Task, args json.RawMessage, reason string, reqs []workflows.ApprovalRequest) (json.RawMessage, string, string, error) {
	decision, id := decisionApproved, ""
	for _, req := range reqs {
		if req.Title == "" {
			req.Title = "Call " + t.spec.Name + " " + wire.OneLine(string(args), 160) + "?"
		}
		if req.Details == "" {
			req.Details = reason
		}
		req.Action = ToolCallAction{Tool: t.spec.Name, Arguments: args, Reason: reason}
		req.EditSchema = t.spec.Parameters
		if t.gate != nil && t.gate.Grantable {
			req.GrantKey = GrantKey(t.spec.Name)
		}
		a, err := task.Approve(ctx, req)
		if err != nil {
			return nil, "", "", err
		}
		if !a.Approved() {
			return nil, a.ID, decisionRejected, &rejectedCallError{tool: t.spec.Name, approval: a}
		}
		if edited := a.Arguments(); len(edited) > 0 {
			args, decision = edited, decisionEdited
		}
		id = a.ID
	}
	return args, id, decision, nil
}

// policyRequest is base as the policy approval pa asks it: pa's groups
// and quorum; its deadline, when set, with its escalation; its title, when
// set (as workflows' Approve of a step does).
func policyRequest(base workflows.ApprovalRequest, pa wire.PolicyApproval) workflows.ApprovalRequest {
	req := base
	req.Groups = append([]string(nil), pa.Groups...)
	req.Required = max(pa.Quorum, 1)
	if pa.Deadline > 0 {
		req.Timeout, req.OnTimeout = pa.Deadline, workflows.DeadlineAction(pa.OnDeadline)
		if req.OnTimeout == "" {
			req.OnTimeout = workflows.RejectAtDeadline
		}
		req.EscalateTo, req.EscalateTimeout = append([]string(nil), pa.EscalateTo...), pa.EscalateDeadline
	}
	if pa.Title != "" {
		req.Title = pa.Title
	}
	return req
}

// DefaultPolicyApprovers decide a tool call the approval policies could
// not judge when neither the tool's gate nor the loop (WithSafeByDefault)
// names approvers.
var DefaultPolicyApprovers = []string{"operators"}

// deniedCallError is a call a policy forbade: the model reads it as the
// tool's result.
type deniedCallError struct {
	tool, reason string
	version      int64
}

func (e *deniedCallError) Error() string {
	reason := e.reason
	if reason == "" {
		reason = "a policy forbids it"
	}
	return fmt.Sprintf("the call of %s is not allowed: %s (approval policies, version %d); do not call it again with the same arguments unless the user asks",
		e.tool, reason, e.version)
}

// rejectedCallError is a gated call an approver (or the deadline) refused:
// the model reads it as the tool's result.
type rejectedCallError struct {
	tool     string
	approval *workflows.Approval
}

func (e *rejectedCallError) Error() string {
	var by []string
	for _, d := range e.approval.Decisions {
		if d.Approved {
			continue
		}
		s := d.Approver
		if d.Comment != "" {
			s += ": " + d.Comment
		}
		by = append(by, s)
	}
	if len(by) == 0 {
		by = append(by, e.approval.State)
	}
	return fmt.Sprintf("the call of %s was not approved (approval %s, rejected by %s); do not call it again with the same arguments unless the user asks",
		e.tool, e.approval.ID, strings.Join(by, "; "))
}

// ToolAnnotations are what a tool says of itself, as MCP's tool
// annotations do: the approval policies read them in
// context.annotations (a safe-by-default agent's policy may let read-only
// tools through, say). MCP tools carry their server's; a Go tool gets
// them with [Annotate].
type ToolAnnotations struct {
	// ReadOnly: the tool changes nothing.
	ReadOnly bool
	// Destructive: the tool may destroy or overwrite (meaningful when not
	// ReadOnly).
	Destructive bool
	// Idempotent: calling it again with the same arguments changes nothing
	// more.
	Idempotent bool
	// OpenWorld: the tool reaches beyond the system (the web, other
	// people).
	OpenWorld bool
}

// Annotate says what the tool is (read-only, destructive...), for the
// approval policies.
func Annotate(a ToolAnnotations) ToolOption {
	return func(t *Tool) {
		t.annotations = wire.ToolAnnotations{ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld}
	}
}

// ToolSource names where the tool comes from for the approval policies
// (context.source), instead of "go" (NewTool) or "workflow"
// (WorkflowTool): "builtin", "agent:weather". An MCP tool's is
// "mcp:SERVER".
func ToolSource(source string) ToolOption { return func(t *Tool) { t.source = source } }

// safeByDefaultKey carries WithSafeByDefault's approvers from Run to the
// gates of its calls.
type safeByDefaultKey struct{}

// WithDefaultSafeByDefault returns ctx whose tool loops are safe by
// default with approvers (WithSafeByDefault) unless a loop sets its own:
// how a server (serve --safe-by-default) makes every agent, built-in ones
// too, safe by default; the worker wraps each agent's handler.
func WithDefaultSafeByDefault(ctx workflow.Context, approvers ...string) workflow.Context {
	if len(approvers) == 0 {
		return ctx
	}
	return workflow.WithValue(ctx, safeByDefaultKey{}, append([]string(nil), approvers...))
}

// WithSafeByDefault makes the loop safe by default: every tool call that
// no approval policy allows (and none forbids or requires approvals of)
// waits for an approval of approvers (none: DefaultPolicyApprovers), as if
// every tool had a gate. The
// policies are the way to let calls through: a read-only tool, a small
// amount (docs/guides/policies.md). In a task recorded before policy
// gates it changes nothing.
func WithSafeByDefault(approvers ...string) Option {
	if len(approvers) == 0 {
		approvers = DefaultPolicyApprovers
	}
	return func(o *callOptions) { o.safeByDefault = append([]string(nil), approvers...) }
}
