package workflows

import "slices"

// grants is the grants unit of a run (units.go): the grant keys approvers
// approved for the rest of the task (ApprovalRequest.GrantKey,
// ApprovalDecision.Grant), each with the approval that granted it.
type grants struct {
	unitBase
	r *run `carry:"-"`

	list []grant
}

// grant is one granted key.
type grant struct {
	Key        string `json:"key"`
	ApprovalID string `json:"approvalId"`
}

var _ unit = (*grants)(nil)

// record grants a's key when one of its approving decisions said so.
func (u *grants) record(a *Approval) {
	if a.Request.GrantKey == "" || !slices.ContainsFunc(a.Decisions, func(d ApprovalDecision) bool { return d.Approved && d.Grant }) {
		return
	}
	if !slices.ContainsFunc(u.list, func(g grant) bool { return g.Key == a.Request.GrantKey }) {
		u.list = append(u.list, grant{Key: a.Request.GrantKey, ApprovalID: a.ID})
	}
}

func (u *grants) carry(c *continuedTask)   { c.Grants = slices.Clone(u.list) }
func (u *grants) restore(c *continuedTask) { u.list = slices.Clone(c.Grants) }

// Granted reports whether an approver approved key for the rest of the task
// ([ApprovalRequest.GrantKey], [ApprovalDecision.Grant]) and returns the
// approval that granted it. A gated tool whose key is granted runs without
// asking again.
func (t *Task) Granted(key string) (*Approval, bool) {
	for _, g := range t.r.grants.list {
		if g.Key == key {
			if a := t.r.findApproval(g.ApprovalID); a != nil {
				c := *a
				c.Decisions = slices.Clone(a.Decisions)
				return &c, true
			}
			return &Approval{ID: g.ApprovalID, TaskID: t.r.task.ID, State: ApprovalApproved}, true
		}
	}
	return nil, false
}
