package llm

import (
	"encoding/json"
	"fmt"
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
)

// gateCall runs a gated call's approval. It returns the arguments to call
// the tool with (the approved edit, or the model's), the ID of the
// approval the call runs under ("" when it needed none), how the gate
// decided (decisionNone...), or an error: a rejection, which the model
// reads as the tool's result, or the context's.
func (t Tool) gateCall(ctx workflow.Context, call ToolCall, reason string) (json.RawMessage, string, string, error) {
	args := json.RawMessage(call.Arguments)
	if len(strings.TrimSpace(call.Arguments)) == 0 {
		args = json.RawMessage("{}")
	}
	g := t.gate
	if g == nil {
		return args, "", decisionNone, nil
	}
	if g.When.test != nil {
		// A pure function of the arguments.
		gated, err := g.When.test(args) //workflowcheck:ignore
		if err == nil && !gated {
			return args, "", decisionNone, nil
		}
	}
	task, ok := workflows.TaskFrom(ctx)
	if !ok {
		return nil, "", "", fmt.Errorf("tool %s needs approval, and its call runs outside a task", t.spec.Name)
	}
	if a, ok := task.Granted(GrantKey(t.spec.Name)); ok {
		workflow.GetLogger(ctx).Info("gated tool call runs under a grant", "tool", t.spec.Name, "approval", a.ID)
		return args, a.ID, decisionGranted, nil
	}
	req := g.Request
	if req.Title == "" {
		req.Title = "Call " + t.spec.Name + " " + wire.OneLine(string(args), 160) + "?"
	}
	if req.Details == "" {
		req.Details = reason
	}
	req.Action = ToolCallAction{Tool: t.spec.Name, Arguments: args, Reason: reason}
	req.EditSchema = t.spec.Parameters
	if g.Grantable {
		req.GrantKey = GrantKey(t.spec.Name)
	}
	a, err := task.Approve(ctx, req)
	if err != nil {
		return nil, "", "", err
	}
	if !a.Approved() {
		return nil, a.ID, decisionRejected, &rejectedCallError{tool: t.spec.Name, approval: a}
	}
	decision := decisionApproved
	if edited := a.Arguments(); len(edited) > 0 {
		args, decision = edited, decisionEdited
	}
	return args, a.ID, decision, nil
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
