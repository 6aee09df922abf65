package server

import (
	"fmt"
	"strings"

	"github.com/a2aflow/a2aflow/internal/activities"
)

// LLMPriceKeys returns the keys of the config file's [[llm-prices]]
// tables, for the reference.
func LLMPriceKeys() []AgentKey {
	return []AgentKey{
		{"provider", "openai or anthropic: the provider the price is for (required)"},
		{"model", "the model, as an agent requests it (model, A2AFLOW_LLM_MODEL) or as the provider answers; a name ending in * is a prefix, e.g. gpt-4o-mini* (required)"},
		{"input", "USD per million prompt tokens"},
		{"cached-input", "USD per million prompt tokens read from the provider's prompt cache; default the input price"},
		{"output", "USD per million answer tokens"},
	}
}

var llmPriceKeys = []string{"provider", "model", "input", "cached-input", "output"}

// parseLLMPrices reads the file's [[llm-prices]] tables.
func parseLLMPrices(path string, v any) (activities.Prices, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: key \"llm-prices\": want [[llm-prices]] tables", path)
	}
	var out activities.Prices
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: llm-prices[%d]: want a table", path, i)
		}
		var p activities.Price
		cachedSet := false
		for raw, v := range m {
			k := strings.ReplaceAll(raw, "_", "-")
			var err error
			switch k {
			case "provider":
				p.Provider, err = stringValue(v)
			case "model":
				p.Model, err = stringValue(v)
			case "input":
				p.Input, err = priceValue(v)
			case "cached-input":
				p.CachedInput, err = priceValue(v)
				cachedSet = true
			case "output":
				p.Output, err = priceValue(v)
			default:
				return nil, fmt.Errorf("config file %s: llm-prices[%d]: unknown key %q%s", path, i, k, didYouMean(k, llmPriceKeys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: llm-prices[%d]: key %q: bad value %s: %v", path, i, k, showValue(v), err)
			}
		}
		if !cachedSet {
			p.CachedInput = p.Input
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("config file %s: llm-prices[%d]: %w", path, i, err)
		}
		if key := p.Provider + "\x00" + p.Model; seen[key] {
			return nil, fmt.Errorf("config file %s: llm-prices: %s %s has two prices", path, p.Provider, p.Model)
		} else {
			seen[key] = true
		}
		out = append(out, p)
	}
	return out, nil
}

// priceValue reads a price: a TOML number (integer or float).
func priceValue(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	case int:
		return float64(n), nil
	}
	return 0, fmt.Errorf("want a number (USD per million tokens)")
}
