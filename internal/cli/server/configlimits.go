package server

import (
	"fmt"

	"github.com/a2aflow/a2aflow/internal/activities"
)

// LLMLimitKeys returns the keys of the config file's [[llm-limits]]
// tables, for the reference.
func LLMLimitKeys() []AgentKey {
	return []AgentKey{
		{"provider", "openai, anthropic or gemini: the provider the limit is for (required)"},
		{"model", "the model, as an agent requests it (model, A2AFLOW_LLM_MODEL); a name ending in * is a prefix, e.g. gpt-4o* (required)"},
		{"rate", "how many calls may start per second, across all workers (e.g. 0.5, 5); 0 or unset: no rate limit"},
		{"concurrency", "how many calls may run at once, across all workers; 0 or unset: no limit"},
		{"per-tenant", "true: each tenant (the task's owner) has the whole limit to itself; default false: all tenants share it"},
	}
}

var llmLimitKeys = []string{"provider", "model", "rate", "concurrency", "per-tenant"}

// parseLLMLimits reads the file's [[llm-limits]] tables.
func parseLLMLimits(path string, v any) (activities.Limits, error) {
	set := func(l *activities.Limit, k string, v any) (known bool, err error) {
		switch k {
		case "provider":
			l.Provider, err = stringValue(v)
		case "model":
			l.Model, err = stringValue(v)
		case "rate":
			l.Rate, err = numberValue(v, "calls per second")
		case "concurrency":
			var n float64
			n, err = numberValue(v, "calls at once")
			if err == nil && n != float64(int(n)) {
				err = fmt.Errorf("want a whole number of calls")
			}
			l.Concurrency = int(n)
		case "per-tenant":
			var ok bool
			if l.PerTenant, ok = v.(bool); !ok {
				err = fmt.Errorf("want true or false")
			}
		default:
			return false, nil
		}
		return true, err
	}
	return parseTables(path, "llm-limits", v, llmLimitKeys, set, (*activities.Limit).Validate,
		func(l activities.Limit) string { return l.Provider + "\x00" + l.Model }, "two limits")
}
