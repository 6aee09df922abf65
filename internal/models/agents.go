package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// RemoteAgent is a known remote A2A agent in the agent directory.
//
// The directory has tenants. An entry the operator added (a2aflow agents
// add, serve --peer) is Shared: every task sees it, and its host is trusted
// by the outbound policy (the operator vouched for it). An entry a task
// added (the remember_agent tool) belongs to the task's owner, the
// principal that created the task ("" without authentication): only that
// owner's tasks see it, and calls to it obey the outbound policy. The zero
// value is such an entry of the owner "".
type RemoteAgent struct {
	ID uint `gorm:"primaryKey" json:"-"`
	// Shared marks an entry the operator added: visible to everyone, its
	// host trusted. Part of the unique key (Shared, Owner, Name).
	Shared bool `gorm:"not null;default:false;uniqueIndex:idx_remote_agents_scope_name,priority:1" json:"shared"`
	// Owner is the principal whose task added the entry ("" without
	// authentication); empty for shared entries.
	Owner string `gorm:"not null;default:'';uniqueIndex:idx_remote_agents_scope_name,priority:2" json:"owner,omitempty"`
	// Name is how users and agents refer to it: unique among the shared
	// entries and among each owner's. A task sees a shared entry before its
	// owner's entry of the same name.
	Name string `gorm:"not null;uniqueIndex:idx_remote_agents_scope_name,priority:3" json:"name"`
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
	// CardVerified reports whether the card's signature verified (A2A 1.0
	// §8.4, against the key set its jku names on the card's own origin)
	// when it was last fetched; false for an unsigned card.
	CardVerified bool `gorm:"not null;default:false" json:"cardVerified"`
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
	// Verified says whether the fresh card's signature verified; recorded
	// with a successful check only.
	Verified bool
}

// ErrAlreadyExists is returned when a record with the same unique name exists.
var ErrAlreadyExists = errors.New("already exists")

// Scope is one part of the directory: the shared entries, or one owner's.
type Scope struct {
	// Shared selects the operator's entries; Owner is then empty.
	Shared bool
	// Owner selects the entries the tasks of this principal added.
	Owner string
}

// SharedScope is the entries the operator added.
var SharedScope = Scope{Shared: true}

// OwnedBy is the scope of the entries the tasks of owner added.
func OwnedBy(owner string) Scope { return Scope{Owner: owner} }

// String names the scope for messages: "shared" or "owner alice".
func (sc Scope) String() string {
	if sc.Shared {
		return "shared"
	}
	if sc.Owner == "" {
		return "anonymous owner"
	}
	return "owner " + sc.Owner
}

// scopeOf is the scope of an entry.
func scopeOf(a *RemoteAgent) Scope {
	if a.Shared {
		return SharedScope
	}
	return OwnedBy(a.Owner)
}

// in restricts q to the entries of sc.
func (sc Scope) in(q *gorm.DB) *gorm.DB {
	if sc.Shared {
		return q.Where("shared = ? AND owner = ?", true, "")
	}
	return q.Where("shared = ? AND owner = ?", false, sc.Owner)
}

// AddAgent adds a to the directory, in its scope (a.Shared, a.Owner);
// ErrAlreadyExists if its name is taken there. The unique index decides, so
// that of two processes adding the same name at once exactly one succeeds,
// on SQLite as on PostgreSQL.
func (s *Store) AddAgent(a *RemoteAgent) error {
	if a.Name == "" || a.URL == "" {
		return errors.New("add agent: name and URL are required")
	}
	if a.Shared && a.Owner != "" {
		return fmt.Errorf("add agent %s: a shared entry has no owner", a.Name)
	}
	err := s.db.Create(a).Error
	if s.isDuplicate(err) {
		err = ErrAlreadyExists
	}
	if err != nil {
		return fmt.Errorf("add agent %s (%s): %w", a.Name, scopeOf(a), err)
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

// Agents returns every entry of the directory, every scope (the operator's
// view), by name (byte order, so "Zed" comes before "alpha" whatever the
// database's collation), a shared entry before owners' entries of its name.
func (s *Store) Agents() ([]RemoteAgent, error) {
	var out []RemoteAgent
	if err := s.db.Order(s.nameOrder).Order("shared DESC").Order("owner").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return out, nil
}

// AgentsVisibleTo returns the entries a task of owner sees: the shared ones
// and owner's own, by name; an entry of owner named as a shared one is
// hidden by it.
func (s *Store) AgentsVisibleTo(owner string) ([]RemoteAgent, error) {
	var all []RemoteAgent
	err := s.db.Where("(shared = ? AND owner = ?) OR (shared = ? AND owner = ?)", true, "", false, owner).
		Order(s.nameOrder).Order("shared DESC").Find(&all).Error
	if err != nil {
		return nil, fmt.Errorf("list agents of %s: %w", OwnedBy(owner), err)
	}
	out := all[:0]
	for i, a := range all {
		if i > 0 && all[i-1].Name == a.Name {
			continue // the shared entry came first
		}
		out = append(out, a)
	}
	return out, nil
}

// Agent returns the shared entry called name; ErrNotFound if there is none.
func (s *Store) Agent(name string) (*RemoteAgent, error) {
	return s.AgentIn(SharedScope, name)
}

// AgentIn returns the entry of scope sc called name; ErrNotFound if there
// is none.
func (s *Store) AgentIn(sc Scope, name string) (*RemoteAgent, error) {
	var a RemoteAgent
	err := sc.in(s.db).First(&a, "name = ?", name).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("agent %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("agent %s (%s): %w", name, sc, err)
	}
	return &a, nil
}

// AgentVisibleTo returns the entry called name that a task of owner sees:
// the shared one, else owner's own; ErrNotFound if there is none (whether
// or not another owner has one).
func (s *Store) AgentVisibleTo(owner, name string) (*RemoteAgent, error) {
	a, err := s.AgentIn(SharedScope, name)
	if errors.Is(err, ErrNotFound) {
		return s.AgentIn(OwnedBy(owner), name)
	}
	return a, err
}

// RemoveAgent removes the shared entry called name; ErrNotFound if there is
// none.
func (s *Store) RemoveAgent(name string) error {
	return s.RemoveAgentIn(SharedScope, name)
}

// RemoveAgentIn removes the entry of scope sc called name; ErrNotFound if
// there is none.
func (s *Store) RemoveAgentIn(sc Scope, name string) error {
	res := sc.in(s.db).Where("name = ?", name).Delete(&RemoteAgent{})
	if res.Error != nil {
		return fmt.Errorf("remove agent %s (%s): %w", name, sc, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("remove agent %s (%s): %w", name, sc, ErrNotFound)
	}
	return nil
}

// RecordAgentCheck records a health check of the shared entry called name;
// see RecordAgentCheckIn.
func (s *Store) RecordAgentCheck(name string, check AgentCheck) (*RemoteAgent, error) {
	return s.RecordAgentCheckIn(SharedScope, name, check)
}

// RecordAgentCheckIn stores the outcome of a health check of the entry of
// scope sc called name and returns the updated record. A success refreshes
// the card and LastSeen; a failure keeps them and records the error.
func (s *Store) RecordAgentCheckIn(sc Scope, name string, check AgentCheck) (*RemoteAgent, error) {
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
		updates["card_verified"] = check.Verified
		if check.Card != nil {
			updates["card"] = string(check.Card) // text, as the rawjson serializer writes it
		}
	}
	res := sc.in(s.db.Model(&RemoteAgent{})).Where("name = ?", name).Updates(updates)
	if res.Error != nil {
		return nil, fmt.Errorf("record check of agent %s (%s): %w", name, sc, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("record check of agent %s (%s): %w", name, sc, ErrNotFound)
	}
	return s.AgentIn(sc, name)
}

// legacyNameIndex is the unique index on the name alone of directories made
// before the directory had tenants (one global namespace).
const legacyNameIndex = "idx_remote_agents_name"

// migrateAgentScopes brings a directory made before tenants to the scoped
// one, once (while its old unique index on the name is there), inside the
// caller's migration transaction or lock. Before, every entry was global:
// one with an auth reference was the operator's (only `a2aflow agents add
// --auth-ref` sets one) and becomes shared; any other may have come from a
// task's remember_agent, so it becomes an entry of the owner "" (every task
// without authentication), obeying the outbound policy, until the operator
// adds it again (serve --peer does at every start).
func migrateAgentScopes(db *gorm.DB) error {
	m := db.Migrator()
	if !m.HasIndex(&RemoteAgent{}, legacyNameIndex) {
		return nil
	}
	err := db.Model(&RemoteAgent{}).Where("auth_ref IS NOT NULL AND auth_ref <> ?", "").
		Updates(map[string]any{"shared": true, "owner": ""}).Error
	if err != nil {
		return fmt.Errorf("mark the operator's agents shared: %w", err)
	}
	if err := m.DropIndex(&RemoteAgent{}, legacyNameIndex); err != nil {
		return fmt.Errorf("drop the global unique index on agent names: %w", err)
	}
	return nil
}
