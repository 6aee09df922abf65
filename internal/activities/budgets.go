package activities

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/llm"
)

// TenantBudget is what a tenant's LLM calls may cost in a period, in USD
// by the price table: the config file's [[llm-budgets]] sections. The
// CompleteChat activity sums the tenant's recorded calls of the period
// (the llm_usage table, shared by every worker) before each call; once
// they reached the budget (plus what approvers allowed the task more), it
// refuses the call with an llm.ErrTypeTenantBudgetExceeded error, and the
// task asks for more on an approval or fails (llm.Budget).
type TenantBudget struct {
	// Tenant is the task's owner the budget is for; "*" gives every tenant
	// a budget of its own.
	Tenant string
	// Period is "day", "week" (from Monday) or "month", in UTC.
	Period string
	// USD is the budget.
	USD float64
	// Increment is what one approval allows a task more; 0: the agent's
	// llm.Budget.Increment, else USD.
	Increment float64
	// Approvers are the groups that may allow more; none: the agent's
	// llm.Budget groups.
	Approvers []string
	// Fail fails the calls at once when the budget is spent.
	Fail bool
}

// BudgetPeriods are the periods of a TenantBudget.
var BudgetPeriods = []string{"day", "week", "month"}

// Validate checks b.
func (b TenantBudget) Validate() error {
	switch {
	case b.Tenant == "":
		return fmt.Errorf("tenant is required (the task owner's principal, or * for each tenant)")
	case !slices.Contains(BudgetPeriods, b.Period):
		return fmt.Errorf("period must be day, week or month")
	case !(b.USD > 0) || math.IsInf(b.USD, 0):
		return fmt.Errorf("usd must be a finite amount above 0")
	case b.Increment < 0 || math.IsNaN(b.Increment) || math.IsInf(b.Increment, 0):
		return fmt.Errorf("increment must be a finite amount, not negative")
	}
	return nil
}

// TenantBudgets are the budgets of a worker. A tenant's own entries apply,
// else the "*" entries; each period separately.
type TenantBudgets []TenantBudget

// of returns the budgets that apply to tenant.
func (bs TenantBudgets) of(tenant string) []TenantBudget {
	var own, any []TenantBudget
	for _, b := range bs {
		switch b.Tenant {
		case tenant:
			own = append(own, b)
		case "*":
			any = append(any, b)
		}
	}
	for _, b := range any {
		if !slices.ContainsFunc(own, func(o TenantBudget) bool { return o.Period == b.Period }) {
			own = append(own, b)
		}
	}
	return own
}

// PeriodStart returns when the period holding now started, in UTC.
func PeriodStart(period string, now time.Time) time.Time {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch period {
	case "week":
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case "month":
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

// SpendReader sums recorded LLM usage: *models.Store.
type SpendReader interface {
	UsageTotals(ctx context.Context, q models.UsageQuery) ([]models.UsageTotal, error)
}

// checkTenantBudgets refuses the call when a budget of the tenant is
// spent. A failure to read the spend is retried: the budget must hold.
func (a *LLM) checkTenantBudgets(ctx context.Context, tenant string, raises map[string]float64) error {
	budgets := a.Budgets.of(tenant)
	if len(budgets) == 0 {
		return nil
	}
	if a.Spend == nil {
		return temporal.NewNonRetryableApplicationError("[[llm-budgets]] are set but the worker has no usage store to read the spend from", llm.ErrTypeInvalidRequest, nil)
	}
	now := time.Now()
	if a.now != nil {
		now = a.now()
	}
	for _, b := range budgets {
		totals, err := a.Spend.UsageTotals(ctx, models.UsageQuery{By: models.UsageByOwner, Owner: tenant, OwnerSet: true, Since: PeriodStart(b.Period, now)})
		if err != nil {
			return fmt.Errorf("read the spend of tenant %q for its LLM budget: %w", tenant, err)
		}
		spent := 0.0
		for _, t := range totals {
			spent += t.CostUSD
		}
		spent = math.Round(spent*1e9) / 1e9
		limit := b.USD + raises[b.Period]
		if spent < limit {
			continue
		}
		tb := llm.TenantBudget{Tenant: tenant, Period: b.Period, SpentUSD: spent, BudgetUSD: limit,
			IncrementUSD: b.Increment, Approvers: slices.Clone(b.Approvers), Fail: b.Fail}
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tenant %q spent %.2f of its %.2f USD LLM budget this %s", tenant, spent, limit, b.Period),
			llm.ErrTypeTenantBudgetExceeded, nil, tb)
	}
	return nil
}
