package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

// Store is the database of everything that is not a task.
type Store struct {
	db *gorm.DB
}

// Open opens (creating if needed) the SQLite database at path and migrates
// its schema. WAL mode with synchronous=NORMAL: a killed process loses
// nothing committed; an OS crash can lose the last commits, which an activity
// retry then redoes (every write here is idempotent).
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_foreign_keys=on"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := db.AutoMigrate(&Booking{}, &RemoteAgent{}); err != nil {
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Booking is a reservation made by the travel agent's booking activity.
type Booking struct {
	// IdempotencyKey identifies the request that made the booking (the task
	// ID), so an activity retried after a crash finds its booking instead of
	// booking twice.
	IdempotencyKey string `gorm:"primaryKey" json:"-"`
	// Reference is the confirmation code shown to the traveller.
	Reference   string    `gorm:"uniqueIndex;not null" json:"reference"`
	Destination string    `json:"destination"`
	Date        string    `json:"date"`
	Travellers  int       `json:"travellers"`
	CreatedAt   time.Time `json:"createdAt"`
}

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("not found")

// CreateBooking stores b unless a booking with its IdempotencyKey exists, and
// returns the stored booking either way.
func (s *Store) CreateBooking(b *Booking) (*Booking, error) {
	if err := s.db.Clauses(clause.OnConflict{DoNothing: true}).Create(b).Error; err != nil {
		return nil, fmt.Errorf("create booking: %w", err)
	}
	return s.Booking(b.IdempotencyKey)
}

// Booking returns the booking made for idempotencyKey.
func (s *Store) Booking(idempotencyKey string) (*Booking, error) {
	var b Booking
	err := s.db.First(&b, "idempotency_key = ?", idempotencyKey).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("booking %s: %w", idempotencyKey, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("booking %s: %w", idempotencyKey, err)
	}
	return &b, nil
}

// CountBookings returns how many bookings exist, for tests and health pages.
func (s *Store) CountBookings() (int64, error) {
	var n int64
	err := s.db.Model(&Booking{}).Count(&n).Error
	return n, err
}
