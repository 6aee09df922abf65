package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// PolicyVersion is one change of the approval policies (internal/policies):
// the Cedar text of one scope as it is from this version on. Versions are
// numbered across every scope, 1, 2, 3...: the policies in force at version
// N are, for each scope, its latest text at or below N (an empty text: the
// scope has none). A version is never changed nor deleted, so what a task
// recorded ("decided under version 7") can always be read again.
type PolicyVersion struct {
	// Version numbers the change, from 1, across every scope.
	Version int64 `gorm:"primaryKey;autoIncrement:false" json:"version"`
	// Scope is the layer the text applies to: "server", "tenant/NAME",
	// "agent/NAME" or "tool/NAME".
	Scope string `gorm:"not null;index" json:"scope"`
	// Text is the scope's Cedar policies; empty: the change removed them.
	Text string `gorm:"type:text;not null" json:"text"`
	// Author is who made the change (the authenticated principal), Reason
	// why they say they did.
	Author    string    `gorm:"not null;default:''" json:"author"`
	Reason    string    `gorm:"not null;default:''" json:"reason"`
	CreatedAt time.Time `json:"createdAt"`
}

// TableName keeps the table's name short and stable.
func (PolicyVersion) TableName() string { return "policy_versions" }

// policyVersionTries bounds the attempts of AddPolicyVersion when another
// process takes the same version number at the same moment.
const policyVersionTries = 8

// AddPolicyVersion records a new version of scope's text, numbered after
// the latest version of any scope, and returns it.
func (s *Store) AddPolicyVersion(ctx context.Context, scope, text, author, reason string) (PolicyVersion, error) {
	out := PolicyVersion{Scope: scope, Text: text, Author: author, Reason: reason,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	var err error
	for range policyVersionTries {
		// One statement takes the next number and writes it: SQLite runs it
		// under its write lock; on PostgreSQL two at once collide on the
		// key, and the loser tries again.
		err = s.db.WithContext(ctx).Raw(`INSERT INTO policy_versions (version, scope, text, author, reason, created_at)
			SELECT COALESCE(MAX(version), 0) + 1, ?, ?, ?, ?, ? FROM policy_versions RETURNING version`,
			out.Scope, out.Text, out.Author, out.Reason, out.CreatedAt).Scan(&out.Version).Error
		if !s.isDuplicate(err) {
			break
		}
	}
	if err != nil {
		return PolicyVersion{}, fmt.Errorf("record policy version of %s: %w", scope, err)
	}
	return out, nil
}

// LatestPolicyVersion returns the number of the latest version (0: none).
func (s *Store) LatestPolicyVersion(ctx context.Context) (int64, error) {
	var latest int64
	if err := s.db.WithContext(ctx).Model(&PolicyVersion{}).Select("COALESCE(MAX(version), 0)").Scan(&latest).Error; err != nil {
		return 0, fmt.Errorf("latest policy version: %w", err)
	}
	return latest, nil
}

// PolicyVersionByNumber returns version v; ErrNotFound if there is none.
func (s *Store) PolicyVersionByNumber(ctx context.Context, v int64) (PolicyVersion, error) {
	var out PolicyVersion
	err := s.db.WithContext(ctx).Where("version = ?", v).Take(&out).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return PolicyVersion{}, fmt.Errorf("policy version %d: %w", v, ErrNotFound)
	}
	if err != nil {
		return PolicyVersion{}, fmt.Errorf("policy version %d: %w", v, err)
	}
	return out, nil
}

// PolicyHistory returns the versions of scope ("" every scope), the latest
// first, at most limit of them (0: 1,000).
func (s *Store) PolicyHistory(ctx context.Context, scope string, limit int) ([]PolicyVersion, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	tx := s.db.WithContext(ctx).Order("version DESC").Limit(limit)
	if scope != "" {
		tx = tx.Where("scope = ?", scope)
	}
	var out []PolicyVersion
	if err := tx.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("policy history: %w", err)
	}
	return out, nil
}

// PoliciesAt returns the policies in force at version v: for each scope,
// its latest version at or below v, those with a text, by scope. A v of 0
// or below is the latest version.
func (s *Store) PoliciesAt(ctx context.Context, v int64) ([]PolicyVersion, error) {
	tx := s.db.WithContext(ctx).Where("version IN (?)",
		s.db.Model(&PolicyVersion{}).Select("MAX(version)").Where("version <= ? OR ? <= 0", v, v).Group("scope"))
	var out []PolicyVersion
	if err := tx.Where("text <> ''").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("policies at version %d: %w", v, err)
	}
	// Byte order on every backend (PostgreSQL's collation may differ).
	slices.SortFunc(out, func(a, b PolicyVersion) int { return strings.Compare(a.Scope, b.Scope) })
	return out, nil
}
