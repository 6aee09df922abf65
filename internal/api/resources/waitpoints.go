package resources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// WaitpointTokenHeader carries a waitpoint's token (POST may carry it in
// its body instead).
const WaitpointTokenHeader = "X-Waitpoint-Token"

// WaitpointView is a waitpoint as GET and POST /waitpoints/{id} answer it.
type WaitpointView struct {
	workflows.Waitpoint
	// Token is the waitpoint's token, shown to the task's owner only (and
	// to everyone without authentication), to hand to the system that
	// completes it.
	Token string `json:"token,omitempty"`
}

// CompleteWaitpointRequest is the body of POST /waitpoints/{id}.
type CompleteWaitpointRequest struct {
	// Token is the waitpoint's token, unless the X-Waitpoint-Token header
	// carries it.
	Token string `json:"token" binding:"max=256"`
	// Payload is the result, which the waitpoint's JSON Schema checks.
	Payload json.RawMessage `json:"payload" binding:"required"`
}

func (s *Resources) waitpointRoutes(r gin.IRouter) {
	r.GET("/waitpoints/:id", s.getWaitpoint)
	r.POST("/waitpoints/:id", s.completeWaitpoint)
}

// waitpointTask returns the task of a waitpoint ID, or the 404 of an ID
// that can name no waitpoint.
func waitpointTask(id string) (string, error) {
	taskID, ok := wire.WaitpointTaskID(id)
	if !ok || len(id) > 300 || taskservice.CheckTaskID(string(taskID)) != nil {
		return "", apierror.NotFound("waitpoint %q does not exist", id)
	}
	return string(taskID), nil
}

// getWaitpoint serves GET /waitpoints/{id} to the holder of its token, and
// to the task's owner, who also gets the token. Anyone else learns that
// it does not exist.
func (s *Resources) getWaitpoint(c *gin.Context) {
	id := c.Param("id")
	taskID, err := waitpointTask(id)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	ctx := c.Request.Context()
	binding, byToken := s.cfg.Waitpoints.Check(id, c.GetHeader(WaitpointTokenHeader))
	owner, token := "", &binding
	if !byToken {
		owner, token = guard.Principal(ctx), nil // "" without authentication: everyone owns every task
	}
	w, err := s.waitpoint(ctx, taskID, id, owner, token)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	if !byToken {
		// The owner's own waitpoint, of an agent it may not use
		// (guard/permissions.go); a token opens its waitpoint for any holder.
		if err := s.permitTask(ctx, taskID); err != nil {
			apierror.AbortResource(c, err)
			return
		}
	}
	view := WaitpointView{Waitpoint: w}
	if !byToken {
		view.Token = s.cfg.Waitpoints.Token(id, w.Created)
	}
	c.JSON(http.StatusOK, view)
}

// waitpoint reads waitpoint id of task taskID through QueryWaitpoints, as
// owner ("": any caller, authentication is off) or as the holder of a token
// bound to token (the workflow answers with the waitpoint it opens only).
func (s *Resources) waitpoint(ctx context.Context, taskID, id, owner string, token *wire.TokenBinding) (workflows.Waitpoint, error) {
	value, err := s.temporal.QueryWorkflow(ctx, taskID, "", wire.QueryWaitpoints, wire.WaitpointsQuery{Owner: owner, Token: token})
	if err != nil {
		if mapped := apierror.FromTemporal(err); errors.Is(mapped, a2a.ErrTaskNotFound) {
			return workflows.Waitpoint{}, apierror.NotFound("waitpoint %q does not exist", id)
		}
		return workflows.Waitpoint{}, err
	}
	var list []workflows.Waitpoint
	if err := value.Get(&list); err != nil {
		return workflows.Waitpoint{}, fmt.Errorf("decode waitpoints of task %s: %w", taskID, err)
	}
	for _, w := range list {
		if w.ID == id {
			return w, nil
		}
	}
	return workflows.Waitpoint{}, apierror.NotFound("waitpoint %q does not exist", id)
}

// completeWaitpoint serves POST /waitpoints/{id}: the token opens the
// waitpoint (403 otherwise, before anything asks Temporal, so a wrong token
// tells nothing of the waitpoint); the workflow's validator refuses a
// payload its schema does not take (400) and a waitpoint that is no longer
// pending (409). Sending the same payload again answers 200 with the
// waitpoint as it was completed: a retry is safe.
func (s *Resources) completeWaitpoint(c *gin.Context) {
	id := c.Param("id")
	taskID, err := waitpointTask(id)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	var req CompleteWaitpointRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		apierror.AbortResource(c, apierror.BadRequest(`body must be {"token": string, "payload": any JSON value}: `+err.Error()))
		return
	}
	token := c.GetHeader(WaitpointTokenHeader)
	if token == "" {
		token = req.Token
	}
	binding, opens := s.cfg.Waitpoints.Check(id, token)
	switch {
	case s.cfg.Waitpoints == nil:
		apierror.AbortResource(c, a2a.NewError(a2a.ErrUnauthorized, "this server has no key for waitpoint tokens (--secrets-key): complete the waitpoint with a message from the task's owner"))
		return
	case token == "":
		apierror.AbortResource(c, a2a.NewError(a2a.ErrUnauthorized, fmt.Sprintf("the waitpoint's token is required (%s header or \"token\" in the body)", WaitpointTokenHeader)))
		return
	case !opens:
		apierror.AbortResource(c, apierror.TokenRefused("waitpoint", id))
		return
	}
	payload, err := canonicalPayload(req.Payload)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	via := "rest"
	if c.GetHeader("X-A2Aflow-Via") == "cli" {
		via = "cli"
	}
	by := guard.Principal(c.Request.Context())
	if by == "" {
		by = "token"
	}
	w, err := s.complete(c.Request.Context(), taskID, wire.CompleteWaitpointInput{WaitpointID: id, Payload: payload, By: by, Via: via, Token: &binding})
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, WaitpointView{Waitpoint: w})
}

// permitTask refuses a task of an agent the caller may not use
// (guard/permissions.go), once the caller is known to see the task.
func (s *Resources) permitTask(ctx context.Context, taskID string) error {
	if c, ok := guard.CallerOf(ctx); !ok || c.Agents == nil {
		return nil
	}
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, taskID, "")
	if err != nil {
		return apierror.FromTemporal(err)
	}
	return guard.PermitAgent(ctx, taskservice.SearchKeyword(desc.GetWorkflowExecutionInfo(), wire.AgentKey.GetName()))
}

// canonicalPayload checks a payload's size and compacts it; it keeps the
// value as sent (key order included), for the workflow to store.
func canonicalPayload(raw json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, apierror.BadRequest("payload is not JSON: " + err.Error())
	}
	if buf.Len() > wire.MaxWaitpointPayloadBytes {
		return nil, apierror.BadRequest(fmt.Sprintf("payload has %d bytes, over the limit of %d", buf.Len(), wire.MaxWaitpointPayloadBytes))
	}
	return buf.Bytes(), nil
}

// payloadDigest names a payload's value (not its spelling) for the update
// ID, so that the same payload sent again is the same update.
func payloadDigest(payload json.RawMessage) string {
	var v any
	b := []byte(payload)
	if json.Unmarshal(payload, &v) == nil {
		if sorted, err := json.Marshal(v); err == nil {
			b = sorted
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// complete runs the CompleteWaitpoint update and maps its refusals. A
// completion the waitpoint refuses because it is settled, or because its
// task has ended, is read back: the same payload is the earlier
// completion's success, any other a conflict.
func (s *Resources) complete(ctx context.Context, taskID string, in wire.CompleteWaitpointInput) (workflows.Waitpoint, error) {
	handle, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   taskID,
		UpdateID:     in.WaitpointID + "/" + payloadDigest(in.Payload),
		UpdateName:   wire.UpdateCompleteWaitpoint,
		Args:         []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		var w workflows.Waitpoint
		if err = handle.Get(ctx, &w); err == nil {
			return w, nil
		}
	}
	var appErr *temporal.ApplicationError
	settled := errors.As(err, &appErr) && appErr.Type() == wire.ErrTypeWaitpointSettled
	if !settled && !apierror.IsNotFound(err) {
		return workflows.Waitpoint{}, apierror.FromResourceUpdate("waitpoint", in.WaitpointID, err)
	}
	// Settled, or its task ended (or never was): what does it hold?
	w, rerr := s.waitpoint(ctx, taskID, in.WaitpointID, in.Owner, in.Token)
	if rerr != nil {
		return workflows.Waitpoint{}, rerr
	}
	if w.State == workflows.WaitpointCompleted && wire.SameWaitpointPayload(w.Payload, in.Payload) {
		return w, nil
	}
	msg := fmt.Sprintf("waitpoint %s is %s", w.ID, w.State)
	switch {
	case settled:
		msg = appErr.Message()
	case w.State == workflows.WaitpointCompleted && w.CompletedAt != nil:
		msg = fmt.Sprintf("waitpoint %s was already completed by %s via %s at %s", w.ID, w.CompletedBy, w.Via, w.CompletedAt.Format(time.RFC3339))
	}
	return workflows.Waitpoint{}, apierror.Conflict("%s; it takes no other payload", strings.TrimSuffix(msg, "."))
}
