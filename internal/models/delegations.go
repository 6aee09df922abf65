package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Delegation is an approver's authority lent to another person for a
// period (out of office): between Start and End, To decides approvals as
// From would, with From's approver groups, and each such decision is
// recorded as "To for From". A delegation is never deleted: revoking it
// ends it (Revoked), so the records it made stay explained.
type Delegation struct {
	ID   int64  `gorm:"primaryKey;autoIncrement" json:"id"`
	From string `gorm:"column:delegator;not null;index" json:"from"`
	To   string `gorm:"column:delegate;not null;index" json:"to"`
	// Start and End bound the period: Start <= now < End.
	Start  time.Time `gorm:"not null" json:"start"`
	End    time.Time `gorm:"not null" json:"end"`
	Reason string    `gorm:"not null;default:''" json:"reason"`
	// CreatedBy is who recorded it (From, or an operator), CreatedAt when.
	CreatedBy string    `gorm:"not null;default:''" json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	// RevokedBy and RevokedAt say who ended it early, and when.
	RevokedBy string     `gorm:"not null;default:''" json:"revokedBy,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// TableName keeps the table's name short and stable.
func (Delegation) TableName() string { return "delegations" }

// ActiveAt reports whether d lends its authority at t.
func (d Delegation) ActiveAt(t time.Time) bool {
	return !t.Before(d.Start) && t.Before(d.End) && (d.RevokedAt == nil || t.Before(*d.RevokedAt))
}

// AddDelegation records d (its ID and CreatedAt are set) and returns it.
func (s *Store) AddDelegation(ctx context.Context, d Delegation) (Delegation, error) {
	d.ID = 0
	d.CreatedAt = time.Now().UTC().Truncate(time.Microsecond)
	d.Start, d.End = d.Start.UTC().Truncate(time.Microsecond), d.End.UTC().Truncate(time.Microsecond)
	d.RevokedAt, d.RevokedBy = nil, ""
	if err := s.db.WithContext(ctx).Create(&d).Error; err != nil {
		return Delegation{}, fmt.Errorf("record delegation from %s to %s: %w", d.From, d.To, err)
	}
	return d, nil
}

// Delegations returns the delegations from or to who ("": everyone's), the
// latest first, at most 1,000.
func (s *Store) Delegations(ctx context.Context, who string) ([]Delegation, error) {
	tx := s.db.WithContext(ctx).Order("id DESC").Limit(1000)
	if who != "" {
		tx = tx.Where("delegator = ? OR delegate = ?", who, who)
	}
	var out []Delegation
	if err := tx.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("delegations: %w", err)
	}
	return out, nil
}

// DelegationByID returns delegation id; ErrNotFound if there is none.
func (s *Store) DelegationByID(ctx context.Context, id int64) (Delegation, error) {
	var out Delegation
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&out).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Delegation{}, fmt.Errorf("delegation %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Delegation{}, fmt.Errorf("delegation %d: %w", id, err)
	}
	return out, nil
}

// RevokeDelegation ends delegation id now, recording by; a delegation
// already revoked keeps its first revocation. It returns the delegation.
func (s *Store) RevokeDelegation(ctx context.Context, id int64, by string) (Delegation, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	err := s.db.WithContext(ctx).Model(&Delegation{}).Where("id = ? AND revoked_at IS NULL", id).
		Updates(map[string]any{"revoked_at": now, "revoked_by": by}).Error
	if err != nil {
		return Delegation{}, fmt.Errorf("revoke delegation %d: %w", id, err)
	}
	return s.DelegationByID(ctx, id)
}

// DelegationsFromTo returns the delegations from from to to, the latest
// first: the caller picks the one active at its time (Delegation.ActiveAt),
// or tells why none is.
func (s *Store) DelegationsFromTo(ctx context.Context, from, to string) ([]Delegation, error) {
	var out []Delegation
	err := s.db.WithContext(ctx).Where("delegator = ? AND delegate = ?", from, to).Order("id DESC").Limit(100).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("delegations from %s to %s: %w", from, to, err)
	}
	return out, nil
}
