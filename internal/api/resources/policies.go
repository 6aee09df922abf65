package resources

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
)

// PolicyStore keeps the versions of the approval policies (models.Store).
type PolicyStore interface {
	AddPolicyVersion(ctx context.Context, scope, text, author, reason string) (models.PolicyVersion, error)
	LatestPolicyVersion(ctx context.Context) (int64, error)
	PolicyVersionByNumber(ctx context.Context, v int64) (models.PolicyVersion, error)
	PolicyHistory(ctx context.Context, scope string, limit int) ([]models.PolicyVersion, error)
	PoliciesAt(ctx context.Context, v int64) ([]models.PolicyVersion, error)
	PolicyRequests(ctx context.Context, since time.Time, tenant string, tenantSet bool, limit int) ([]models.PolicyRequest, error)
}

// PolicyTry is the body of POST /policies/try.
type PolicyTry struct {
	Scope string `json:"scope"`
	Text  string `json:"text"`
	// Since is how far back: "30d", "12h", or an RFC 3339 time; default 30d.
	Since string `json:"since,omitempty"`
}

// PoliciesResponse is the body of GET /policies: the policies in force.
type PoliciesResponse struct {
	// Version is the latest version of any scope (0: none was ever set).
	Version int64 `json:"version"`
	// Scopes are the scopes with policies in force the caller
	// administers, each its latest version.
	Scopes []models.PolicyVersion `json:"scopes"`
}

// PolicyChange is the body of PUT /policies/{scope}.
type PolicyChange struct {
	// Text is the scope's Cedar policies from now on; empty removes them.
	Text string `json:"text"`
	// Reason says why, for the history.
	Reason string `json:"reason"`
}

// PolicyCheck is the body of POST /policies/validate.
type PolicyCheck struct {
	Scope string `json:"scope"`
	Text  string `json:"text"`
}

// PolicyProblems is the answer of POST /policies/validate and of a PUT it
// refuses (400): the problems found, each with its line.
type PolicyProblems struct {
	Valid    bool               `json:"valid"`
	Error    string             `json:"error,omitempty"`
	Problems []policies.Problem `json:"problems,omitempty"`
}

// maxPolicyReason bounds a change's reason.
const maxPolicyReason = 1000

func (s *Resources) policyRoutes(r gin.IRouter) {
	r.GET("/policies", s.listPolicies)
	r.POST("/policies/validate", s.validatePolicies)
	r.POST("/policies/try", s.tryPolicies)
	for _, path := range []string{"/policies/:layer", "/policies/:layer/:name"} {
		r.GET(path, s.getPolicies)
		r.PUT(path, s.setPolicies)
		r.DELETE(path, s.setPolicies)
	}
	r.GET("/policy-versions", s.policyHistory)
	r.GET("/policy-versions/:version", s.policyVersion)
}

// policyAdmin returns what the caller may administer (guard.PolicyAdminOf),
// refusing one who administers nothing (403) or a server that keeps no
// policies.
func (s *Resources) policyAdmin(c *gin.Context) (guard.PolicyAdmin, bool) {
	if s.cfg.Policies == nil {
		apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrUnsupportedOperation, "this server keeps no policies (no database)"))
		return guard.PolicyAdmin{}, false
	}
	name := guard.Principal(c.Request.Context())
	if name == "" {
		name = strings.TrimSpace(c.GetHeader(guard.ApproverHeader))
		if len(name) > 128 {
			apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("%s header is longer than 128 bytes", guard.ApproverHeader)))
			return guard.PolicyAdmin{}, false
		}
		if name == "" {
			name = guard.DefaultApprover
		}
	}
	a := guard.PolicyAdminOf(s.cfg.PolicyAdmins, s.cfg.Auth.Enabled(), name)
	if !a.Any() {
		apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrUnauthorized, "only operators and tenants' admins may read or change policies (--policy-admins)"))
		return a, false
	}
	return a, true
}

// scopeOf reads the scope of the route and checks that the caller
// administers it.
func (s *Resources) scopeOf(c *gin.Context, a guard.PolicyAdmin, raw string) (policies.Scope, bool) {
	sc, err := policies.ParseScope(raw)
	if err != nil {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(err.Error()))
		return sc, false
	}
	if !a.Administers(sc.Layer, sc.Name) {
		apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrUnauthorized, fmt.Sprintf("%s may not administer the policies of %s", a.Name, sc)))
		return sc, false
	}
	return sc, true
}

func routeScope(c *gin.Context) string {
	if name := c.Param("name"); name != "" {
		return c.Param("layer") + "/" + name
	}
	return c.Param("layer")
}

// listPolicies serves GET /policies: the latest version number and the
// scopes in force the caller administers.
func (s *Resources) listPolicies(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	v, err := s.cfg.Policies.LatestPolicyVersion(ctx)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	list, err := s.cfg.Policies.PoliciesAt(ctx, v)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	out := PoliciesResponse{Version: v, Scopes: []models.PolicyVersion{}}
	for _, p := range list {
		if sc, err := policies.ParseScope(p.Scope); err == nil && a.Administers(sc.Layer, sc.Name) {
			out.Scopes = append(out.Scopes, p)
		}
	}
	c.JSON(http.StatusOK, out)
}

// getPolicies serves GET /policies/{scope}: the scope's policies in force
// (?version=N: in force at version N); 404 when it has none.
func (s *Resources) getPolicies(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	sc, ok := s.scopeOf(c, a, routeScope(c))
	if !ok {
		return
	}
	var at int64
	if v := c.Query("version"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("version=%q: want a version number", v)))
			return
		}
		at = n
	}
	list, err := s.cfg.Policies.PoliciesAt(c.Request.Context(), at)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	for _, p := range list {
		if p.Scope == sc.String() {
			c.JSON(http.StatusOK, p)
			return
		}
	}
	apierror.AbortResource(c, apierror.NotFound("%s has no policies in force", sc))
}

// setPolicies serves PUT /policies/{scope} (a PolicyChange) and DELETE
// (?reason=): a new version of the scope's text, compiled first: a text
// that does not parse or validate is refused (400) with its problems.
func (s *Resources) setPolicies(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	sc, ok := s.scopeOf(c, a, routeScope(c))
	if !ok {
		return
	}
	change := PolicyChange{Reason: c.Query("reason")}
	if c.Request.Method == http.MethodPut && !s.decodePolicyJSON(c, &change) {
		return
	}
	if len(change.Reason) > maxPolicyReason {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("the reason is longer than %d bytes", maxPolicyReason)))
		return
	}
	if _, err := policies.Compile(sc.String(), change.Text); err != nil {
		abortInvalidPolicies(c, err)
		return
	}
	v, err := s.cfg.Policies.AddPolicyVersion(c.Request.Context(), sc.String(), change.Text, a.Name, change.Reason)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	s.cfg.Logger.InfoContext(c.Request.Context(), "policies changed", "scope", v.Scope, "version", v.Version, "author", v.Author)
	c.JSON(http.StatusOK, v)
}

// validatePolicies serves POST /policies/validate: whether a text would be
// accepted for a scope, and its problems.
func (s *Resources) validatePolicies(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	var in PolicyCheck
	if !s.decodePolicyJSON(c, &in) {
		return
	}
	if _, ok := s.scopeOf(c, a, in.Scope); !ok {
		return
	}
	if _, err := policies.Compile(in.Scope, in.Text); err != nil {
		c.JSON(http.StatusOK, problemsOf(err))
		return
	}
	c.JSON(http.StatusOK, PolicyProblems{Valid: true})
}

// tryPolicies serves POST /policies/try: what a candidate text of a scope
// would have changed in the requests the gates judged since since (a
// tenant's admin: its tenant's requests).
func (s *Resources) tryPolicies(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	var in PolicyTry
	if !s.decodePolicyJSON(c, &in) {
		return
	}
	sc, ok := s.scopeOf(c, a, in.Scope)
	if !ok {
		return
	}
	if in.Since == "" {
		in.Since = "30d"
	}
	since, err := policies.ParseSince(in.Since, time.Now())
	if err != nil {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(err.Error()))
		return
	}
	if _, err := policies.Compile(sc.String(), in.Text); err != nil {
		abortInvalidPolicies(c, err)
		return
	}
	ctx := c.Request.Context()
	requests, err := s.cfg.Policies.PolicyRequests(ctx, since, sc.Name, !a.Operator, 0)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	res, err := policies.Try(ctx, s.cfg.Policies, sc.String(), in.Text, since, requests)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// policyHistory serves GET /policy-versions?scope=&limit=: the versions,
// the latest first, of the scopes the caller administers.
func (s *Resources) policyHistory(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	scope := c.Query("scope")
	if scope != "" {
		if _, ok := s.scopeOf(c, a, scope); !ok {
			return
		}
	} else if !a.Operator {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest("scope=: a tenant's admin names the scope (tenant/NAME)"))
		return
	}
	limit := 100
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("limit=%q: want 1 to 1000", v)))
			return
		}
		limit = n
	}
	list, err := s.cfg.Policies.PolicyHistory(c.Request.Context(), scope, limit)
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	if list == nil {
		list = []models.PolicyVersion{}
	}
	c.JSON(http.StatusOK, gin.H{"versions": list})
}

// policyVersion serves GET /policy-versions/{n}: one version, of a scope
// the caller administers.
func (s *Resources) policyVersion(c *gin.Context) {
	a, ok := s.policyAdmin(c)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(c.Param("version"), 10, 64)
	if err != nil || n < 1 {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("version %q: want a version number", c.Param("version"))))
		return
	}
	v, err := s.cfg.Policies.PolicyVersionByNumber(c.Request.Context(), n)
	if errors.Is(err, models.ErrNotFound) {
		apierror.AbortResource(c, apierror.NotFound("policy version %d does not exist", n))
		return
	}
	if err != nil {
		s.policyStoreFailed(c, err)
		return
	}
	if _, ok := s.scopeOf(c, a, v.Scope); !ok {
		return
	}
	c.JSON(http.StatusOK, v)
}

// decodePolicyJSON reads the body as JSON into v, answering 415 to
// another Content-Type and 400 to a body that does not decode.
func (s *Resources) decodePolicyJSON(c *gin.Context, v any) bool {
	ct := c.GetHeader("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		apierror.AbortMediaType(c, fmt.Sprintf("Content-Type %q is not accepted: send application/json", ct))
		return false
	}
	if err := c.ShouldBindJSON(v); err != nil {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest("the body is not the JSON expected: "+err.Error()))
		return false
	}
	return true
}

func problemsOf(err error) PolicyProblems {
	var inv *policies.InvalidError
	if errors.As(err, &inv) {
		return PolicyProblems{Error: inv.Error(), Problems: inv.Problems}
	}
	return PolicyProblems{Error: err.Error()}
}

// abortInvalidPolicies answers a text Compile refused: 400, with its
// problems.
func abortInvalidPolicies(c *gin.Context, err error) {
	c.AbortWithStatusJSON(http.StatusBadRequest, problemsOf(err))
}

// policyStoreFailed answers a store that did not answer: 503, retryable.
func (s *Resources) policyStoreFailed(c *gin.Context, err error) {
	s.cfg.Logger.ErrorContext(c.Request.Context(), "policy store", "error", err)
	c.Header("Retry-After", strconv.Itoa(int((5 * time.Second).Seconds())))
	apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrServerError, "the policy store did not answer"))
}
