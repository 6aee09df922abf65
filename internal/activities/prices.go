package activities

import (
	"fmt"
	"math"
	"strings"

	"github.com/a2aflow/a2aflow/llm"
)

// Price is what one provider's model costs, in USD per million tokens: the
// config file's [[llm-prices]] sections.
type Price struct {
	// Provider is "openai", "anthropic" or "gemini" (the provider's Name).
	Provider string
	// Model is the model's name as requested or as the provider answers
	// it; a name ending in "*" is a prefix ("gpt-4o-mini*").
	Model string
	// Input is the price of a prompt token, CachedInput of one the provider
	// read from its prompt cache, Output of an answer token.
	Input, CachedInput, Output float64
}

// Validate checks p.
func (p Price) Validate() error {
	switch {
	case p.Provider == "":
		return fmt.Errorf("provider is required")
	case p.Model == "":
		return fmt.Errorf("model is required")
	case p.Input < 0 || p.CachedInput < 0 || p.Output < 0 ||
		math.IsNaN(p.Input) || math.IsNaN(p.CachedInput) || math.IsNaN(p.Output) ||
		math.IsInf(p.Input, 0) || math.IsInf(p.CachedInput, 0) || math.IsInf(p.Output, 0):
		return fmt.Errorf("prices must be finite and not negative")
	}
	return nil
}

// Prices is a price table. Lookup order: the exact model a call
// requested, the exact model the provider answered with, then the longest
// prefix entry ("NAME*") matching either.
type Prices []Price

// Cost returns what u cost with the price of provider's model (requested
// or answered), and whether the table has one.
func (ps Prices) Cost(provider, requested, answered string, u llm.Usage) (float64, bool) {
	p, ok := ps.find(provider, requested, answered)
	if !ok {
		return 0, false
	}
	cached := min(max(u.CachedInputTokens, 0), max(u.InputTokens, 0))
	uncached := max(u.InputTokens, 0) - cached
	c := (float64(uncached)*p.Input + float64(cached)*p.CachedInput + float64(max(u.OutputTokens, 0))*p.Output) / 1e6
	return math.Round(c*1e9) / 1e9, true
}

func (ps Prices) find(provider, requested, answered string) (Price, bool) {
	for _, name := range []string{requested, answered} {
		for _, p := range ps {
			if p.Provider == provider && name != "" && p.Model == name {
				return p, true
			}
		}
	}
	best, found := Price{}, false
	for _, p := range ps {
		prefix, ok := strings.CutSuffix(p.Model, "*")
		if !ok || p.Provider != provider || (found && len(prefix) <= len(strings.TrimSuffix(best.Model, "*"))) {
			continue
		}
		if (requested != "" && strings.HasPrefix(requested, prefix)) || (answered != "" && strings.HasPrefix(answered, prefix)) {
			best, found = p, true
		}
	}
	return best, found
}
