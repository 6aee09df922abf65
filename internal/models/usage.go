package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// LLMUsage is one LLM call a task recorded: its tokens and cost, keyed by
// the call's activity (task, run, activity ID). Activity IDs are unique
// within a run and a retried activity keeps its ID, so a call recorded by
// an attempt whose result was lost and again by the retry that the task
// took is one row (the retry's); a replay of the workflow runs no
// activity, so it records nothing. A task that continued as new has
// another run ID: its calls are other rows.
type LLMUsage struct {
	TaskID     string `gorm:"not null;uniqueIndex:idx_llm_usage_call,priority:1" json:"taskId"`
	RunID      string `gorm:"not null;uniqueIndex:idx_llm_usage_call,priority:2" json:"runId"`
	ActivityID string `gorm:"not null;uniqueIndex:idx_llm_usage_call,priority:3" json:"activityId"`
	// Owner is the principal that created the task (the tenant; "" without
	// authentication), ContextID its context, Agent its agent.
	Owner     string `gorm:"not null;default:'';index" json:"owner"`
	ContextID string `gorm:"not null;default:'';index" json:"contextId"`
	Agent     string `gorm:"not null;default:''" json:"agent"`
	Provider  string `gorm:"not null;default:''" json:"provider"`
	Model     string `gorm:"not null;default:''" json:"model"`
	// InputTokens counts every prompt token, CachedInputTokens those of
	// them read from the provider's prompt cache.
	InputTokens       int64 `gorm:"not null;default:0" json:"inputTokens"`
	CachedInputTokens int64 `gorm:"not null;default:0" json:"cachedInputTokens"`
	OutputTokens      int64 `gorm:"not null;default:0" json:"outputTokens"`
	// CostUSD is the call's cost by the worker's price table (0: no price).
	CostUSD   float64   `gorm:"not null;default:0" json:"costUSD"`
	CreatedAt time.Time `gorm:"index" json:"createdAt"`
}

// TableName keeps the table's name short and stable.
func (LLMUsage) TableName() string { return "llm_usage" }

// RecordLLMUsage records u, replacing the row of the same call (a retried
// activity's attempt): see LLMUsage.
func (s *Store) RecordLLMUsage(ctx context.Context, u LLMUsage) error {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = time.Now().UTC()
	}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "task_id"}, {Name: "run_id"}, {Name: "activity_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"owner", "context_id", "agent", "provider", "model",
			"input_tokens", "cached_input_tokens", "output_tokens", "cost_usd", "created_at"}),
	}).Create(&u).Error
}

// Usage groupings (UsageQuery.By).
const (
	UsageByTask    = "task"
	UsageByContext = "context"
	UsageByAgent   = "agent"
	UsageByOwner   = "owner"
	UsageByModel   = "model"
)

// UsageBys are the groupings UsageTotals takes.
var UsageBys = []string{UsageByAgent, UsageByContext, UsageByOwner, UsageByTask, UsageByModel}

var usageColumns = map[string]string{
	UsageByTask: "task_id", UsageByContext: "context_id", UsageByAgent: "agent", UsageByOwner: "owner",
	UsageByModel: "provider || '/' || model",
}

// UsageQuery selects usage totals.
type UsageQuery struct {
	// By groups the totals: UsageByAgent (default), ...
	By string
	// Owner, when OwnerSet, keeps only that owner's calls (a tenant sees
	// its own).
	Owner    string
	OwnerSet bool
	// Agent, ContextID and TaskID, when set, keep only those calls.
	Agent, ContextID, TaskID string
	// Since and Until, when set, bound the calls' times.
	Since, Until time.Time
}

// UsageTotal is the sum of the calls of one group.
type UsageTotal struct {
	Key               string  `json:"key"`
	Calls             int64   `json:"calls"`
	InputTokens       int64   `json:"inputTokens"`
	CachedInputTokens int64   `json:"cachedInputTokens"`
	OutputTokens      int64   `json:"outputTokens"`
	CostUSD           float64 `json:"costUSD"`
}

// UsageTotals sums the recorded calls by q.By, the most expensive first.
func (s *Store) UsageTotals(ctx context.Context, q UsageQuery) ([]UsageTotal, error) {
	if q.By == "" {
		q.By = UsageByAgent
	}
	col, ok := usageColumns[q.By]
	if !ok {
		return nil, fmt.Errorf("unknown grouping %q (agent, context, owner, task or model)", q.By)
	}
	tx := s.db.WithContext(ctx).Model(&LLMUsage{}).
		Select(col + " AS key, COUNT(*) AS calls, SUM(input_tokens) AS input_tokens, SUM(cached_input_tokens) AS cached_input_tokens, " +
			"SUM(output_tokens) AS output_tokens, SUM(cost_usd) AS cost_usd")
	if q.OwnerSet {
		tx = tx.Where("owner = ?", q.Owner)
	}
	for c, v := range map[string]string{"agent": q.Agent, "context_id": q.ContextID, "task_id": q.TaskID} {
		if v != "" {
			tx = tx.Where(c+" = ?", v)
		}
	}
	if !q.Since.IsZero() {
		tx = tx.Where("created_at >= ?", q.Since.UTC())
	}
	if !q.Until.IsZero() {
		tx = tx.Where("created_at < ?", q.Until.UTC())
	}
	var out []UsageTotal
	err := tx.Group(col).Order("cost_usd DESC, key").Limit(1000).Scan(&out).Error
	return out, err
}
