package server

import (
	"strings"
	"testing"
)

func TestParseLLMPrices(t *testing.T) {
	got, err := parseLLMPrices("a2aflow.toml", []any{
		map[string]any{"provider": "openai", "model": "gpt-4o-mini*", "input": 0.15, "cached_input": 0.075, "output": int64(1)},
		map[string]any{"provider": "anthropic", "model": "claude-x", "input": int64(3), "output": 15.0},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].CachedInput != 0.075 || got[0].Output != 1 || got[1].CachedInput != 3 {
		t.Errorf("prices = %+v (cached-input defaults to input)", got)
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{map[string]any{"provider": "openai"}, "want [[llm-prices]] tables"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "input": "cheap"}}, `key "input": bad value`},
		{[]any{map[string]any{"provider": "openai", "model": "m", "inptu": 1.0}}, `unknown key "inptu"`},
		{[]any{map[string]any{"model": "m", "input": 1.0}}, "provider is required"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "output": -1.0}}, "not negative"},
		{[]any{map[string]any{"provider": "openai", "model": "m"}, map[string]any{"provider": "openai", "model": "m"}}, "two prices"},
	} {
		if _, err := parseLLMPrices("a2aflow.toml", tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseLLMPrices(%v) = %v, want an error with %q", tt.v, err, tt.want)
		}
	}
}
