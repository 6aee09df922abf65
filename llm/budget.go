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
// escalation as Request says) titled with what approving allows: "spent
// 5.10 of 5.00 USD; allow up to 10.10?". Approved, the budget becomes the
// spend so far plus Increment, so the next call runs however much the last
// one cost, and the loop goes on (asking again when that is spent);
// rejected (or its deadline passed), the call fails with a non-retryable
// ErrTypeBudgetExceeded error, and so does the task. With Fail set, the
// call fails so at once, without asking.
//
// The same approval guards the tenant's budgets of the config file
// ([[llm-budgets]]: a tenant's spend per day, week or month), which the
// CompleteChat activity checks; those the file gives approvers of their
// own ask them, the others ask Request's groups. Approved, the task may
// call while the tenant's spend in the period is below what it was plus
// the increment.
//
// What approvers allowed is the task's state (workflows.Task.RaiseBudget):
// it crosses continue-as-new. A run without a budget reads its state and
// records nothing more in its history.
type Budget struct {
	// USD is the task's budget; 0 sets none (the tenant's budgets still
	// apply).
	USD float64
	// Increment is what one approval allows beyond the spend so far;
	// default USD (or, for a tenant's budget, the file's increment, else
	// its budget).
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
	// IncrementUSD is what one approval allows the task beyond the spend;
	// 0: the agent's Budget.Increment, else the file's budget (BudgetUSD
	// without the task's raises).
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
	// IncrementUSD what approving allows beyond the spend.
	SpentUSD     float64 `json:"spentUSD"`
	BudgetUSD    float64 `json:"budgetUSD"`
	IncrementUSD float64 `json:"incrementUSD"`
	// NewBudgetUSD is the budget once approved: SpentUSD plus
	// IncrementUSD (BudgetUSD plus IncrementUSD if the spend is below the
	// budget). Unset in the approvals of tasks that asked before this
	// rule: approving those added IncrementUSD to BudgetUSD.
	NewBudgetUSD float64 `json:"newBudgetUSD,omitempty"`
}

// budgetFromSpendChange is the workflow.GetVersion change of what an
// approval of a spent budget allows. Before it (DefaultVersion), approving
// added the increment to the budget reached, so a call that cost more than
// the increment left the budget spent and the task asked again, without
// calling, until the increments caught up with the spend; from version 1
// the budget becomes the spend plus the increment, so the next call runs.
// Only a task that asks for more records the marker; the version of a
// run's first ask holds for its later asks, whose titles say so.
const budgetFromSpendChange = "a2aflow.llm-budget-from-spend"

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
		err := askMore(ctx, o, budgetAsk{
			action: BudgetAction{Budget: "task", SpentUSD: spent, BudgetUSD: limit, IncrementUSD: inc},
			key:    taskBudgetKey, base: b.USD, increment: inc, fail: b.Fail, groups: b.Request.Groups,
		})
		if err != nil {
			return err
		}
	}
}

// newBudget is the budget an approval of a sets (budgetFromSpendChange):
// the spend so far plus the increment, so the next call runs whatever the
// last one cost; the budget plus the increment if the spend is below it
// (a tenant's budget raised meanwhile by another of the task's asks).
func newBudget(a BudgetAction) float64 {
	return math.Round((max(a.SpentUSD, a.BudgetUSD)+a.IncrementUSD)*1e9) / 1e9
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
// found spent, and raises the task's allowance when approved. raised is
// what the call the activity refused had been allowed beyond the tenant's
// budgets (Request.TenantBudgetRaises): tb.BudgetUSD less it is the file's
// budget.
func raiseTenantBudget(ctx workflow.Context, o *callOptions, tb TenantBudget, raised map[string]float64) error {
	base := math.Round((tb.BudgetUSD-raised[tb.Period])*1e9) / 1e9
	inc := tb.IncrementUSD
	if inc <= 0 && o.budget != nil {
		inc = o.budget.Increment
	}
	// By default an approval allows the budget's own amount more; before
	// budgetFromSpendChange it allowed the budget reached more, raises
	// included, so that each approval doubled the last.
	incBefore := inc
	if inc <= 0 {
		inc, incBefore = base, tb.BudgetUSD
	}
	groups := tb.Approvers
	fail := tb.Fail
	if o.budget != nil {
		fail = fail || o.budget.Fail
		if len(groups) == 0 {
			groups = o.budget.Request.Groups
		}
	}
	return askMore(ctx, o, budgetAsk{
		action: BudgetAction{Budget: "tenant", Tenant: tb.Tenant, Period: tb.Period, SpentUSD: tb.SpentUSD, BudgetUSD: tb.BudgetUSD, IncrementUSD: incBefore},
		key:    tenantBudgetKey(tb.Period), base: base, increment: inc, fail: fail, groups: groups,
	})
}

// budgetAsk is a spent budget to ask more of.
type budgetAsk struct {
	// action is what the approval shows, its IncrementUSD as tasks asked
	// before budgetFromSpendChange had it.
	action BudgetAction
	// key names the budget's raises (Task.RaiseBudget), base is its own
	// amount, without them, and increment what an approval allows beyond
	// the spend.
	key       string
	base      float64
	increment float64
	// fail and groups say whether to fail at once and whom to ask.
	fail   bool
	groups []string
}

// askMore waits on the approval of a spent budget and, approved, raises
// the budget: to the spend plus the increment (budgetFromSpendChange), or
// by the increment in a run that asked before that change. It returns the
// error that fails the call when the budget says fail, no one may allow
// more, or the approval was rejected.
func askMore(ctx workflow.Context, o *callOptions, ask budgetAsk) error {
	a, fail, groups := ask.action, ask.fail, ask.groups
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
	fromSpend := workflow.GetVersion(ctx, budgetFromSpendChange, workflow.DefaultVersion, 1) >= 1
	if !fromSpend {
		// Asked as the task's history recorded it: approving adds the
		// increment to the budget reached.
		req.Title = fmt.Sprintf("%s; allow %s more?", spent, usd(a.IncrementUSD))
		if a.Budget == "tenant" {
			req.Title = fmt.Sprintf("tenant %s %s this %s; allow %s more?", tenantName(a.Tenant), spent, a.Period, usd(a.IncrementUSD))
		}
		req.Details = fmt.Sprintf("The task has reached %s (%s). Approving lets its LLM calls spend %s USD more; rejecting fails the task.", what, spent, usd(a.IncrementUSD))
	} else {
		a.IncrementUSD = ask.increment
		a.NewBudgetUSD = newBudget(a)
		req.Title = fmt.Sprintf("%s; allow up to %s?", spent, usd(a.NewBudgetUSD))
		if a.Budget == "tenant" {
			req.Title = fmt.Sprintf("tenant %s %s this %s; allow up to %s?", tenantName(a.Tenant), spent, a.Period, usd(a.NewBudgetUSD))
		}
		req.Details = fmt.Sprintf("The task has reached %s (%s). Approving raises it to %s USD, the spend so far plus %s, so that its next LLM call runs; rejecting fails the task.",
			what, spent, usd(a.NewBudgetUSD), usd(a.IncrementUSD))
	}
	req.Action = a
	req.EditSchema, req.GrantKey = nil, ""
	workflow.GetLogger(ctx).Info("LLM budget spent: asking for more", "budget", a.Budget, "spentUSD", a.SpentUSD, "budgetUSD", a.BudgetUSD, "newBudgetUSD", a.NewBudgetUSD)
	approval, err := o.usage.Approve(ctx, req)
	if err != nil {
		return err
	}
	if approval.Approved() {
		if !fromSpend {
			o.usage.RaiseBudget(ask.key, a.IncrementUSD)
		} else if more := a.NewBudgetUSD - ask.base - o.usage.BudgetRaised(ask.key); more > 0 {
			// Unless an approval decided meanwhile (another coroutine's
			// call) raised it further.
			o.usage.RaiseBudget(ask.key, more)
		}
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
