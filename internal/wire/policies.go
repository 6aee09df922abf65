package wire

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"
)

// Approval policies (internal/policies, docs/guides/policies.md): a gate
// asks the worker's policy engine, in the DecidePolicy local activity
// (workerenv.DecidePolicy), whether a tool call or a skill's Approve step
// may go on, must stop, or needs people; the answer, with the version of
// the policies in force, is in the task's history, so a replay decides
// the same. Every name and field here is in running tasks' histories: add,
// do not rename.

// ActivityDecidePolicy is the type of the local activity that judges a
// gate's request (a [PolicyInput], answering a [PolicyDecision]):
// workerenv.DecidePolicy, run by its function, so that no worker needs to
// register it.
const ActivityDecidePolicy = "DecidePolicy"

// PolicyChange is the workflow.GetVersion change ID that guards the
// policy gates: a history recorded before them replays without asking.
const PolicyChange = "approval-policies"

// The actions a policy judges.
const (
	// PolicyCallTool is an LLM tool loop's call of a tool.
	PolicyCallTool = "callTool"
	// PolicyApproveStep is a skill's Task.Approve.
	PolicyApproveStep = "approveStep"
)

// The effects of a PolicyDecision.
const (
	// PolicyNone: no policy in force says anything about the request; the
	// gate decides as it would without policies (a Go or config-file gate,
	// the agent's safe-by-default setting).
	PolicyNone = "none"
	// PolicyAllow: a policy permits it and none asks for people.
	PolicyAllow = "allow"
	// PolicyDeny: a policy forbids it (Reason says why).
	PolicyDeny = "deny"
	// PolicyApprove: people must approve it first (Approvals).
	PolicyApprove = "approve"
	// PolicyFailed: the policies could not decide (a store that does not
	// answer, a policy that fails to evaluate): people must approve it, as
	// the gate's fallback says; Reason says what failed.
	PolicyFailed = "failed"
)

// ToolAnnotations are what a tool says of itself (MCP's tool annotations:
// readOnlyHint, destructiveHint, idempotentHint, openWorldHint; an option
// for Go tools), which policies read in context.annotations.
type ToolAnnotations struct {
	ReadOnly    bool `json:"readOnly,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	OpenWorld   bool `json:"openWorld,omitempty"`
}

// PolicyInput is the argument of the DecidePolicy local activity: one
// request to judge.
type PolicyInput struct {
	// Action is PolicyCallTool or PolicyApproveStep.
	Action string `json:"action"`
	// Caller is the principal the task acts for (its owner; "" without
	// authentication) and Tenant its tenant (a2aflow's tenants are its
	// principals: the task's owner).
	Caller string `json:"caller,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	// Agent, TaskID and ContextID are the resource: the task of the agent.
	Agent     string `json:"agent"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId,omitempty"`
	// Tool and Source name a tool call (Source: "go", "workflow", "mcp:SERVER",
	// "builtin", "agent:REMOTE"); Arguments are its arguments (a JSON
	// object) and Annotations what the tool says of itself.
	Tool        string          `json:"tool,omitempty"`
	Source      string          `json:"source,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Annotations ToolAnnotations `json:"annotations,omitempty"`
	// Step, Title and Groups describe an Approve step: its name
	// (ApprovalRequest.Step), its title and the groups the skill asks.
	Step   string   `json:"step,omitempty"`
	Title  string   `json:"title,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// PolicyApproval is one approval a policy requires: the annotations of
// the policy that asks for it.
type PolicyApproval struct {
	// Policy names the policy (SCOPE#ID).
	Policy string   `json:"policy"`
	Groups []string `json:"groups"`
	// Quorum is how many must approve (N of M); 0 is one.
	Quorum int `json:"quorum,omitempty"`
	// Deadline is how long the approvers have (0: forever), OnDeadline
	// what the deadline does ("reject", "approve", "escalate"),
	// EscalateTo and EscalateDeadline the escalation's.
	Deadline         time.Duration `json:"deadline,omitempty"`
	OnDeadline       string        `json:"onDeadline,omitempty"`
	EscalateTo       []string      `json:"escalateTo,omitempty"`
	EscalateDeadline time.Duration `json:"escalateDeadline,omitempty"`
	// Title, when set, is the approval's title.
	Title string `json:"title,omitempty"`
}

// PolicyDecision is the result of DecidePolicy: what the policies in force
// say of a PolicyInput.
type PolicyDecision struct {
	// Effect is PolicyNone, PolicyAllow, PolicyDeny, PolicyApprove or
	// PolicyFailed.
	Effect string `json:"effect"`
	// Version is the policy version in force (0: none was ever set, or
	// the worker keeps no policies).
	Version int64 `json:"version"`
	// Policies name the policies that decided (SCOPE#ID).
	Policies []string `json:"policies,omitempty"`
	// Reason says why: a forbidding policy's @reason, what failed.
	Reason string `json:"reason,omitempty"`
	// Approvals are the approvals PolicyApprove requires, in turn.
	Approvals []PolicyApproval `json:"approvals,omitempty"`
}

// PolicyDecisionFailed is the decision of a gate whose policy engine did
// not answer.
func PolicyDecisionFailed(reason string) PolicyDecision {
	return PolicyDecision{Effect: PolicyFailed, Reason: reason}
}

// PolicyJudge is how a gate asks the policies of its task: the task's run
// implements it and puts itself on the skill's context
// ([WithPolicyJudge]); package llm's tool gates read it there
// ([PolicyJudgeOf]).
type PolicyJudge interface {
	// JudgePolicy fills in the request's caller, tenant, agent, task and
	// context and runs the DecidePolicy local activity; an activity that
	// fails is PolicyFailed. It reports false, and runs nothing, in a
	// history recorded before the policy gates ([PolicyChange]): the gate
	// then decides as it did.
	JudgePolicy(ctx workflow.Context, in PolicyInput) (PolicyDecision, bool)
}

type policyJudgeKey struct{}

// WithPolicyJudge returns ctx carrying the run's PolicyJudge.
func WithPolicyJudge(ctx workflow.Context, j PolicyJudge) workflow.Context {
	return workflow.WithValue(ctx, policyJudgeKey{}, j)
}

// PolicyJudgeOf returns the PolicyJudge of the task whose skill ctx (or a
// context derived from it) belongs to, and false outside a task.
func PolicyJudgeOf(ctx workflow.Context) (PolicyJudge, bool) {
	j, ok := ctx.Value(policyJudgeKey{}).(PolicyJudge)
	return j, ok && j != nil
}
