package workflows

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a2aflow/a2aflow/internal/wire"

	"go.temporal.io/sdk/temporal"
)

// Who may touch a task: the one rule, for every way in (each A2A method and
// binding, the REST routes of approvals and push configs, a message of any
// part kind). The API authenticates and says who asks; the workflow decides
// here, on its own state, in its queries and update validators, so no path
// can skip it:
//
//   - A task is seen and changed only by its owner (the principal that
//     created it) through its own agent's endpoint. Anyone else, and a
//     workflow that never got a first message, gets TaskNotFound: a task of
//     another tenant does not exist for the caller.
//   - An approval is read by the task's owner (the requester, read-only)
//     and by the members of its current groups, and decided by those
//     members only, through the decision path (the DecideApproval update or
//     a message carrying a decision part). The owner may decide only when
//     the request lets the requester decide ([RequesterGroup]): no
//     self-approval. A decision by an approver who does not own the task
//     records the decision and nothing else: no message in the task's
//     history, no push config, and the answer is not the task.
//   - A schedule (internal/api/resources/schedules.go) follows the task's rule: it is
//     seen and changed by its owner only, and each run is a task of that
//     owner, started with the owner in its input.
//   - Without authentication (a laptop) there is no owner: everyone is the
//     owner, and an approver without configured groups may decide for any
//     group (Approver groups nil). With authentication, the API sends
//     [NoApproverGroups] for a principal in no group: nobody decides for a
//     group without members.

// mayDecide reports whether an approver with groups (nil: any) may decide
// a, and why not.
func (r *run) mayDecide(approver, principal string, groups []string, a *Approval) error {
	if principal != "" && principal == r.owner {
		// The requester decides only when the request lets them.
		if slices.Contains(a.Groups, RequesterGroup) {
			return nil
		}
		return refused("%s requested approval %s and may not decide it: its groups (%s) do not include %q",
			approver, a.ID, strings.Join(a.Groups, ", "), RequesterGroup)
	}
	if groups != nil && !slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(a.Groups, g) }) {
		return refused("%s is not in the groups that decide approval %s (%s)", approver, a.ID, strings.Join(a.Groups, ", "))
	}
	return nil
}

// mayRead reports whether c may read approval a: as the task's owner, or
// as a member of its current groups.
func (r *run) mayRead(c wire.Caller, a *Approval) bool {
	if c.Principal == "" || c.Principal == r.owner {
		return true // no authentication (no tenants), or the requester
	}
	return c.Groups == nil || slices.ContainsFunc(c.Groups, func(g string) bool { return slices.Contains(a.Groups, g) })
}

// authorizeDecision is the access part of a decision's validation (the
// state part is validateDecision): an approver who may not see the
// approval is told it does not exist, so a decision reveals nothing of
// another tenant's task; one who may see it but not decide is refused.
// principal is the authenticated caller ("" without authentication).
func (r *run) authorizeDecision(in wire.DecideApprovalInput, principal string) error {
	notFound := temporal.NewApplicationError(fmt.Sprintf("approval %s not found", in.ApprovalID), wire.ErrTypeApprovalNotFound)
	a := r.findApproval(in.ApprovalID)
	if a == nil {
		// An early decision (before the skill asks): from the owner, or
		// from someone in an approver group; the groups are checked once
		// the request exists.
		if principal != "" && principal != r.owner && (in.ApproverGroups == nil || slices.Equal(in.ApproverGroups, wire.NoApproverGroups)) {
			return notFound
		}
		return nil
	}
	if !r.mayRead(wire.Caller{Principal: principal, Groups: in.ApproverGroups}, a) {
		return notFound
	}
	if in.OnBehalfOf != "" && principal != "" && in.OnBehalfOf == r.owner && !slices.Contains(a.Groups, RequesterGroup) {
		// A delegate holds the requester's authority: still no self-approval.
		return refused("%s requested approval %s and may not decide it, nor may %s for them", in.OnBehalfOf, a.ID, in.Approver)
	}
	return r.mayDecide(in.Approver, principal, in.ApproverGroups, a)
}
