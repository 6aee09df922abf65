package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// PolicyRequest is one request a policy gate judged (the DecidePolicy
// local activity), kept so that a new text of policies can be tried on
// what the gates saw (`a2aflow policies try`): the request as judged, the
// decision and the version it was judged under. Keyed by the judgment's
// run and activity, so that a retried attempt is one row.
type PolicyRequest struct {
	RunID      string `gorm:"not null;uniqueIndex:idx_policy_requests_call,priority:1" json:"runId"`
	ActivityID string `gorm:"not null;uniqueIndex:idx_policy_requests_call,priority:2" json:"activityId"`
	TaskID     string `gorm:"not null;default:''" json:"taskId"`
	// Tenant, Agent, Action and Name (the tool or step) say what it was,
	// for the report; Input is the whole wire.PolicyInput (JSON).
	Tenant string `gorm:"not null;default:'';index" json:"tenant"`
	Agent  string `gorm:"not null;default:''" json:"agent"`
	Action string `gorm:"not null;default:''" json:"action"`
	Name   string `gorm:"not null;default:''" json:"name"`
	Input  string `gorm:"type:text;not null" json:"input"`
	Effect string `gorm:"not null;default:''" json:"effect"`
	// Version is the policy version it was judged under.
	Version   int64     `gorm:"not null;default:0" json:"version"`
	CreatedAt time.Time `gorm:"index" json:"createdAt"`
}

// TableName keeps the table's name short and stable.
func (PolicyRequest) TableName() string { return "policy_requests" }

// RecordPolicyRequests records judged requests, keeping the first row of a
// call recorded twice.
func (s *Store) RecordPolicyRequests(ctx context.Context, rs []PolicyRequest) error {
	if len(rs) == 0 {
		return nil
	}
	for i := range rs {
		if rs[i].CreatedAt.IsZero() {
			rs[i].CreatedAt = time.Now().UTC()
		}
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rs).Error
	if err != nil {
		return fmt.Errorf("record policy requests: %w", err)
	}
	return nil
}

// PolicyRequests returns the judged requests since since (of tenant, when
// tenantSet), the oldest first, at most limit (0: 100,000).
func (s *Store) PolicyRequests(ctx context.Context, since time.Time, tenant string, tenantSet bool, limit int) ([]PolicyRequest, error) {
	if limit <= 0 || limit > 100000 {
		limit = 100000
	}
	tx := s.db.WithContext(ctx).Where("created_at >= ?", since.UTC()).Order("created_at, run_id, activity_id").Limit(limit)
	if tenantSet {
		tx = tx.Where("tenant = ?", tenant)
	}
	var out []PolicyRequest
	if err := tx.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("policy requests: %w", err)
	}
	return out, nil
}

// PrunePolicyRequests deletes the judged requests recorded before before
// (--policy-requests-retention) and returns how many it deleted.
func (s *Store) PrunePolicyRequests(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("created_at < ?", before.UTC()).Delete(&PolicyRequest{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune policy requests: %w", res.Error)
	}
	return res.RowsAffected, nil
}
