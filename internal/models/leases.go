package models

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// LLMLease is a slot of an LLM call limit ([[llm-limits]]) held by one
// call, in the database every worker process shares: the limit holds
// across processes. A lease expires at ExpiresAt unless its holder renews
// it (the CompleteChat activity renews while it heartbeats), so the slot of
// a worker that was killed frees itself; a released lease is expired at
// once but its row stays until StartedAt leaves the rate window, since it
// still counts for the rate.
type LLMLease struct {
	ID  string `gorm:"primaryKey"`
	Key string `gorm:"column:limit_key;not null;index"`
	// StartedAt and ExpiresAt are Unix microseconds: integers compare the
	// same on SQLite and PostgreSQL.
	StartedAt int64 `gorm:"not null"`
	ExpiresAt int64 `gorm:"not null"`
}

// TableName keeps the table's name short and stable.
func (LLMLease) TableName() string { return "llm_leases" }

// LLMLimitKey is one row per limited key, which Acquire updates first, so
// that acquirers of the same key take turns: the row lock on PostgreSQL,
// the database's write lock on SQLite. Without it two acquirers could both
// count four holders and both take the fifth slot.
type LLMLimitKey struct {
	Key       string `gorm:"column:limit_key;primaryKey"`
	UpdatedAt int64  `gorm:"autoUpdateTime:false"`
}

// TableName keeps the table's name short and stable.
func (LLMLimitKey) TableName() string { return "llm_limit_keys" }

// LeaseLimit is the limit Acquire applies to a key: at most Concurrency
// unexpired leases (0: no concurrency limit) and at most Rate leases
// started per second (0: no rate limit).
type LeaseLimit struct {
	Concurrency int
	Rate        float64
}

// rateWindow is the window in which at most n calls may start for rate
// calls per second: n = max(1, floor(rate)), window = n/rate (5/s: 5 calls
// per second; 0.5/s: 1 call per 2 seconds; 2.5/s: 2 per 0.8 s).
func rateWindow(rate float64) (int64, time.Duration) {
	n := math.Max(1, math.Floor(rate))
	return int64(n), time.Duration(n / rate * float64(time.Second))
}

// AcquireLLMLease takes a slot of key under lim for ttl, as of now. It
// returns the lease's ID, or "" and how long to wait before trying again
// when the key is at its limit.
func (s *Store) AcquireLLMLease(ctx context.Context, key string, lim LeaseLimit, ttl time.Duration, now time.Time) (string, time.Duration, error) {
	if ttl <= 0 {
		return "", 0, fmt.Errorf("lease TTL must be above 0")
	}
	at := now.UnixMicro()
	var n int64
	var window time.Duration
	if lim.Rate > 0 {
		n, window = rateWindow(lim.Rate)
	}
	id := ""
	var wait time.Duration
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Take the key's lock before reading anything.
		row := LLMLimitKey{Key: key, UpdatedAt: at}
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "limit_key"}},
			DoUpdates: clause.AssignmentColumns([]string{"updated_at"})}).Create(&row).Error; err != nil {
			return err
		}
		// Rows that count for neither limit any more.
		if err := tx.Where("limit_key = ? AND expires_at <= ? AND started_at <= ?", key, at, at-window.Microseconds()).
			Delete(&LLMLease{}).Error; err != nil {
			return err
		}
		if lim.Concurrency > 0 {
			var held []LLMLease
			if err := tx.Where("limit_key = ? AND expires_at > ?", key, at).Order("expires_at").Find(&held).Error; err != nil {
				return err
			}
			if len(held) >= lim.Concurrency {
				// A slot frees when a holder releases (any time) or at the
				// first expiry at the latest.
				wait = time.Duration(held[0].ExpiresAt-at) * time.Microsecond
				return nil
			}
		}
		if n > 0 {
			var started []LLMLease
			if err := tx.Where("limit_key = ? AND started_at > ?", key, at-window.Microseconds()).Order("started_at").Find(&started).Error; err != nil {
				return err
			}
			if int64(len(started)) >= n {
				wait = time.Duration(started[int64(len(started))-n].StartedAt+window.Microseconds()-at) * time.Microsecond
				return nil
			}
		}
		lease := LLMLease{ID: uuid.NewString(), Key: key, StartedAt: at, ExpiresAt: at + ttl.Microseconds()}
		if err := tx.Create(&lease).Error; err != nil {
			return err
		}
		id = lease.ID
		return nil
	})
	if err != nil {
		return "", 0, fmt.Errorf("acquire LLM call slot %s: %w", key, err)
	}
	return id, max(wait, 0), nil
}

// RenewLLMLease extends lease id to expire ttl after now. It returns false
// when the lease is gone (it expired and another acquirer removed it): the
// holder no longer counts, and should not pretend to.
func (s *Store) RenewLLMLease(ctx context.Context, id string, ttl time.Duration, now time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&LLMLease{}).Where("id = ?", id).
		Update("expires_at", now.UnixMicro()+ttl.Microseconds())
	return res.RowsAffected == 1, res.Error
}

// ReleaseLLMLease frees lease id's concurrency slot at now; it still counts
// for the rate until it leaves the rate window.
func (s *Store) ReleaseLLMLease(ctx context.Context, id string, now time.Time) error {
	return s.db.WithContext(ctx).Model(&LLMLease{}).Where("id = ?", id).
		Update("expires_at", now.UnixMicro()).Error
}
