package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Decisions that come in messages: an approver (or the task's own user,
// for an approval open to the requester) decides by sending the task a
// message, through any A2A binding, instead of through the approvals' REST
// resource or the DecideApproval update. The approvals unit claims such a
// message, validates it as a decision and applies it.

// RequesterGroup in ApprovalRequest.Groups lets the task's own user decide,
// also with a plain "yes" or "no" message.
const RequesterGroup = "requester"

// decisionInMessage reads an approval decision out of a SendMessage: a data
// part {"approvalId": ..., "approved": bool, "comment": ...} (decisionPart),
// or a plain
// yes/no text from the task's own user while exactly one pending approval
// allows the requester.
func (r *run) decisionInMessage(in wire.SendMessageInput) (wire.DecideApprovalInput, bool) {
	if in.Message == nil {
		return wire.DecideApprovalInput{}, false
	}
	approver := in.Approver
	if approver == "" {
		approver = in.Owner
	}
	if d, ok := decisionPart(in.Message); ok {
		d.Approver, d.ApproverGroups, d.Via, d.Principal = approver, in.ApproverGroups, "a2a", in.Owner
		d.OnBehalfOf = in.OnBehalfOf // the API checked it; the part's own says nothing
		return d, true
	}
	var candidate *Approval
	for _, a := range r.approvals.list {
		if a.State == ApprovalPending && slices.Contains(a.Groups, RequesterGroup) {
			if candidate != nil {
				return wire.DecideApprovalInput{}, false // ambiguous: the user must name the approval
			}
			candidate = a
		}
	}
	if candidate == nil || (in.Owner != "" && in.Owner != r.owner) {
		return wire.DecideApprovalInput{}, false
	}
	var approved bool
	switch strings.ToLower(strings.Trim(strings.TrimSpace(MessageText(in.Message)), ".!")) {
	case "yes", "y", "approve", "approved", "ok":
		approved = true
	case "no", "n", "reject", "rejected", "deny":
	default:
		return wire.DecideApprovalInput{}, false
	}
	if approver == "" {
		approver = RequesterGroup
	}
	return wire.DecideApprovalInput{ApprovalID: candidate.ID, Approved: approved, Approver: approver,
		ApproverGroups: []string{RequesterGroup}, Via: "a2a", Principal: in.Owner}, true
}

// decisionPart returns the decision a message carries in a data part
// {"approvalId": ..., "approved": bool, "comment": ..., "arguments": {...},
// "grant": bool}: an ID, approved or not, and the rest optional.
func decisionPart(m *a2a.Message) (wire.DecideApprovalInput, bool) {
	if m == nil {
		return wire.DecideApprovalInput{}, false
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		data, isMap := p.Data().(map[string]any)
		if !isMap {
			continue
		}
		id, _ := data["approvalId"].(string)
		approved, isBool := data["approved"].(bool)
		if id == "" || !isBool {
			continue
		}
		d := wire.DecideApprovalInput{ApprovalID: id, Approved: approved}
		d.Comment, _ = data["comment"].(string)
		d.Grant, _ = data["grant"].(bool)
		if args, ok := data["arguments"]; ok && args != nil {
			// encoding/json writes map keys sorted: the bytes are deterministic.
			raw, err := json.Marshal(args) //workflowcheck:ignore
			if err == nil {
				d.Arguments = raw
			}
		}
		return d, true
	}
	return wire.DecideApprovalInput{}, false
}

// onDecisionMessage records the decision message in history (the audit
// trail of the conversation), applies the decision and, for a blocking send,
// answers once the task is interrupted again or ends.
func (r *run) onDecisionMessage(ctx workflow.Context, in wire.SendMessageInput, d wire.DecideApprovalInput) (sendResult, error) {
	if r.decisionOnly(in) {
		// Another owner's task: the decision and nothing else. The answer
		// is the approval, never the task (access.go).
		r.rememberMessageID(in.Message.ID)
		a, err := r.decide(ctx, d)
		if err != nil {
			return sendResult{}, err
		}
		return sendResult{TaskUpdateResult: wire.TaskUpdateResult{Settled: true}, Decision: &a}, nil
	}
	res, err := r.onOwnDecisionMessage(ctx, in, d)
	return sendResult{TaskUpdateResult: res}, err
}

// onOwnDecisionMessage is onDecisionMessage for a decision on the sender's
// own task.
func (r *run) onOwnDecisionMessage(ctx workflow.Context, in wire.SendMessageInput, d wire.DecideApprovalInput) (wire.TaskUpdateResult, error) {
	stored := *in.Message
	stored.TaskID, stored.ContextID = r.task.ID, r.task.ContextID
	r.record(ctx, &stored)
	r.rememberMessageID(in.Message.ID)
	r.addPushConfig(in.PushConfig, in.PushGeneration)
	a, err := r.decide(ctx, d)
	if err != nil {
		return wire.TaskUpdateResult{}, err
	}
	after := r.lastSeq
	// A decision that leaves its approval pending (N of M) changes nothing
	// the sender waits for: the task still waits for the other approvers.
	if in.ReturnImmediately || (a.State == ApprovalPending && wire.Interrupted(r.task.Status.State)) {
		return r.updateResult(true), nil
	}
	return r.waitFor(ctx, func() bool {
		return r.task.Status.State.Terminal() || (r.statusSeq > after && wire.Interrupted(r.task.Status.State))
	})
}

// foreign reports whether in is a decision by an authenticated approver on
// a task they do not own: it goes through the decision path only
// (access.go).
func (u *approvals) foreign(in wire.SendMessageInput) bool { return u.r.decisionOnly(in) }

// decisionOnly is approvals.foreign.
func (r *run) decisionOnly(in wire.SendMessageInput) bool {
	if in.Owner == "" || in.Owner == r.owner {
		return false
	}
	_, ok := decisionPart(in.Message)
	return ok
}

// claims: a decision, in a data part or as the requester's yes or no.
func (u *approvals) claims(in wire.SendMessageInput) bool {
	_, ok := u.r.decisionInMessage(in)
	return ok
}

// validateMessage checks the decision a message it claims carries: the
// access rule (no self-approval) and the decision itself.
func (u *approvals) validateMessage(ctx workflow.Context, in wire.SendMessageInput, by unit) error {
	if by != unit(u) {
		return nil
	}
	r := u.r
	d, _ := r.decisionInMessage(in)
	if err := r.authorizeDecision(d, in.Owner); err != nil {
		return err
	}
	return r.validateDecision(ctx, d)
}

// receive applies the decision a message carries (onDecisionMessage).
func (u *approvals) receive(ctx workflow.Context, in wire.SendMessageInput) (sendResult, error) {
	d, _ := u.r.decisionInMessage(in)
	return u.r.onDecisionMessage(ctx, in, d)
}

// validateForeign is the whole validation of a decision by an approver on
// a task of another owner (decisionOnly): the decision path only
// (access.go), none of the owner's checks.
func (u *approvals) validateForeign(ctx workflow.Context, in wire.SendMessageInput) error {
	r := u.r
	if err := r.checkAccess(in.Agent, ""); err != nil {
		return err
	}
	d, _ := r.decisionInMessage(in)
	if err := r.authorizeDecision(d, in.Owner); err != nil {
		return err
	}
	if in.PushConfig != nil {
		return temporal.NewApplicationError("a decision on a task of another owner cannot set a push notification config", wire.ErrTypeInvalidParams)
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is %s and accepts no more decisions", r.task.ID, r.task.Status.State), wire.ErrTypeUnsupportedOperation)
	}
	if err := validateMessage(r.task, in.Message); err != nil {
		return err
	}
	return r.validateDecision(ctx, d)
}
