package resources

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/models"
)

// UsageReader sums the recorded LLM usage (models.Store): the CompleteChat
// activity records each call, keyed by the call's activity, so the totals
// count every call a task made once, whatever its retries and replays.
type UsageReader interface {
	UsageTotals(ctx context.Context, q models.UsageQuery) ([]models.UsageTotal, error)
}

// UsageResponse is the body of GET /usage.
type UsageResponse struct {
	// By is the grouping: agent, context, owner, task or model.
	By string `json:"by"`
	// Totals are the groups, the most expensive first (at most 1,000).
	Totals []models.UsageTotal `json:"totals"`
	// Total sums them.
	Total models.UsageTotal `json:"total"`
}

func (s *Resources) usageRoutes(r gin.IRouter) {
	r.GET("/usage", s.usage)
}

// usage serves GET /usage?by=agent|context|owner|task|model, with the
// filters agent, context, task, since and until (RFC 3339). With
// authentication on, a caller sees the usage of its own tasks only (the
// tasks it owns: the one authorization rule); without, all of it.
func (s *Resources) usage(c *gin.Context) {
	ctx := c.Request.Context()
	if s.cfg.Usage == nil {
		apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrUnsupportedOperation, "this server keeps no LLM usage (no database)"))
		return
	}
	q := models.UsageQuery{By: c.DefaultQuery("by", models.UsageByAgent), Agent: c.Query("agent"),
		ContextID: c.Query("context"), TaskID: c.Query("task")}
	if !slices.Contains(models.UsageBys, q.By) {
		apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("by=%q: want agent, context, owner, task or model", q.By)))
		return
	}
	for _, v := range []string{q.Agent, q.ContextID, q.TaskID} {
		if len(v) > 256 {
			apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest("filter values must be at most 256 bytes"))
			return
		}
	}
	for name, to := range map[string]*time.Time{"since": &q.Since, "until": &q.Until} {
		if v := c.Query(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				apierror.Abort(c, apierror.Plain, 0, apierror.BadRequest(fmt.Sprintf("%s=%q: want an RFC 3339 time, e.g. 2026-11-01T00:00:00Z", name, v)))
				return
			}
			*to = t
		}
	}
	if s.cfg.Auth.Enabled() {
		q.Owner, q.OwnerSet = guard.Principal(ctx), true
	}
	totals, err := s.cfg.Usage.UsageTotals(ctx, q)
	if err != nil {
		s.cfg.Logger.ErrorContext(ctx, "usage totals", "error", err)
		apierror.Abort(c, apierror.Plain, 0, a2a.NewError(a2a.ErrInternalError, "the usage totals could not be read"))
		return
	}
	out := UsageResponse{By: q.By, Totals: totals, Total: models.UsageTotal{Key: "total"}}
	if out.Totals == nil {
		out.Totals = []models.UsageTotal{}
	}
	for _, t := range totals {
		out.Total.Calls += t.Calls
		out.Total.InputTokens += t.InputTokens
		out.Total.CachedInputTokens += t.CachedInputTokens
		out.Total.OutputTokens += t.OutputTokens
		out.Total.CostUSD += t.CostUSD
	}
	c.JSON(http.StatusOK, out)
}
