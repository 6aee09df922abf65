package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
)

// Names of the approval update and query.
const (
	// UpdateDecideApproval records one approver's decision on a pending
	// approval. Its argument is a [DecideApprovalInput], its result the
	// [Approval] after the decision. Every way of deciding (an A2A message,
	// REST, the CLI, the inbox) ends in this one validated update.
	UpdateDecideApproval = "DecideApproval"
	// QueryApprovals returns the task's approvals the caller may read
	// ([]Approval, see access.go). Its argument is a [Caller].
	QueryApprovals = "Approvals"

	// ErrTypeApprovalRefused: the decision is a duplicate, late, for an
	// unknown or settled approval, or by someone not in its groups.
	ErrTypeApprovalRefused = "ApprovalRefused"
)

// PendingApprovalsKey is the search attribute listing the approver groups a
// task waits for, so an inbox finds "everything finance must decide".
var PendingApprovalsKey = temporal.NewSearchAttributeKeyKeywordList("A2APendingApprovals")

// ApprovalGroupsKey lists every approver group a task has ever asked, so an
// inbox also finds the requests its groups decided.
var ApprovalGroupsKey = temporal.NewSearchAttributeKeyKeywordList("A2AApprovalGroups")

// ApprovalNotice is the argument of ActivityNotifyApprovalWebhook: one
// group's news that an approval waits for it. It names the group, never its
// webhook or credentials, so that history carries no secret.
type ApprovalNotice struct {
	// Group is the approver group whose webhook gets the notice.
	Group      string     `json:"group"`
	ApprovalID string     `json:"approvalId"`
	TaskID     a2a.TaskID `json:"taskId"`
	Agent      string     `json:"agent,omitempty"`
	Title      string     `json:"title"`
	Details    string     `json:"details,omitempty"`
	// Groups are all the groups that may decide now.
	Groups   []string   `json:"groups"`
	Deadline *time.Time `json:"deadline,omitempty"`
	// Escalated is set when the request reached Groups by an escalation.
	Escalated bool `json:"escalated,omitempty"`
}

// DecideApprovalInput is the argument of UpdateDecideApproval.
type DecideApprovalInput struct {
	// Agent and Owner scope the write as in [SendMessageInput]; Owner is not
	// checked for decisions (approvers are not the task's owner), only Agent.
	Agent      string `json:"agent,omitempty"`
	ApprovalID string `json:"approvalId"`
	Approved   bool   `json:"approved"`
	Comment    string `json:"comment,omitempty"`
	// Approver is the authenticated identity deciding, set by the API from
	// authentication, never from the request body alone.
	Approver string `json:"approver"`
	// ApproverGroups are the groups the approver belongs to, from
	// authentication. Nil means "any group" (no group membership
	// configured, authentication off); see [NoApproverGroups].
	ApproverGroups []string `json:"approverGroups,omitempty"`
	Via            string   `json:"via,omitempty"`
	// Principal is the authenticated caller ("" without authentication):
	// the access rule (access.go) tells the task's owner from others.
	Principal string `json:"principal,omitempty"`
	// Arguments, with Approved, approve edited arguments (a JSON object)
	// instead of the ones the request proposed: a gated tool call's,
	// checked against the request's EditSchema.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Grant, with Approved, approves every later request of the task with
	// the request's GrantKey as well (a tool, for the rest of the task).
	Grant bool `json:"grant,omitempty"`
	// OnBehalfOf names the approver whose authority a delegate uses (an
	// out-of-office delegation the API checked): Approver is then "X for
	// Y" and ApproverGroups are Y's. Y's authority decides once.
	OnBehalfOf string `json:"onBehalfOf,omitempty"`
}

// ApprovalTaskID returns the task an approval ID belongs to.
func ApprovalTaskID(id string) (a2a.TaskID, bool) {
	i := strings.LastIndex(id, "-approval-")
	if i <= 0 {
		return "", false
	}
	if _, err := strconv.Atoi(id[i+len("-approval-"):]); err != nil {
		return "", false
	}
	return a2a.TaskID(id[:i]), true
}

// NoApproverGroups is the approver group list the API sends for a caller
// who belongs to no approver group: not nil, which means "any group" (no
// group membership configured, authentication off).
var NoApproverGroups = []string{"(no approver group)"}

// ErrTypeApprovalNotFound: the approval does not exist for the caller (it
// does not, or the caller may not see it).
const ErrTypeApprovalNotFound = "ApprovalNotFound"

// Caller is who reads or decides approvals: the principal (empty without
// authentication) and, as an approver, the identity and groups the API
// resolved (groups nil: any group).
type Caller struct {
	Agent     string   `json:"agent,omitempty"`
	Principal string   `json:"principal,omitempty"`
	Approver  string   `json:"approver,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	// OnBehalfOf names the approver whose delegated authority the caller
	// uses (Approver is then "X for Y", Groups Y's).
	OnBehalfOf string `json:"onBehalfOf,omitempty"`
}
