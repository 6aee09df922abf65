package taskservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/workflows"
)

// messageApprover names the sender of an A2A message for approval
// decisions: the principal, or with auth off the X-Approver header (from
// the call's service parameters) or DefaultApprover; with groups.
func (s *TaskService) messageApprover(ctx context.Context) (string, []string) {
	name := s.messageApproverName(ctx)
	return name, guard.ApproverGroups(s.approverGroups, s.authOn, name)
}

func (s *TaskService) messageApproverName(ctx context.Context) string {
	name := guard.Principal(ctx)
	if name == "" {
		if cc, ok := a2asrv.CallContextFrom(ctx); ok {
			if v, ok := cc.ServiceParams().Get(guard.ApproverHeader); ok && len(v) > 0 && len(v[0]) <= 128 {
				name = strings.TrimSpace(v[0])
			}
		}
	}
	if name == "" {
		name = guard.DefaultApprover
	}
	return name
}

// DecisionMessage is the answer to an approver's decision on a task of
// another owner: a message about the approval, never the task (see
// workflows/access.go).
func DecisionMessage(req *a2a.Message, a *workflows.Approval) *a2a.Message {
	data := a2a.NewDataPart(map[string]any{"approvalId": a.ID, "state": a.State, "decisions": len(a.Decisions)})
	data.MediaType = "application/json"
	return &a2a.Message{
		ID:   req.ID + "-decision",
		Role: a2a.MessageRoleAgent,
		Parts: a2a.ContentParts{
			a2a.NewTextPart(fmt.Sprintf("Your decision on approval %s is recorded; the approval is %s.", a.ID, a.State)),
			data,
		},
	}
}

// decidedBy reports whether approver made one of a's decisions.
func decidedBy(a *workflows.Approval, approver string) bool {
	return slices.ContainsFunc(a.Decisions, func(d workflows.ApprovalDecision) bool { return d.Approver == approver })
}

// carriesDecision tells whether m, to a task that exists, carries an
// approval decision in a data part {"approvalId": "...", "approved": bool}
// (the workflow's decisionPart reads the same): the storage check lets it
// through.
func carriesDecision(m *a2a.Message) bool {
	if m == nil || m.TaskID == "" {
		return false
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		data, _ := p.Data().(map[string]any)
		id, _ := data["approvalId"].(string)
		if _, isBool := data["approved"].(bool); id != "" && isBool {
			return true
		}
	}
	return false
}
