package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// ApprovalView is an approval as the REST API and the inbox show it.
type ApprovalView struct {
	workflows.Approval
	Agent     string `json:"agent"`
	ContextID string `json:"contextId"`
	// TemporalURL links to the task's run in the Temporal Web UI, when known.
	TemporalURL string `json:"temporalUrl,omitempty"`
}

// DecisionRequest is the body of POST /approvals/{id}/decision.
type DecisionRequest struct {
	Approved *bool  `json:"approved" binding:"required"`
	Comment  string `json:"comment" binding:"max=2000"`
	// Arguments, with approved, approve edited arguments (a JSON object)
	// instead of the proposed ones: a gated tool call's, which the tool's
	// parameter schema checks.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Grant, with approved, approves the request's tool (its GrantKey) for
	// the rest of the task.
	Grant bool `json:"grant,omitempty"`
	// OnBehalfOf decides with the authority of another approver, who lent
	// it to the caller for a period (POST /delegations): recorded as
	// "CALLER for ONBEHALFOF"; refused (403) outside the period.
	OnBehalfOf string `json:"onBehalfOf,omitempty" binding:"max=128"`
}

func (s *Resources) approvalRoutes(r gin.IRouter) {
	r.GET("/approvals", s.listApprovals)
	r.GET("/approvals/:id", s.getApproval)
	r.POST(guard.DecisionRoute, s.decideApproval) // behind RequireJSONDecision (guard/limits.go)
	r.GET("/inbox", s.inbox)
}

// approver returns who is reading or deciding and the groups they belong
// to. The identity comes from authentication; with it off, from the
// X-Approver header or DefaultApprover. Groups come from
// Config.ApproverGroups (guard.ApproverGroups); the workflow applies the rule
// (workflows/access.go).
func (s *Resources) approver(c *gin.Context) (wire.Caller, error) {
	who, err := s.ownApprover(c)
	if err == nil && c.Request.Method == http.MethodGet && c.Query("onBehalfOf") != "" {
		// A delegate reads what the lender may read (GET ?onBehalfOf=).
		return s.onBehalfOf(c.Request.Context(), who, c.Query("onBehalfOf"))
	}
	return who, err
}

// ownApprover is approver without a delegation.
func (s *Resources) ownApprover(c *gin.Context) (wire.Caller, error) {
	name := guard.Principal(c.Request.Context())
	if name == "" {
		name = strings.TrimSpace(c.GetHeader(guard.ApproverHeader))
		if len(name) > 128 {
			return wire.Caller{}, apierror.BadRequest(fmt.Sprintf("%s header is longer than 128 bytes", guard.ApproverHeader))
		}
		if name == "" {
			name = guard.DefaultApprover
		}
	}
	return wire.Caller{Principal: guard.Principal(c.Request.Context()), Approver: name,
		Groups: guard.ApproverGroups(s.cfg.ApproverGroups, s.cfg.Auth.Enabled(), name)}, nil
}

// listApprovals serves GET /approvals: pending approvals (or, with
// state=decided, recently decided ones), filtered by group, agent and
// context, found through Temporal visibility; only those the caller may
// read (the requester's own, and those of the caller's groups).
func (s *Resources) listApprovals(c *gin.Context) {
	who, err := s.approver(c)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	views, err := s.findApprovals(c.Request.Context(), who, c.Query("group"), c.Query("agent"), c.Query("context"), c.Query("state") == "decided")
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"approvals": views})
}

// findApprovals runs the visibility query and reads each task's approvals.
func (s *Resources) findApprovals(ctx context.Context, who wire.Caller, group, agent, contextID string, decided bool) ([]ApprovalView, error) {
	for _, v := range []string{group, agent, contextID} {
		if len(v) > 256 {
			return nil, apierror.BadRequest("filter values must be at most 256 bytes")
		}
		// Temporal's gRPC client cannot carry invalid UTF-8 (a 500), and a
		// NUL in a visibility query stalls it until the deadline (a 500
		// after 10 seconds): neither names an agent, group or context.
		// Found by schemathesis (tests/schemathesis_test.go).
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return nil, apierror.BadRequest("filter values must be UTF-8 text without NUL")
		}
	}
	q := []string{fmt.Sprintf("WorkflowType = %s", wire.QuoteQueryValue(wire.TaskWorkflowName))}
	key := wire.PendingApprovalsKey.GetName()
	if decided {
		key = wire.ApprovalGroupsKey.GetName()
	} else {
		q = append(q, "ExecutionStatus = 'Running'")
	}
	if group != "" {
		q = append(q, fmt.Sprintf("%s = %s", key, wire.QuoteQueryValue(group)))
	} else {
		q = append(q, fmt.Sprintf("%s IS NOT NULL", key))
	}
	if agent != "" {
		q = append(q, fmt.Sprintf("%s = %s", wire.AgentKey.GetName(), wire.QuoteQueryValue(agent)))
	}
	if contextID != "" {
		q = append(q, fmt.Sprintf("%s = %s", wire.ContextIDKey.GetName(), wire.QuoteQueryValue(contextID)))
	}
	resp, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: strings.Join(q, " AND "), PageSize: 100,
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks waiting for approval: %w", err)
	}
	var views []ApprovalView
	for _, e := range resp.GetExecutions() {
		if !guard.MayUse(ctx, keywordOf(e.GetSearchAttributes().GetIndexedFields()[wire.AgentKey.GetName()])) {
			continue // an agent the caller may not use (guard/permissions.go)
		}
		approvals, err := s.taskApprovals(ctx, e.GetExecution().GetWorkflowId(), who)
		if err != nil {
			continue // a task that ended or moved on since the listing
		}
		for _, a := range approvals {
			if (a.State == workflows.ApprovalPending) == decided {
				continue
			}
			if group != "" && !slices.Contains(a.Groups, group) && !slices.Contains(a.Request.Groups, group) {
				continue
			}
			views = append(views, s.view(a, e.GetSearchAttributes()))
		}
	}
	slices.SortFunc(views, func(a, b ApprovalView) int { return a.Created.Compare(b.Created) })
	return views, nil
}

// taskApprovals returns the approvals of a task that who may read.
func (s *Resources) taskApprovals(ctx context.Context, taskID string, who wire.Caller) ([]workflows.Approval, error) {
	value, err := s.temporal.QueryWorkflow(ctx, taskID, "", wire.QueryApprovals, who)
	if err != nil {
		return nil, err
	}
	var approvals []workflows.Approval
	if err := value.Get(&approvals); err != nil {
		return nil, fmt.Errorf("decode approvals of task %s: %w", taskID, err)
	}
	return approvals, nil
}

// view decorates an approval with its task's agent, context and UI link.
func (s *Resources) view(a workflows.Approval, sa *commonpb.SearchAttributes) ApprovalView {
	v := ApprovalView{Approval: a}
	if sa != nil {
		v.Agent = keywordOf(sa.GetIndexedFields()[wire.AgentKey.GetName()])
		v.ContextID = keywordOf(sa.GetIndexedFields()[wire.ContextIDKey.GetName()])
	}
	if s.cfg.TemporalUIURL != "" {
		v.TemporalURL = fmt.Sprintf("%s/namespaces/%s/workflows/%s", s.cfg.TemporalUIURL, s.cfg.Namespace, a.TaskID)
	}
	return v
}

// getApproval serves GET /approvals/{id}: the request, its state and every
// decision (who, when, comment, how).
func (s *Resources) getApproval(c *gin.Context) {
	who, err := s.approver(c)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	id := c.Param("id")
	taskID, err := approvalTask(id)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	a, err := s.approval(c.Request.Context(), taskID, id, who)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, a)
}

// approvalTask returns the task of an approval ID, or the 404 of an ID
// that can name no approval.
func approvalTask(id string) (string, error) {
	taskID, ok := wire.ApprovalTaskID(id)
	if !ok || len(id) > 300 || taskservice.CheckTaskID(string(taskID)) != nil {
		return "", apierror.NotFound("approval %q does not exist", id)
	}
	return string(taskID), nil
}

// approval reads approval id of task taskID as who may see it.
func (s *Resources) approval(ctx context.Context, taskID, id string, who wire.Caller) (ApprovalView, error) {
	approvals, err := s.taskApprovals(ctx, taskID, who)
	if err != nil {
		if apierror.IsNotFound(err) {
			return ApprovalView{}, apierror.NotFound("approval %q does not exist", id)
		}
		return ApprovalView{}, err
	}
	for _, a := range approvals {
		if a.ID == id {
			desc, err := s.temporal.DescribeWorkflowExecution(ctx, taskID, "")
			if err != nil {
				if c, ok := guard.CallerOf(ctx); ok && c.Agents != nil {
					return ApprovalView{}, err // its agent is unknown, so is the permission
				}
				return s.view(a, nil), nil
			}
			// An approval the caller may see, of an agent it may not use
			// (guard/permissions.go).
			if err := guard.PermitAgent(ctx, taskservice.SearchKeyword(desc.GetWorkflowExecutionInfo(), wire.AgentKey.GetName())); err != nil {
				return ApprovalView{}, err
			}
			return s.view(a, desc.GetWorkflowExecutionInfo().GetSearchAttributes()), nil
		}
	}
	return ApprovalView{}, apierror.NotFound("approval %q does not exist (yet)", id)
}

// decideApproval serves POST /approvals/{id}/decision through the
// DecideApproval update; the workflow's validator refuses duplicate, late,
// unauthorized and settled decisions with 409 and leaves history untouched.
func (s *Resources) decideApproval(c *gin.Context) {
	var req DecisionRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		apierror.AbortResource(c, apierror.BadRequest("body must be {\"approved\": bool, \"comment\": string, \"arguments\": object, \"grant\": bool}: "+err.Error()))
		return
	}
	args, err := editedArguments(req.Arguments)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	who, err := s.approver(c)
	if err == nil && req.OnBehalfOf != "" {
		who, err = s.onBehalfOf(c.Request.Context(), who, req.OnBehalfOf)
	}
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	if who.Principal == "" && slices.Equal(who.Groups, wire.NoApproverGroups) {
		// Without authentication nobody owns a task, so a caller in no
		// approver group can decide nothing.
		apierror.AbortResource(c, a2a.NewError(a2a.ErrUnauthorized, fmt.Sprintf("%s is not an approver of any group", who.Approver)))
		return
	}
	id := c.Param("id")
	taskID, err := approvalTask(id)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	if err := s.permitApproval(c.Request.Context(), taskID, id, who); err != nil {
		apierror.AbortResource(c, err)
		return
	}
	via := "rest"
	if v := c.GetHeader("X-A2Aflow-Via"); v == "inbox" || v == "cli" || v == "console" {
		via = v
	}
	a, err := s.decide(c.Request.Context(), taskID, id, wire.DecideApprovalInput{
		Approved: *req.Approved, Comment: req.Comment, Approver: who.Approver, ApproverGroups: who.Groups, Via: via,
		Principal: who.Principal, Arguments: args, Grant: req.Grant, OnBehalfOf: who.OnBehalfOf,
	})
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, a)
}

// permitApproval refuses a decision on an approval of an agent the caller
// may not use (guard/permissions.go), before it reaches the task: as not found
// when the caller may not see the approval either (approval), else as
// PermissionDenied. A caller who may use every agent is not checked here.
func (s *Resources) permitApproval(ctx context.Context, taskID, id string, who wire.Caller) error {
	if c, ok := guard.CallerOf(ctx); !ok || c.Agents == nil {
		return nil
	}
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, taskID, "")
	if err != nil {
		return nil // no such task: decide answers not found
	}
	if guard.MayUse(ctx, taskservice.SearchKeyword(desc.GetWorkflowExecutionInfo(), wire.AgentKey.GetName())) {
		return nil
	}
	_, err = s.approval(ctx, taskID, id, who) // not found, or PermissionDenied
	if err == nil {
		err = a2a.NewError(a2a.ErrUnauthorized, "permission denied")
	}
	return err
}

// decide sends approval id's decision to its task taskID through the
// DecideApproval update.
func (s *Resources) decide(ctx context.Context, taskID, id string, in wire.DecideApprovalInput) (workflows.Approval, error) {
	in.ApprovalID = id
	verdict := "rejected"
	if in.Approved {
		verdict = "approved"
	}
	if len(in.Arguments) > 0 {
		verdict += "-edit-" + payloadDigest(in.Arguments)
	}
	if in.Grant {
		verdict += "-grant"
	}
	handle, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: taskID,
		// A retried request is the same update (the same answer); a
		// different verdict by the same approver is another update, which
		// the validator refuses (409, saying who decided what).
		UpdateID:     id + "/" + in.Approver + "/" + verdict,
		UpdateName:   wire.UpdateDecideApproval,
		Args:         []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		var a workflows.Approval
		if err = handle.Get(ctx, &a); err == nil {
			return a, nil
		}
	}
	if apierror.IsNotFound(err) {
		// The task's workflow has ended, or never was: only a caller who
		// may see the approval learns that it ended.
		who := wire.Caller{Principal: in.Principal, Approver: in.Approver, Groups: in.ApproverGroups}
		if _, verr := s.approval(ctx, taskID, id, who); verr != nil {
			return workflows.Approval{}, apierror.NotFound("approval %q does not exist", id)
		}
		return workflows.Approval{}, apierror.Conflict("the task of approval %s has ended; it takes no more decisions", id)
	}
	return workflows.Approval{}, apierror.FromResourceUpdate("approval", id, err)
}

// editedArguments checks a decision's edited arguments: absent (nil), or
// a JSON object, compacted.
func editedArguments(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, apierror.BadRequest("arguments must be a JSON object: " + err.Error())
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, apierror.BadRequest("arguments must be a JSON object: " + err.Error())
	}
	return buf.Bytes(), nil
}

// keywordOf decodes a Keyword search attribute value.
func keywordOf(p *commonpb.Payload) string {
	var v string
	if p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &v)
	}
	return v
}
