package policies

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/expr-lang/expr"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// BenchmarkPolicyGate is what the DecidePolicy local activity does for one
// gated call — read the latest version from SQLite, judge the call by the
// compiled policies of four scopes — against the expr gate of the config
// file's tool-approvals (its condition compiled when a task starts, as
// llmagents does, and run on the call's arguments), in the same run. It
// reports each one's p50 and p99 per call (ns):
//
//	go test ./internal/policies -run '^$' -bench PolicyGate -benchtime 2000x
func BenchmarkPolicyGate(b *testing.B) {
	store, err := models.Open(filepath.Join(b.TempDir(), "a2aflow.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	for scope, text := range map[string]string{
		"agent/payables":   payables,
		"server":           `@id("no-destructive") @reason("off") forbid (principal, action == Action::"callTool", resource) when { context.annotations.destructive };`,
		"tenant/alice":     `@id("ro") permit (principal, action == Action::"callTool", resource) when { context.annotations.readOnly };`,
		"tool/pay_invoice": `@id("eur") @groups("treasury") permit (principal, action == Action::"callTool", resource) when { context.texts.hasTag("currency") && context.texts.getTag("currency") != "EUR" };`,
	} {
		if _, err := Compile(scope, text); err != nil {
			b.Fatal(err)
		}
		if _, err := store.AddPolicyVersion(ctx, scope, text, "root", "bench"); err != nil {
			b.Fatal(err)
		}
	}
	e := NewEngine(store)
	in := payCall("2000")
	in.Arguments = []byte(`{"invoice": "INV-1", "amount": 2000, "currency": "EUR"}`)
	if d := e.DecidePolicy(ctx, in); d.Effect != wire.PolicyApprove {
		b.Fatalf("the bench's call: %+v", d)
	}
	program, err := expr.Compile("amount > 1000", expr.AsBool(), expr.AllowUndefinedVariables())
	if err != nil {
		b.Fatal(err)
	}
	exprGate := func() bool {
		var args map[string]any
		if err := json.Unmarshal(in.Arguments, &args); err != nil {
			return true
		}
		out, err := expr.Run(program, args)
		gated, _ := out.(bool)
		return err != nil || gated
	}
	var policy, exprTimes []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if d := e.DecidePolicy(ctx, in); d.Effect != wire.PolicyApprove {
			b.Fatal(d)
		}
		t1 := time.Now()
		if !exprGate() {
			b.Fatal("the expr gate let it through")
		}
		policy, exprTimes = append(policy, t1.Sub(t0)), append(exprTimes, time.Since(t1))
	}
	b.StopTimer()
	pct := func(ds []time.Duration, p float64) float64 {
		slices.Sort(ds)
		return float64(ds[int(float64(len(ds)-1)*p)].Nanoseconds())
	}
	b.ReportMetric(pct(policy, 0.5), "policy-p50-ns")
	b.ReportMetric(pct(policy, 0.99), "policy-p99-ns")
	b.ReportMetric(pct(exprTimes, 0.5), "expr-p50-ns")
	b.ReportMetric(pct(exprTimes, 0.99), "expr-p99-ns")
}
