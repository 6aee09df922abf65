package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// RemoteAgent is a known remote A2A agent in the agent directory.
type RemoteAgent struct {
	ID uint `gorm:"primaryKey" json:"-"`
	// Name is how users and agents refer to it; unique in the directory.
	Name string `gorm:"uniqueIndex;not null" json:"name"`
	// URL is its base URL, where its agent card is.
	URL string `gorm:"not null" json:"url"`
	// Card is the agent card as last fetched, JSON.
	Card json.RawMessage `gorm:"type:text;serializer:rawjson" json:"card,omitempty"`
	// AuthRef names the credential to call it with (resolved from worker
	// configuration); never the credential itself.
	AuthRef string `json:"authRef,omitempty"`
	// LastSeen is when its card was last fetched successfully.
	LastSeen *time.Time `json:"lastSeen,omitempty"`
	// Healthy reports whether the last check reached it.
	Healthy bool `json:"healthy"`
	// LastError is why the last check failed; empty when it succeeded.
	LastError string    `json:"lastError,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AgentCheck is the outcome of fetching a remote agent's card again.
type AgentCheck struct {
	// Card is the fresh card; nil keeps the stored one (a failed check).
	Card json.RawMessage
	// Err is why the check failed; nil marks the agent healthy.
	Err error
	// At is when the check ran; zero means now.
	At time.Time
}

// ErrAlreadyExists is returned when a record with the same unique name exists.
var ErrAlreadyExists = errors.New("already exists")

// AddAgent adds a to the directory; ErrAlreadyExists if its name is taken.
// The unique index on the name decides, so that of two processes adding the
// same name at once exactly one succeeds, on SQLite as on PostgreSQL.
func (s *Store) AddAgent(a *RemoteAgent) error {
	if a.Name == "" || a.URL == "" {
		return errors.New("add agent: name and URL are required")
	}
	err := s.db.Create(a).Error
	if s.isDuplicate(err) {
		err = ErrAlreadyExists
	}
	if err != nil {
		return fmt.Errorf("add agent %s: %w", a.Name, err)
	}
	return nil
}

// BeforeCreate keeps microseconds of the given times, as PostgreSQL does.
func (a *RemoteAgent) BeforeCreate(*gorm.DB) error {
	a.CreatedAt = a.CreatedAt.Truncate(time.Microsecond)
	a.UpdatedAt = a.UpdatedAt.Truncate(time.Microsecond)
	if a.LastSeen != nil {
		t := a.LastSeen.Truncate(time.Microsecond)
		a.LastSeen = &t
	}
	return nil
}

// Agents returns every agent of the directory, by name (byte order, so
// "Zed" comes before "alpha" whatever the database's collation).
func (s *Store) Agents() ([]RemoteAgent, error) {
	var out []RemoteAgent
	if err := s.db.Order(s.nameOrder).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return out, nil
}

// Agent returns the agent called name; ErrNotFound if there is none.
func (s *Store) Agent(name string) (*RemoteAgent, error) {
	var a RemoteAgent
	err := s.db.First(&a, "name = ?", name).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("agent %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", name, err)
	}
	return &a, nil
}

// RemoveAgent removes the agent called name; ErrNotFound if there is none.
func (s *Store) RemoveAgent(name string) error {
	res := s.db.Where("name = ?", name).Delete(&RemoteAgent{})
	if res.Error != nil {
		return fmt.Errorf("remove agent %s: %w", name, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("remove agent %s: %w", name, ErrNotFound)
	}
	return nil
}

// RecordAgentCheck stores the outcome of a health check of the agent called
// name and returns the updated record. A success refreshes the card and
// LastSeen; a failure keeps them and records the error.
func (s *Store) RecordAgentCheck(name string, check AgentCheck) (*RemoteAgent, error) {
	at := check.At
	if at.IsZero() {
		at = time.Now()
	}
	at = at.Truncate(time.Microsecond) // as PostgreSQL keeps it
	updates := map[string]any{"healthy": check.Err == nil, "last_error": "", "updated_at": at}
	if check.Err != nil {
		updates["last_error"] = check.Err.Error()
	} else {
		updates["last_seen"] = at
		if check.Card != nil {
			updates["card"] = string(check.Card) // text, as the rawjson serializer writes it
		}
	}
	res := s.db.Model(&RemoteAgent{}).Where("name = ?", name).Updates(updates)
	if res.Error != nil {
		return nil, fmt.Errorf("record check of agent %s: %w", name, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("record check of agent %s: %w", name, ErrNotFound)
	}
	return s.Agent(name)
}
