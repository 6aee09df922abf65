package server

import (
	"strings"
	"testing"
)

func TestParseLLMBudgets(t *testing.T) {
	got, err := parseLLMBudgets("a2aflow.toml", []any{
		map[string]any{"tenant": "*", "period": "month", "usd": int64(200), "approvers": []any{"finance"}},
		map[string]any{"tenant": "acme", "period": "day", "usd": 5.5, "increment": 1.5, "fail": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].USD != 200 || got[0].Approvers[0] != "finance" || got[0].Fail ||
		got[1].Tenant != "acme" || got[1].USD != 5.5 || got[1].Increment != 1.5 || !got[1].Fail {
		t.Errorf("budgets = %+v", got)
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{map[string]any{"tenant": "*"}, "want [[llm-budgets]] tables"},
		{[]any{map[string]any{"tenant": "*", "period": "day", "usd": "lots"}}, `key "usd": bad value`},
		{[]any{map[string]any{"tenant": "*", "period": "year", "usd": 1.0}}, "day, week or month"},
		{[]any{map[string]any{"period": "day", "usd": 1.0}}, "tenant is required"},
		{[]any{map[string]any{"tenant": "*", "period": "day", "usd": 0.0}}, "above 0"},
		{[]any{map[string]any{"tenant": "*", "period": "day", "usd": 1.0, "fail": "yes"}}, "true or false"},
		{[]any{map[string]any{"tenant": "*", "period": "day", "usd": 1.0, "aprovers": []any{"x"}}}, `unknown key "aprovers"`},
		{[]any{map[string]any{"tenant": "*", "period": "day", "usd": 1.0}, map[string]any{"tenant": "*", "period": "day", "usd": 2.0}}, "two budgets"},
	} {
		if _, err := parseLLMBudgets("a2aflow.toml", tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseLLMBudgets(%v) = %v, want an error with %q", tt.v, err, tt.want)
		}
	}
}
