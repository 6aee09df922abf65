package llm

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// Budget is what a task's LLM calls may cost, in USD by the worker's price
// table ([[llm-prices]]). Before each call of a Function or Worker run
// with [WithBudget] and [WithUsage], the task's spend so far (its token
// usage's CostUSD) is compared with the budget plus what approvers allowed
// more; once it has reached them, the task waits on an ordinary approval
// (the inbox, `a2aflow approvals`, REST, approval webhooks, deadlines and
// escalation as Request says) titled "spent 4.10 of 5.00 USD; allow 5.00
// more?". Approved, the budget grows by Increment and the loop goes on;
// rejected (or its deadline passed), the call fails with a non-retryable
// ErrTypeBudgetExceeded error, and so does the task. With Fail set, the
// call fails so at once, without asking.
//
// The same approval guards the tenant's budgets of the config file
// ([[llm-budgets]]: a tenant's spend per day, week or month), which the
// CompleteChat activity checks; those the file gives approvers of their
// own ask them, the others ask Request's groups.
//
// What approvers allowed is the task's state (workflows.Task.RaiseBudget):
// it crosses continue-as-new. A run without a budget reads its state and
// records nothing more in its history.
type Budget struct {
	// USD is the task's budget; 0 sets none (the tenant's budgets still
	// apply).
	USD float64
	// Increment is what one approval allows more; default USD (or, for a
	// tenant's budget, the file's increment, else its budget).
	Increment float64
	// Fail makes a spent budget fail the call at once instead of asking.
	Fail bool
	// Request is the approval asked for: Groups (required unless Fail),
	// Required, Timeout, OnTimeout, EscalateTo. The title and the action
	// are the budget's.
	Request workflows.ApprovalRequest
}

// WithBudget sets the task's LLM budget (see [Budget]); it needs
// [WithUsage], which counts the task's spend.
func WithBudget(b Budget) Option {
	return func(o *callOptions) { o.budget = &b }
}

// budgetKey keys the default budget WithDefaultBudget puts into a context.
type budgetKey struct{}

// WithDefaultBudget returns ctx whose LLM calls (Function, Worker) have
// budget b unless a call sets its own with WithBudget: how a config file
// gives any agent's tasks a budget (budget-usd).
func WithDefaultBudget(ctx workflow.Context, b Budget) workflow.Context {
	return workflow.WithValue(ctx, budgetKey{}, b)
}

// TenantBudget is a tenant's budget for a period, as the CompleteChat
// activity found it spent: the details of an ErrTypeTenantBudgetExceeded
// error, and what the approval shows.
type TenantBudget struct {
	// Tenant is the task's owner ("" without authentication).
	Tenant string `json:"tenant"`
	// Period is "day", "week" or "month" (UTC; weeks start on Monday).
	Period string `json:"period"`
	// SpentUSD is the tenant's spend in the period so far, BudgetUSD its
	// budget plus what the task was allowed more.
	SpentUSD  float64 `json:"spentUSD"`
	BudgetUSD float64 `json:"budgetUSD"`
	// IncrementUSD is what one approval allows the task more; 0: the
	// agent's Budget.Increment, else BudgetUSD.
	IncrementUSD float64 `json:"incrementUSD,omitempty"`
	// Approvers are the file's approver groups; none: the agent's
	// Budget.Request.Groups.
	Approvers []string `json:"approvers,omitempty"`
	// Fail says the file's budget fails calls at once.
	Fail bool `json:"fail,omitempty"`
}

// BudgetAction is the Action of a budget's approval request: what the
// approver decides on.
type BudgetAction struct {
	// Budget is "task" or "tenant".
	Budget string `json:"budget"`
	// Tenant and Period name a tenant's budget.
	Tenant string `json:"tenant,omitempty"`
	Period string `json:"period,omitempty"`
	// SpentUSD is what was spent, BudgetUSD the budget it reached and
	// IncrementUSD what approving allows more.
	SpentUSD     float64 `json:"spentUSD"`
	BudgetUSD    float64 `json:"budgetUSD"`
	IncrementUSD float64 `json:"incrementUSD"`
}

// taskBudgetKey keys the task budget's raises (workflows.Task.RaiseBudget).
const taskBudgetKey = "llm:task"

// tenantBudgetKey keys the raises of a tenant's budget for a period.
func tenantBudgetKey(period string) string { return "llm:tenant:" + period }

// checkTaskBudget returns once the task may make its next call: at once
// when it has no budget or has not spent it, after an approval otherwise.
// It reads the task's state only, recording nothing, unless the budget is
// spent.
func checkTaskBudget(ctx workflow.Context, o *callOptions) error {
	b := o.budget
	if b == nil || b.USD <= 0 || o.usage == nil {
		return nil
	}
	for {
		limit := b.USD + o.usage.BudgetRaised(taskBudgetKey)
		spent := o.usage.TokenUsage().CostUSD
		if spent < limit {
			return nil
		}
		inc := b.Increment
		if inc <= 0 {
			inc = b.USD
		}
		action := BudgetAction{Budget: "task", SpentUSD: spent, BudgetUSD: limit, IncrementUSD: inc}
		if err := askBudget(ctx, o, action, b.Fail, b.Request.Groups); err != nil {
			return err
		}
		o.usage.RaiseBudget(taskBudgetKey, inc)
	}
}

// budgetPeriods are the periods of a tenant's budgets.
var budgetPeriods = []string{"day", "week", "month"}

// tenantRaises returns what approvers allowed the task beyond its tenant's
// budgets, by period; nil when nothing.
func tenantRaises(o *callOptions) map[string]float64 {
	if o.usage == nil {
		return nil
	}
	var out map[string]float64
	for _, p := range budgetPeriods {
		if v := o.usage.BudgetRaised(tenantBudgetKey(p)); v > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[p] = v
		}
	}
	return out
}

// tenantBudgetSpent returns the tenant's budget an activity error says is
// spent.
func tenantBudgetSpent(err error) (TenantBudget, bool) {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != ErrTypeTenantBudgetExceeded {
		return TenantBudget{}, false
	}
	var tb TenantBudget
	if appErr.HasDetails() {
		if derr := appErr.Details(&tb); derr != nil {
			return TenantBudget{}, false
		}
	}
	return tb, true
}

// raiseTenantBudget asks for more of the tenant's budget an activity
// found spent, and raises the task's allowance when approved.
func raiseTenantBudget(ctx workflow.Context, o *callOptions, tb TenantBudget) error {
	inc := tb.IncrementUSD
	if inc <= 0 && o.budget != nil {
		inc = o.budget.Increment
	}
	if inc <= 0 {
		inc = tb.BudgetUSD
	}
	groups := tb.Approvers
	fail := tb.Fail
	if o.budget != nil {
		fail = fail || o.budget.Fail
		if len(groups) == 0 {
			groups = o.budget.Request.Groups
		}
	}
	action := BudgetAction{Budget: "tenant", Tenant: tb.Tenant, Period: tb.Period, SpentUSD: tb.SpentUSD, BudgetUSD: tb.BudgetUSD, IncrementUSD: inc}
	if err := askBudget(ctx, o, action, fail, groups); err != nil {
		return err
	}
	o.usage.RaiseBudget(tenantBudgetKey(tb.Period), inc)
	return nil
}

// askBudget waits on the approval of a spent budget; it returns nil when
// approved and the error that fails the call otherwise.
func askBudget(ctx workflow.Context, o *callOptions, a BudgetAction, fail bool, groups []string) error {
	what := "the task's LLM budget"
	if a.Budget == "tenant" {
		what = fmt.Sprintf("the %s LLM budget of tenant %q", periodly(a.Period), a.Tenant)
	}
	spent := fmt.Sprintf("spent %s of %s USD", usd(a.SpentUSD), usd(a.BudgetUSD))
	switch {
	case fail:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s is spent: %s", what, spent), ErrTypeBudgetExceeded, nil, a)
	case o.usage == nil:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s is spent: %s, and the call runs outside a task (llm.WithUsage), so no one can allow more", what, spent), ErrTypeBudgetExceeded, nil, a)
	case len(groups) == 0:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s is spent: %s, and the budget names no approvers to allow more", what, spent), ErrTypeBudgetExceeded, nil, a)
	}
	req := workflows.ApprovalRequest{}
	if o.budget != nil {
		req = o.budget.Request
	}
	req.Groups = groups
	req.Title = fmt.Sprintf("%s; allow %s more?", spent, usd(a.IncrementUSD))
	if a.Budget == "tenant" {
		req.Title = fmt.Sprintf("tenant %s %s this %s; allow %s more?", tenantName(a.Tenant), spent, a.Period, usd(a.IncrementUSD))
	}
	req.Details = fmt.Sprintf("The task has reached %s (%s). Approving lets its LLM calls spend %s USD more; rejecting fails the task.", what, spent, usd(a.IncrementUSD))
	req.Action = a
	req.EditSchema, req.GrantKey = nil, ""
	workflow.GetLogger(ctx).Info("LLM budget spent: asking for more", "budget", a.Budget, "spentUSD", a.SpentUSD, "budgetUSD", a.BudgetUSD)
	approval, err := o.usage.Approve(ctx, req)
	if err != nil {
		return err
	}
	if approval.Approved() {
		return nil
	}
	var by []string
	for _, d := range approval.Decisions {
		if !d.Approved {
			s := d.Approver
			if d.Comment != "" {
				s += ": " + d.Comment
			}
			by = append(by, s)
		}
	}
	if len(by) == 0 {
		by = append(by, approval.State)
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s is spent (%s) and no more was allowed: approval %s rejected by %s",
		what, spent, approval.ID, strings.Join(by, "; ")), ErrTypeBudgetExceeded, nil, a)
}

// usd formats an amount of dollars: two decimals, more for small amounts.
func usd(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
	}
	return fmt.Sprintf("%.2f", v)
}

func periodly(p string) string {
	switch p {
	case "day":
		return "daily"
	case "week":
		return "weekly"
	case "month":
		return "monthly"
	}
	return p
}

func tenantName(t string) string {
	if t == "" {
		return "(anonymous)"
	}
	return t
}
