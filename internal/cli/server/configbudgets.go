package server

import (
	"fmt"

	"github.com/a2aflow/a2aflow/internal/activities"
)

// LLMBudgetKeys returns the keys of the config file's [[llm-budgets]]
// tables, for the reference.
func LLMBudgetKeys() []AgentKey {
	return []AgentKey{
		{"tenant", "the tenant: the task owner's principal (\"\" without authentication), or * for each tenant a budget of its own (required)"},
		{"period", "day, week (from Monday) or month, in UTC (required)"},
		{"usd", "what the tenant's LLM calls may cost in the period, in USD by the [[llm-prices]] table (required)"},
		{"increment", "what one approval lets the task spend more, in USD; default the agent's budget-increment, else usd"},
		{"approvers", "the approver groups that may allow more; default the agent's budget-approvers"},
		{"fail", "true: a task whose tenant's budget is spent fails at once instead of asking"},
	}
}

var llmBudgetKeys = []string{"tenant", "period", "usd", "increment", "approvers", "fail"}

// parseLLMBudgets reads the file's [[llm-budgets]] tables.
func parseLLMBudgets(path string, v any) (activities.TenantBudgets, error) {
	set := func(b *activities.TenantBudget, k string, v any) (known bool, err error) {
		switch k {
		case "tenant":
			b.Tenant, err = stringValue(v)
		case "period":
			b.Period, err = stringValue(v)
		case "usd":
			b.USD, err = numberValue(v, "USD")
		case "increment":
			b.Increment, err = numberValue(v, "USD")
		case "approvers":
			b.Approvers, err = stringList(v)
		case "fail":
			var ok bool
			if b.Fail, ok = v.(bool); !ok {
				err = fmt.Errorf("want true or false")
			}
		default:
			return false, nil
		}
		return true, err
	}
	return parseTables(path, "llm-budgets", v, llmBudgetKeys, set, (*activities.TenantBudget).Validate,
		func(b activities.TenantBudget) string { return fmt.Sprintf("tenant %q per %s", b.Tenant, b.Period) }, "two budgets")
}
