package activities

import (
	"testing"

	"github.com/a2aflow/a2aflow/llm"
)

func TestPricesCost(t *testing.T) {
	ps := Prices{
		{Provider: "openai", Model: "gpt-4o-mini", Input: 0.15, CachedInput: 0.075, Output: 0.6},
		{Provider: "openai", Model: "gpt-4o*", Input: 2.5, CachedInput: 1.25, Output: 10},
		{Provider: "openai", Model: "gpt-*", Input: 1, CachedInput: 1, Output: 1},
		{Provider: "anthropic", Model: "claude-x", Input: 3, CachedInput: 0.3, Output: 15},
	}
	u := llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, OutputTokens: 100_000}
	for _, tt := range []struct {
		provider, requested, answered string
		want                          float64
		ok                            bool
	}{
		{"openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", 0.6*0.15 + 0.4*0.075 + 0.1*0.6, true},
		{"openai", "", "gpt-4o-2024-08-06", 0.6*2.5 + 0.4*1.25 + 0.1*10, true}, // the longest prefix
		{"openai", "gpt-5", "", 0.6 + 0.4 + 0.1, true},
		{"anthropic", "claude-x", "claude-x", 0.6*3 + 0.4*0.3 + 0.1*15, true},
		{"anthropic", "gpt-4o-mini", "", 0, false}, // another provider's model
		{"openai", "o3", "o3-2025", 0, false},
	} {
		got, ok := ps.Cost(tt.provider, tt.requested, tt.answered, u)
		if ok != tt.ok || got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("Cost(%s, %s, %s) = %v, %t; want %v, %t", tt.provider, tt.requested, tt.answered, got, ok, tt.want, tt.ok)
		}
	}
	// More cached tokens than input tokens (a provider's bug) cost no less than zero.
	if got, _ := ps.Cost("openai", "gpt-4o-mini", "", llm.Usage{InputTokens: 10, CachedInputTokens: 50}); got < 0 {
		t.Errorf("cost %v < 0", got)
	}
	if err := (Price{Provider: "openai", Model: "m", Input: -1}).Validate(); err == nil {
		t.Error("a negative price validated")
	}
}
