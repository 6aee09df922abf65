package server

import (
	"github.com/a2aflow/a2aflow/internal/activities"
)

// LLMPriceKeys returns the keys of the config file's [[llm-prices]]
// tables, for the reference.
func LLMPriceKeys() []AgentKey {
	return []AgentKey{
		{"provider", "openai, anthropic or gemini: the provider the price is for (required)"},
		{"model", "the model, as an agent requests it (model, A2AFLOW_LLM_MODEL) or as the provider answers; a name ending in * is a prefix, e.g. gpt-4o-mini* (required)"},
		{"input", "USD per million prompt tokens"},
		{"cached-input", "USD per million prompt tokens read from the provider's prompt cache; default the input price"},
		{"output", "USD per million answer tokens"},
	}
}

var llmPriceKeys = []string{"provider", "model", "input", "cached-input", "output"}

// parseLLMPrices reads the file's [[llm-prices]] tables.
func parseLLMPrices(path string, v any) (activities.Prices, error) {
	type table struct {
		activities.Price
		cachedSet bool
	}
	set := func(p *table, k string, v any) (known bool, err error) {
		switch k {
		case "provider":
			p.Provider, err = stringValue(v)
		case "model":
			p.Model, err = stringValue(v)
		case "input":
			p.Input, err = numberValue(v, "USD per million tokens")
		case "cached-input":
			p.CachedInput, err = numberValue(v, "USD per million tokens")
			p.cachedSet = true
		case "output":
			p.Output, err = numberValue(v, "USD per million tokens")
		default:
			return false, nil
		}
		return true, err
	}
	finish := func(p *table) error {
		if !p.cachedSet {
			p.CachedInput = p.Input
		}
		return p.Validate()
	}
	tables, err := parseTables(path, "llm-prices", v, llmPriceKeys, set, finish,
		func(p table) string { return p.Provider + "\x00" + p.Model }, "two prices")
	var out activities.Prices
	for _, t := range tables {
		out = append(out, t.Price)
	}
	return out, err
}
