package server

import (
	"strings"
	"testing"
)

func TestParseLLMLimits(t *testing.T) {
	got, err := parseLLMLimits("a2aflow.toml", []any{
		map[string]any{"provider": "openai", "model": "gpt-4o*", "rate": 0.5, "concurrency": int64(10), "per_tenant": true},
		map[string]any{"provider": "anthropic", "model": "claude-x", "concurrency": int64(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Rate != 0.5 || got[0].Concurrency != 10 || !got[0].PerTenant || got[1].Concurrency != 2 || got[1].Rate != 0 {
		t.Errorf("limits = %+v", got)
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{map[string]any{"provider": "openai"}, "want [[llm-limits]] tables"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "rate": "fast"}}, `key "rate": bad value`},
		{[]any{map[string]any{"provider": "openai", "model": "m", "concurrency": 2.5}}, "whole number"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "per-tenant": "yes"}}, "true or false"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "concurency": int64(1)}}, `unknown key "concurency"`},
		{[]any{map[string]any{"model": "m", "rate": 1.0}}, "provider is required"},
		{[]any{map[string]any{"provider": "openai", "model": "m"}}, "set rate, concurrency or both"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "concurrency": int64(-1)}}, "not be negative"},
		{[]any{map[string]any{"provider": "openai", "model": "m", "rate": 1.0}, map[string]any{"provider": "openai", "model": "m", "rate": 2.0}}, "two limits"},
	} {
		if _, err := parseLLMLimits("a2aflow.toml", tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseLLMLimits(%v) = %v, want an error with %q", tt.v, err, tt.want)
		}
	}
}
