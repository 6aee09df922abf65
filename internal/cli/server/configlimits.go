package server

import (
	"fmt"
	"strings"

	"github.com/a2aflow/a2aflow/internal/activities"
)

// LLMLimitKeys returns the keys of the config file's [[llm-limits]]
// tables, for the reference.
func LLMLimitKeys() []AgentKey {
	return []AgentKey{
		{"provider", "openai or anthropic: the provider the limit is for (required)"},
		{"model", "the model, as an agent requests it (model, A2AFLOW_LLM_MODEL); a name ending in * is a prefix, e.g. gpt-4o* (required)"},
		{"rate", "how many calls may start per second, across all workers (e.g. 0.5, 5); 0 or unset: no rate limit"},
		{"concurrency", "how many calls may run at once, across all workers; 0 or unset: no limit"},
		{"per-tenant", "true: each tenant (the task's owner) has the whole limit to itself; default false: all tenants share it"},
	}
}

var llmLimitKeys = []string{"provider", "model", "rate", "concurrency", "per-tenant"}

// parseLLMLimits reads the file's [[llm-limits]] tables.
func parseLLMLimits(path string, v any) (activities.Limits, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: key \"llm-limits\": want [[llm-limits]] tables", path)
	}
	var out activities.Limits
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: llm-limits[%d]: want a table", path, i)
		}
		var l activities.Limit
		for raw, v := range m {
			k := strings.ReplaceAll(raw, "_", "-")
			var err error
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
				return nil, fmt.Errorf("config file %s: llm-limits[%d]: unknown key %q%s", path, i, k, didYouMean(k, llmLimitKeys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: llm-limits[%d]: key %q: bad value %s: %v", path, i, k, showValue(v), err)
			}
		}
		if err := l.Validate(); err != nil {
			return nil, fmt.Errorf("config file %s: llm-limits[%d]: %w", path, i, err)
		}
		if key := l.Provider + "\x00" + l.Model; seen[key] {
			return nil, fmt.Errorf("config file %s: llm-limits: %s %s has two limits", path, l.Provider, l.Model)
		} else {
			seen[key] = true
		}
		out = append(out, l)
	}
	return out, nil
}

// numberValue reads a TOML number (integer or float).
func numberValue(v any, unit string) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	case int:
		return float64(n), nil
	}
	return 0, fmt.Errorf("want a number (%s)", unit)
}
