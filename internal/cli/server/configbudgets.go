package server

import (
	"fmt"
	"strings"

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
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: key \"llm-budgets\": want [[llm-budgets]] tables", path)
	}
	var out activities.TenantBudgets
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: llm-budgets[%d]: want a table", path, i)
		}
		var b activities.TenantBudget
		for raw, v := range m {
			k := strings.ReplaceAll(raw, "_", "-")
			var err error
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
				return nil, fmt.Errorf("config file %s: llm-budgets[%d]: unknown key %q%s", path, i, k, didYouMean(k, llmBudgetKeys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: llm-budgets[%d]: key %q: bad value %s: %v", path, i, k, showValue(v), err)
			}
		}
		if err := b.Validate(); err != nil {
			return nil, fmt.Errorf("config file %s: llm-budgets[%d]: %w", path, i, err)
		}
		if key := b.Tenant + "\x00" + b.Period; seen[key] {
			return nil, fmt.Errorf("config file %s: llm-budgets: tenant %q has two budgets per %s", path, b.Tenant, b.Period)
		} else {
			seen[key] = true
		}
		out = append(out, b)
	}
	return out, nil
}
