package workflows

import (
	"github.com/a2aflow/a2aflow/internal/wire"
)

// TokenUsage counts the LLM tokens a task used, summed over its calls.
type TokenUsage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// Calls is the number of LLM calls.
	Calls int64 `json:"calls"`
}

// AddTokenUsage adds u to the task's token usage, recorded in the task's
// metadata under [UsageMetadataKey] so every client reading the task sees
// what it cost, and returns the new total. The llm package calls it for
// every LLM call made with llm.WithUsage(t).
func (t *Task) AddTokenUsage(u TokenUsage) TokenUsage {
	total := t.TokenUsage()
	total.InputTokens += u.InputTokens
	total.OutputTokens += u.OutputTokens
	total.Calls += u.Calls
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
