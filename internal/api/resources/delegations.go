package resources

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// DelegationStore keeps the approvers' delegations (models.Store): an
// approver's authority lent to another person for a period (out of
// office).
type DelegationStore interface {
	AddDelegation(ctx context.Context, d models.Delegation) (models.Delegation, error)
	Delegations(ctx context.Context, who string) ([]models.Delegation, error)
	DelegationByID(ctx context.Context, id int64) (models.Delegation, error)
	RevokeDelegation(ctx context.Context, id int64, by string) (models.Delegation, error)
	taskservice.DelegationLookup
}

// DelegationRequest is the body of POST /delegations.
type DelegationRequest struct {
	// From is whose authority is lent; default the caller. Only an
	// operator (--policy-admins "*") lends another's.
	From string `json:"from,omitempty"`
	// To is who may decide for From.
	To string `json:"to"`
	// Start (default now) and End bound the period, RFC 3339.
	Start *time.Time `json:"start,omitempty"`
	End   time.Time  `json:"end"`
	// Reason says why, for the record.
	Reason string `json:"reason,omitempty"`
}

// maxDelegationPeriod bounds a delegation: an absence, not a transfer.
const maxDelegationPeriod = 366 * 24 * time.Hour

func (s *Resources) delegationRoutes(r gin.IRouter) {
	r.GET("/delegations", s.listDelegations)
	r.POST("/delegations", s.addDelegation)
	r.GET("/delegations/:id", s.getDelegation)
	r.DELETE("/delegations/:id", s.revokeDelegation)
}

// delegationCaller returns who calls and whether they are an operator,
// refusing a server that keeps no delegations.
func (s *Resources) delegationCaller(c *gin.Context) (wire.Caller, bool, bool) {
	if s.cfg.Delegations == nil {
		apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrUnsupportedOperation, "this server keeps no delegations (no database)"))
		return wire.Caller{}, false, false
	}
	who, err := s.ownApprover(c)
	if err != nil {
		apierror.AbortResource(c, err)
		return wire.Caller{}, false, false
	}
	return who, guard.PolicyAdminOf(s.cfg.PolicyAdmins, s.cfg.Auth.Enabled(), who.Approver).Operator, true
}

// listDelegations serves GET /delegations: the caller's, lent or held (an
// operator's: everyone's), the latest first.
func (s *Resources) listDelegations(c *gin.Context) {
	who, operator, ok := s.delegationCaller(c)
	if !ok {
		return
	}
	name := who.Approver
	if operator {
		name = ""
	}
	list, err := s.cfg.Delegations.Delegations(c.Request.Context(), name)
	if err != nil {
		s.delegationStoreFailed(c, err)
		return
	}
	if list == nil {
		list = []models.Delegation{}
	}
	c.JSON(http.StatusOK, gin.H{"delegations": list})
}

// addDelegation serves POST /delegations (a DelegationRequest): 201 with
// the delegation recorded, who and when.
func (s *Resources) addDelegation(c *gin.Context) {
	who, operator, ok := s.delegationCaller(c)
	if !ok {
		return
	}
	var req DelegationRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		apierror.AbortResource(c, apierror.BadRequest(`body must be {"to": name, "end": RFC 3339 time, "start": time, "from": name, "reason": text}: `+err.Error()))
		return
	}
	d, err := checkDelegation(req, who.Approver, time.Now())
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	if d.From != who.Approver && !operator {
		apierror.AbortResource(c, a2a.NewError(a2a.ErrUnauthorized, fmt.Sprintf("%s may lend only their own authority, not %s's (operators lend anyone's)", who.Approver, d.From)))
		return
	}
	d, err = s.cfg.Delegations.AddDelegation(c.Request.Context(), d)
	if err != nil {
		s.delegationStoreFailed(c, err)
		return
	}
	s.cfg.Logger.InfoContext(c.Request.Context(), "delegation recorded", "id", d.ID, "from", d.From, "to", d.To,
		"start", d.Start, "end", d.End, "by", d.CreatedBy)
	c.JSON(http.StatusCreated, d)
}

// checkDelegation checks a request made by caller at now and returns the
// delegation to record.
func checkDelegation(req DelegationRequest, caller string, now time.Time) (models.Delegation, error) {
	d := models.Delegation{From: strings.TrimSpace(req.From), To: strings.TrimSpace(req.To), End: req.End,
		Reason: req.Reason, CreatedBy: caller, Start: now}
	if d.From == "" {
		d.From = caller
	}
	if req.Start != nil {
		d.Start = *req.Start
	}
	switch {
	case !plainText(d.From) || !plainText(d.To) || !plainText(d.Reason):
		return d, apierror.BadRequest("from, to and reason must be UTF-8 text without NUL")
	case d.To == "" || len(d.To) > 128 || len(d.From) > 128:
		return d, apierror.BadRequest("to names who decides for from: 1 to 128 bytes")
	case d.To == d.From:
		return d, apierror.BadRequest(fmt.Sprintf("%s cannot lend their authority to themselves", d.From))
	case d.End.IsZero():
		return d, apierror.BadRequest("end is required: when the delegation ends (RFC 3339)")
	case !d.End.After(d.Start):
		return d, apierror.BadRequest("end must be after start")
	case !d.End.After(now):
		return d, apierror.BadRequest("end is in the past: the delegation would never hold")
	case d.End.Sub(d.Start) > maxDelegationPeriod:
		return d, apierror.BadRequest("a delegation lasts at most 366 days")
	case len(d.Reason) > maxPolicyReason:
		return d, apierror.BadRequest(fmt.Sprintf("reason is longer than %d bytes", maxPolicyReason))
	}
	return d, nil
}

// delegationOf reads the route's delegation as the caller may see it: one
// they lent or hold (an operator: any); else not found.
func (s *Resources) delegationOf(c *gin.Context, who wire.Caller, operator bool) (models.Delegation, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	notFound := apierror.NotFound("delegation %q does not exist", c.Param("id"))
	if err != nil || id < 1 {
		apierror.AbortResource(c, notFound)
		return models.Delegation{}, false
	}
	d, err := s.cfg.Delegations.DelegationByID(c.Request.Context(), id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !operator && d.From != who.Approver && d.To != who.Approver) {
		apierror.AbortResource(c, notFound)
		return models.Delegation{}, false
	}
	if err != nil {
		s.delegationStoreFailed(c, err)
		return models.Delegation{}, false
	}
	return d, true
}

// getDelegation serves GET /delegations/{id}.
func (s *Resources) getDelegation(c *gin.Context) {
	who, operator, ok := s.delegationCaller(c)
	if !ok {
		return
	}
	if d, ok := s.delegationOf(c, who, operator); ok {
		c.JSON(http.StatusOK, d)
	}
}

// revokeDelegation serves DELETE /delegations/{id}: ends it now (by its
// lender, its holder or an operator), recording who; the record stays.
func (s *Resources) revokeDelegation(c *gin.Context) {
	who, operator, ok := s.delegationCaller(c)
	if !ok {
		return
	}
	d, ok := s.delegationOf(c, who, operator)
	if !ok {
		return
	}
	d, err := s.cfg.Delegations.RevokeDelegation(c.Request.Context(), d.ID, who.Approver)
	if err != nil {
		s.delegationStoreFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}

// onBehalfOf returns who deciding with the authority of from
// (taskservice.Delegates, the check of every decision path).
func (s *Resources) onBehalfOf(ctx context.Context, who wire.Caller, from string) (wire.Caller, error) {
	return taskservice.Delegates{Lookup: s.cfg.Delegations, ApproverGroups: s.cfg.ApproverGroups,
		AuthOn: s.cfg.Auth.Enabled(), Logger: s.cfg.Logger}.OnBehalfOf(ctx, who, from)
}

// plainText reports whether s is UTF-8 without NUL: what the databases
// store as text (PostgreSQL refuses a NUL).
func plainText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

func (s *Resources) delegationStoreFailed(c *gin.Context, err error) {
	s.cfg.Logger.ErrorContext(c.Request.Context(), "delegation store", "error", err)
	c.Header("Retry-After", "5")
	apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrServerError, "the delegation store did not answer"))
}
