package workflows

import (
	"math"
	"slices"
)

// budgets is the budgets unit of a run (units.go): what approvers allowed a
// task to spend beyond its LLM budgets (llm.WithBudget, the config file's
// [[llm-budgets]]), by budget. A raise is the task's: it crosses
// continue-as-new, so a continued task does not ask again for what was
// approved.
type budgets struct {
	unitBase
	r *run `carry:"-"`

	raises []budgetRaise
}

// budgetRaise is what approvers allowed beyond one budget.
type budgetRaise struct {
	// Key names the budget: "task", or "tenant:PERIOD".
	Key string  `json:"key"`
	USD float64 `json:"usd"`
}

var _ unit = (*budgets)(nil)

func (u *budgets) carry(c *continuedTask)   { c.Budgets = slices.Clone(u.raises) }
func (u *budgets) restore(c *continuedTask) { u.raises = slices.Clone(c.Budgets) }

// BudgetRaised returns what approvers allowed the task to spend beyond the
// budget named key, in USD (0 when nothing was approved). The llm package's
// budgets (llm.WithBudget) read it before each LLM call.
func (t *Task) BudgetRaised(key string) float64 {
	for _, b := range t.r.budgets.raises {
		if b.Key == key {
			return b.USD
		}
	}
	return 0
}

// RaiseBudget adds usd to what the task may spend beyond the budget named
// key, and returns the new raise. It is the task's state: it crosses
// continue-as-new. Workflow code: the llm package calls it when an
// approver allowed more.
func (t *Task) RaiseBudget(key string, usd float64) float64 {
	u := &t.r.budgets
	for i := range u.raises {
		if u.raises[i].Key == key {
			u.raises[i].USD = math.Round((u.raises[i].USD+usd)*1e9) / 1e9
			return u.raises[i].USD
		}
	}
	u.raises = append(u.raises, budgetRaise{Key: key, USD: usd})
	return usd
}
