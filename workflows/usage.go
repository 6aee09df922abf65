package workflows

import (
	"math"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TokenUsage counts the LLM tokens a task used, summed over its calls.
type TokenUsage struct {
	// InputTokens counts every prompt token, CachedInputTokens those of
	// them read from the provider's prompt cache.
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64 `json:"outputTokens"`
	// Calls is the number of LLM calls.
	Calls int64 `json:"calls"`
	// CostUSD is what the calls cost by the worker's price table
	// ([[llm-prices]] in the config file), as each call's activity priced it.
	CostUSD float64 `json:"costUSD,omitempty"`
}

// AddTokenUsage adds u to the task's token usage, recorded in the task's
// metadata under [UsageMetadataKey] so every client reading the task sees
// what it cost, and returns the new total. The llm package calls it for
// every LLM call made with llm.WithUsage(t).
func (t *Task) AddTokenUsage(u TokenUsage) TokenUsage {
	total := t.TokenUsage()
	total.InputTokens += u.InputTokens
	total.CachedInputTokens += u.CachedInputTokens
	total.OutputTokens += u.OutputTokens
	total.Calls += u.Calls
	total.CostUSD = math.Round((total.CostUSD+u.CostUSD)*1e9) / 1e9
	if t.r.task.Metadata == nil {
		t.r.task.Metadata = map[string]any{}
	}
	t.r.task.Metadata[wire.UsageMetadataKey] = total
	return total
}

// TokenUsage returns the task's token usage so far.
func (t *Task) TokenUsage() TokenUsage {
	u, _ := t.r.task.Metadata[wire.UsageMetadataKey].(TokenUsage)
	return u
}

// setTokenUsage restores the usage an earlier run counted (its metadata
// went through JSON, so the value is no longer a TokenUsage).
func (t *Task) setTokenUsage(u TokenUsage) {
	if t.r.task.Metadata == nil {
		t.r.task.Metadata = map[string]any{}
	}
	t.r.task.Metadata[wire.UsageMetadataKey] = u
}

// usageMemoChange is the workflow.GetVersion change of the task's token
// usage in its memo (RecordUsageMemo): runs recorded before upserted none.
const usageMemoChange = "a2aflow.llm-usage-memo"

// RecordUsageMemo writes the task's token usage and cost into the
// workflow's memo, which the Temporal UI shows on the run's page, when it
// changed since the last write: the llm package calls it once per
// Function or Worker run that made calls (each memo upsert is a history
// event: one per answer, not one per call).
func (t *Task) RecordUsageMemo(ctx workflow.Context) {
	u := t.TokenUsage()
	if u == t.r.usageMemo {
		return
	}
	if t.r.recording.MergedWrites() {
		t.r.setMemo(wire.UsageMetadataKey, u) // writes.go; no version marker
		t.r.usageMemo = u
		return
	}
	if workflow.GetVersion(ctx, usageMemoChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{wire.UsageMetadataKey: u}); err != nil {
		t.r.logger.Warn("upsert memo", "key", wire.UsageMetadataKey, "error", err)
		return
	}
	t.r.usageMemo = u
}
