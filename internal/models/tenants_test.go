package models

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// entryKey names an entry by scope and name, for comparisons.
func entryKey(a RemoteAgent) string {
	return scopeOf(&a).String() + "/" + a.Name + " " + a.URL
}

func keys(list []RemoteAgent) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, entryKey(a))
	}
	return out
}

// TestAgentDirectoryTenants checks the scopes of the directory: shared
// entries are everyone's; an owner's are that owner's only, with names of
// their own (two owners may both have "notes"); a shared entry hides an
// owner's entry of the same name.
func TestAgentDirectoryTenants(t *testing.T) { eachBackend(t, testAgentDirectoryTenants) }

func testAgentDirectoryTenants(t *testing.T, b backend) {
	s, _ := openNew(t, b)
	for _, a := range []RemoteAgent{
		{Shared: true, Name: "beta", URL: "http://127.0.0.1:4201/agents/router"},
		{Owner: "alice", Name: "notes", URL: "https://notes.alice.example"},
		{Owner: "alice", Name: "beta", URL: "https://beta.alice.example"},
		{Owner: "mallory", Name: "notes", URL: "https://notes.mallory.example"},
		{Owner: "", Name: "anon", URL: "https://anon.example"},
	} {
		if err := s.AddAgent(&a); err != nil {
			t.Fatalf("AddAgent(%s): %v", entryKey(a), err)
		}
	}

	t.Run("visible", func(t *testing.T) {
		tests := []struct {
			owner string
			want  []string
		}{
			{"alice", []string{"shared/beta http://127.0.0.1:4201/agents/router", "owner alice/notes https://notes.alice.example"}},
			{"mallory", []string{"shared/beta http://127.0.0.1:4201/agents/router", "owner mallory/notes https://notes.mallory.example"}},
			{"", []string{"anonymous owner/anon https://anon.example", "shared/beta http://127.0.0.1:4201/agents/router"}},
			{"bob", []string{"shared/beta http://127.0.0.1:4201/agents/router"}},
		}
		for _, tt := range tests {
			list, err := s.AgentsVisibleTo(tt.owner)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, keys(list)); diff != "" {
				t.Errorf("AgentsVisibleTo(%q) (-want +got):\n%s", tt.owner, diff)
			}
		}
	})

	t.Run("by name", func(t *testing.T) {
		tests := []struct {
			owner, name string
			want        string // "" for ErrNotFound
		}{
			{"alice", "notes", "owner alice/notes https://notes.alice.example"},
			{"mallory", "notes", "owner mallory/notes https://notes.mallory.example"},
			{"bob", "notes", ""},
			{"", "notes", ""},
			{"alice", "beta", "shared/beta http://127.0.0.1:4201/agents/router"},
			{"mallory", "anon", ""},
		}
		for _, tt := range tests {
			a, err := s.AgentVisibleTo(tt.owner, tt.name)
			if tt.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("AgentVisibleTo(%q, %q) = %v, %v; want ErrNotFound", tt.owner, tt.name, a, err)
				}
				continue
			}
			if err != nil || entryKey(*a) != tt.want {
				t.Errorf("AgentVisibleTo(%q, %q) = %v, %v; want %s", tt.owner, tt.name, a, err, tt.want)
			}
		}
		if _, err := s.Agent("notes"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Agent(notes), the shared scope = %v, want ErrNotFound", err)
		}
	})

	t.Run("names are per scope", func(t *testing.T) {
		err := s.AddAgent(&RemoteAgent{Owner: "alice", Name: "notes", URL: "https://other.example"})
		if !errors.Is(err, ErrAlreadyExists) {
			t.Errorf("alice's second notes = %v, want ErrAlreadyExists", err)
		}
		if err := s.AddAgent(&RemoteAgent{Shared: true, Owner: "alice", Name: "x", URL: "https://x.example"}); err == nil {
			t.Error("a shared entry with an owner was added")
		}
	})

	t.Run("check and remove stay in their scope", func(t *testing.T) {
		a, err := s.RecordAgentCheckIn(OwnedBy("mallory"), "notes", AgentCheck{Err: errors.New("down")})
		if err != nil || a.Owner != "mallory" || a.Healthy {
			t.Fatalf("RecordAgentCheckIn(mallory, notes) = %+v, %v", a, err)
		}
		if a, _ := s.AgentIn(OwnedBy("alice"), "notes"); a == nil || a.LastError != "" {
			t.Errorf("alice's notes after mallory's check = %+v, want untouched", a)
		}
		if _, err := s.RecordAgentCheck("notes", AgentCheck{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecordAgentCheck(notes), the shared scope = %v, want ErrNotFound", err)
		}
		if err := s.RemoveAgentIn(OwnedBy("mallory"), "notes"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentIn(OwnedBy("alice"), "notes"); err != nil {
			t.Errorf("alice's notes after removing mallory's: %v", err)
		}
		if err := s.RemoveAgent("notes"); !errors.Is(err, ErrNotFound) {
			t.Errorf("RemoveAgent(notes), the shared scope = %v, want ErrNotFound", err)
		}
	})
}

// legacyRemoteAgent is the directory entry before tenants: one global
// namespace of names.
type legacyRemoteAgent struct {
	ID        uint   `gorm:"primaryKey"`
	Name      string `gorm:"uniqueIndex;not null"`
	URL       string `gorm:"not null"`
	Card      string `gorm:"type:text"`
	AuthRef   string
	LastSeen  *time.Time
	Healthy   bool
	LastError string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (legacyRemoteAgent) TableName() string { return "remote_agents" }

// TestMigrateGlobalDirectory opens a directory made before tenants: the
// entries with an auth reference (only the operator sets one) become
// shared, the others the anonymous owner's; the global unique index on
// names goes, so two owners may use one name; opening again changes
// nothing.
func TestMigrateGlobalDirectory(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		dsn := b.newDSN(t)
		var dialector gorm.Dialector
		if isPostgresDSN(dsn) {
			dialector = postgres.Open(dsn)
		} else {
			dialector = sqlite.Open("file:" + dsn)
		}
		old, err := gorm.Open(dialector, gormConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := old.AutoMigrate(&legacyRemoteAgent{}); err != nil {
			t.Fatal(err)
		}
		for _, a := range []legacyRemoteAgent{
			{Name: "partner", URL: "https://partner.example", AuthRef: "partner-key", Healthy: true},
			{Name: "canary", URL: "http://127.0.0.1:39999/internal-admin", Healthy: true},
		} {
			if err := old.Create(&a).Error; err != nil {
				t.Fatal(err)
			}
		}
		if !old.Migrator().HasIndex(&legacyRemoteAgent{}, legacyNameIndex) {
			t.Fatalf("the legacy schema has no index %s", legacyNameIndex)
		}
		_ = closeDB(old)

		for range 2 { // the second Open finds nothing to migrate
			s, err := Open(dsn)
			if err != nil {
				t.Fatalf("Open of a directory before tenants: %v", err)
			}
			list, err := s.Agents()
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"anonymous owner/canary http://127.0.0.1:39999/internal-admin", "shared/partner https://partner.example"}
			if diff := cmp.Diff(want, keys(list)); diff != "" {
				t.Errorf("entries after migrating (-want +got):\n%s", diff)
			}
			if s.db.Migrator().HasIndex(&RemoteAgent{}, legacyNameIndex) {
				t.Errorf("the global unique index %s is still there", legacyNameIndex)
			}
			_ = s.Close()
		}
		s, err := Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, owner := range []string{"alice", "mallory"} {
			if err := s.AddAgent(&RemoteAgent{Owner: owner, Name: "partner", URL: "https://" + owner + ".example"}); err != nil {
				t.Errorf("%s's partner after migrating: %v", owner, err)
			}
		}
	})
}
