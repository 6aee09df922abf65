package workflows

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
)

// PolicyRecord is what the approval policies in force said of a request
// (docs/guides/policies.md): kept on the approval record, so that it names
// the version a gate was decided under.
type PolicyRecord struct {
	// Version is the policy version in force (0: none was ever set).
	Version int64 `json:"version"`
	// Effect is "none" (no policy spoke), "allow", "deny", "approve" or
	// "failed" (the policies could not decide: a person decides).
	Effect string `json:"effect"`
	// Policies name the policies that decided (SCOPE#ID).
	Policies []string `json:"policies,omitempty"`
	// Reason is a forbid's @reason, or what failed.
	Reason string `json:"reason,omitempty"`
}

// policyRecordOf is the record of decision d.
func policyRecordOf(d wire.PolicyDecision) *PolicyRecord {
	return &PolicyRecord{Version: d.Version, Effect: d.Effect, Policies: d.Policies, Reason: d.Reason}
}

// policyDecideOptions bound the DecidePolicy local activity: a store that
// does not answer within them fails toward the person.
var policyDecideOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    5 * time.Second,
	ScheduleToCloseTimeout: 12 * time.Second,
	RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaximumAttempts: 2},
}

var _ wire.PolicyJudge = (*run)(nil)

// JudgePolicy implements wire.PolicyJudge: the request of a gate of this
// task, judged by the DecidePolicy local activity (its result, with the
// version, is the marker in history that a replay reads instead of
// judging again). A history recorded before policy gates is not judged.
func (r *run) JudgePolicy(ctx workflow.Context, in wire.PolicyInput) (wire.PolicyDecision, bool) {
	if r.fork.replaysWithout(wire.ActivityDecidePolicy) {
		// A fork of a task recorded before policy gates: its replay
		// decides as the original did; once live, the policies judge.
		return wire.PolicyDecision{}, false
	}
	if workflow.GetVersion(ctx, wire.PolicyChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return wire.PolicyDecision{}, false
	}
	in.Caller, in.Tenant = r.owner, r.owner
	in.Agent, in.TaskID, in.ContextID = r.agentName, string(r.task.ID), r.task.ContextID
	opts := policyDecideOptions
	what := in.Tool
	if in.Action == wire.PolicyApproveStep {
		what = "step " + in.Step
	}
	opts.Summary = wire.OneLine("policy: "+in.Action+" "+what, 200)
	var d wire.PolicyDecision
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, opts), workerenv.DecidePolicy, in).Get(ctx, &d)
	if err != nil {
		r.logger.Warn("the policies could not decide; a person will", "action", in.Action, "error", err)
		return wire.PolicyDecisionFailed("the policies could not decide: " + err.Error()), true
	}
	return d, true
}

// approveByPolicy is Approve of a step the policies judged d: a request
// they allow or deny is settled at once, by "policy", on a record of its
// own; one they require approvals of asks each in turn, in the policies'
// groups (each with the skill's request but for what the policy sets);
// one they could not judge, or none spoke of, asks as the skill asked.
func (t *Task) approveByPolicy(ctx workflow.Context, req ApprovalRequest, n int, d wire.PolicyDecision, o askOptions, resumeState json.RawMessage) (*Approval, error) {
	r := t.r
	if d.Effect != wire.PolicyNone || d.Version > 0 {
		req.Policy = policyRecordOf(d) // none in force: nothing to record
	}
	switch d.Effect {
	case wire.PolicyAllow, wire.PolicyDeny:
		a := r.requestApprovalNumbered(ctx, req, n)
		if a.State == ApprovalPending { // no earlier decision settled it
			comment := fmt.Sprintf("allowed by %v (policy version %d)", d.Policies, d.Version)
			if d.Effect == wire.PolicyDeny {
				comment = fmt.Sprintf("%s (%v, policy version %d)", d.Reason, d.Policies, d.Version)
			}
			a.Decisions = append(a.Decisions, ApprovalDecision{Approved: d.Effect == wire.PolicyAllow, Approver: PolicyApprover,
				Comment: comment, Time: workflow.Now(ctx).UTC(), Via: PolicyApprover})
			a.State = map[bool]string{true: ApprovalApproved, false: ApprovalRejected}[d.Effect == wire.PolicyAllow]
		}
		r.approvalsChanged(ctx)
		r.countApproval(ctx, a)
		settled := *a
		settled.Decisions = append([]ApprovalDecision(nil), a.Decisions...)
		return &settled, nil
	case wire.PolicyApprove:
		var last *Approval
		for i, pa := range d.Approvals {
			preq := policyRequest(req, pa)
			var a *Approval
			if i == 0 {
				a = r.requestApprovalNumbered(ctx, preq, n)
			} else {
				a = r.requestApproval(ctx, preq)
			}
			a, err := t.awaitApproval(ctx, a, preq, o, resumeState, false)
			if err != nil || !a.Approved() {
				return a, err
			}
			last = a
		}
		return last, nil
	}
	return t.awaitApproval(ctx, r.requestApprovalNumbered(ctx, req, n), req, o, resumeState, false)
}

// PolicyApprover is the approver of the decisions the policies make
// themselves, and their Via.
const PolicyApprover = "policy"

// policyRequest is req as the policy approval pa asks it: pa's groups
// and quorum; its deadline, when set, with its escalation; its title, when
// set. The rest (the action, the edit schema, the grant) is req's.
func policyRequest(req ApprovalRequest, pa wire.PolicyApproval) ApprovalRequest {
	req.Groups = append([]string(nil), pa.Groups...)
	req.Required = max(pa.Quorum, 1)
	if pa.Deadline > 0 {
		req.Timeout, req.OnTimeout = pa.Deadline, DeadlineAction(pa.OnDeadline)
		if req.OnTimeout == "" {
			req.OnTimeout = RejectAtDeadline
		}
		req.EscalateTo, req.EscalateTimeout = append([]string(nil), pa.EscalateTo...), pa.EscalateDeadline
	}
	if pa.Title != "" {
		req.Title = pa.Title
	}
	if req.Policy != nil {
		rec := *req.Policy
		req.Policy = &rec
	}
	return req
}
