package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreTimes leaves out the fields the database sets.
var ignoreTimes = cmpopts.IgnoreFields(RemoteAgent{}, "ID", "CreatedAt", "UpdatedAt")

func TestAgentDirectory(t *testing.T) { eachBackend(t, testAgentDirectory) }

func testAgentDirectory(t *testing.T, b backend) {
	s, dsn := openNew(t, b)
	card := json.RawMessage(`{"name":"echo"}`)
	for _, a := range []RemoteAgent{
		{Shared: true, Name: "echo", URL: "http://127.0.0.1:1/agents/echo", Card: card, AuthRef: "echo-key", Healthy: true},
		{Shared: true, Name: "travel", URL: "http://127.0.0.1:1/"},
	} {
		if err := s.AddAgent(&a); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("add errors", func(t *testing.T) {
		tests := []struct {
			name  string
			agent RemoteAgent
			want  error
		}{
			{"duplicate name", RemoteAgent{Shared: true, Name: "echo", URL: "http://elsewhere"}, ErrAlreadyExists},
			{"no name", RemoteAgent{URL: "http://x"}, nil},
			{"no URL", RemoteAgent{Shared: true, Name: "x"}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := s.AddAgent(&tt.agent)
				if err == nil {
					t.Fatal("AddAgent succeeded, want an error")
				}
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("AddAgent error = %v, want %v", err, tt.want)
				}
			})
		}
	})

	t.Run("check", func(t *testing.T) {
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		got, err := s.RecordAgentCheck("echo", AgentCheck{Card: json.RawMessage(`{"name":"echo","version":"2"}`), At: at})
		if err != nil {
			t.Fatal(err)
		}
		want := &RemoteAgent{Shared: true, Name: "echo", URL: "http://127.0.0.1:1/agents/echo", Card: json.RawMessage(`{"name":"echo","version":"2"}`),
			AuthRef: "echo-key", LastSeen: &at, Healthy: true}
		if diff := cmp.Diff(want, got, ignoreTimes, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
			t.Errorf("after a good check (-want +got):\n%s", diff)
		}
		// A failed check keeps the card and LastSeen, and says why.
		got, err = s.RecordAgentCheck("echo", AgentCheck{Err: errors.New("connection refused")})
		if err != nil {
			t.Fatal(err)
		}
		want.Healthy, want.LastError = false, "connection refused"
		if diff := cmp.Diff(want, got, ignoreTimes, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
			t.Errorf("after a failed check (-want +got):\n%s", diff)
		}
		if _, err := s.RecordAgentCheck("nobody", AgentCheck{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecordAgentCheck(unknown) error = %v, want ErrNotFound", err)
		}
	})

	t.Run("remove", func(t *testing.T) {
		if err := s.RemoveAgent("travel"); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveAgent("travel"); !errors.Is(err, ErrNotFound) {
			t.Errorf("RemoveAgent twice error = %v, want ErrNotFound", err)
		}
		if _, err := s.Agent("travel"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Agent(removed) error = %v, want ErrNotFound", err)
		}
	})

	// The directory survives reopening the database.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	agents, err := s.Agents()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"echo"}, names); diff != "" {
		t.Errorf("agents after reopening (-want +got):\n%s", diff)
	}
	if len(agents) == 1 && (agents[0].LastError != "connection refused" || string(agents[0].Card) != `{"name":"echo","version":"2"}`) {
		t.Errorf("echo after reopening = %+v, want its last check kept", agents[0])
	}
}

// Names are compared and sorted byte by byte on every backend, whatever the
// database's collation (the test PostgreSQL's is ICU en-US, which would sort
// "alpha" before "Beta").
func TestAgentNamesAreCaseSensitive(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		for _, name := range []string{"beta", "Alpha", "alpha", "_x", "Zed"} {
			if err := s.AddAgent(&RemoteAgent{Shared: true, Name: name, URL: "http://127.0.0.1:1/" + name}); err != nil {
				t.Fatal(err)
			}
		}
		agents, err := s.Agents()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range agents {
			names = append(names, a.Name)
		}
		if diff := cmp.Diff([]string{"Alpha", "Zed", "_x", "alpha", "beta"}, names); diff != "" {
			t.Errorf("Agents() names (-want +got):\n%s", diff)
		}
		if a, err := s.Agent("alpha"); err != nil || a.URL != "http://127.0.0.1:1/alpha" {
			t.Errorf("Agent(alpha) = %+v, %v; want the lower-case one", a, err)
		}
		if _, err := s.Agent("ALPHA"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Agent(ALPHA) error = %v, want ErrNotFound", err)
		}
		if err := s.RemoveAgent("BETA"); !errors.Is(err, ErrNotFound) {
			t.Errorf("RemoveAgent(BETA) error = %v, want ErrNotFound", err)
		}
		if _, err := s.RecordAgentCheck("ZED", AgentCheck{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecordAgentCheck(ZED) error = %v, want ErrNotFound", err)
		}
	})
}

// Processes adding the same name at once: exactly one wins, the others get
// ErrAlreadyExists, and adding different names never fails.
func TestAddAgentConcurrently(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		_, dsn := openNew(t, b)
		const n = 8
		stores := make([]*Store, 4) // as if from four processes
		for i := range stores {
			s, err := Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			stores[i] = s
		}
		dupErrs := make([]error, n)
		ownErrs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				s := stores[i%len(stores)]
				dupErrs[i] = s.AddAgent(&RemoteAgent{Shared: true, Name: "dup", URL: fmt.Sprintf("http://127.0.0.1:1/%d", i)})
				ownErrs[i] = s.AddAgent(&RemoteAgent{Shared: true, Name: fmt.Sprintf("agent-%d", i), URL: "http://127.0.0.1:1/"})
			})
		}
		wg.Wait()
		won := 0
		for i := range n {
			switch err := dupErrs[i]; {
			case err == nil:
				won++
			case !errors.Is(err, ErrAlreadyExists):
				t.Errorf("AddAgent(dup) #%d error = %v, want ErrAlreadyExists", i, err)
			}
			if ownErrs[i] != nil {
				t.Errorf("AddAgent(agent-%d) = %v", i, ownErrs[i])
			}
		}
		if won != 1 {
			t.Errorf("%d AddAgent(dup) succeeded, want 1", won)
		}
		agents, err := stores[0].Agents()
		if err != nil || len(agents) != n+1 {
			t.Errorf("Agents() = %d agents, %v; want %d", len(agents), err, n+1)
		}
	})
}

// Times keep microseconds, on SQLite as PostgreSQL stores them.
func TestAgentTimesKeepMicroseconds(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		seen := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
		if err := s.AddAgent(&RemoteAgent{Shared: true, Name: "echo", URL: "http://127.0.0.1:1/", LastSeen: &seen}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Agent("echo")
		if err != nil {
			t.Fatal(err)
		}
		if want := seen.Truncate(time.Microsecond); got.LastSeen == nil || !got.LastSeen.Equal(want) {
			t.Errorf("LastSeen after AddAgent = %v, want %v", got.LastSeen, want)
		}
		for _, ts := range []time.Time{got.CreatedAt, got.UpdatedAt} {
			if ts.IsZero() || ts.Nanosecond()%1000 != 0 {
				t.Errorf("CreatedAt/UpdatedAt = %v, want set, whole microseconds", ts)
			}
		}
		checked := seen.Add(time.Hour + 987654321)
		got, err = s.RecordAgentCheck("echo", AgentCheck{At: checked})
		if err != nil {
			t.Fatal(err)
		}
		want := checked.Truncate(time.Microsecond)
		if got.LastSeen == nil || !got.LastSeen.Equal(want) || !got.UpdatedAt.Equal(want) {
			t.Errorf("after a check at %v: LastSeen = %v, UpdatedAt = %v; want both %v", checked, got.LastSeen, got.UpdatedAt, want)
		}
	})
}

// Cards are kept byte for byte (not compacted nor re-escaped); no card is nil.
func TestAgentCardIsKeptAsIs(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, _ := openNew(t, b)
		card := json.RawMessage("{\"name\": \"échø\",\n  \"skills\": [{\"id\": \"<a&b>\"}]}")
		if err := s.AddAgent(&RemoteAgent{Shared: true, Name: "echo", URL: "http://127.0.0.1:1/", Card: card}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddAgent(&RemoteAgent{Shared: true, Name: "nocard", URL: "http://127.0.0.1:1/"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Agent("echo")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Card) != string(card) {
			t.Errorf("card = %q, want %q", got.Card, card)
		}
		got, err = s.Agent("nocard")
		if err != nil {
			t.Fatal(err)
		}
		if got.Card != nil {
			t.Errorf("card of an agent without one = %q, want nil", got.Card)
		}
		fresh := json.RawMessage(`{"name":"nocard", "version": "2"}`)
		if got, err = s.RecordAgentCheck("nocard", AgentCheck{Card: fresh}); err != nil {
			t.Fatal(err)
		}
		if string(got.Card) != string(fresh) {
			t.Errorf("card after a check = %q, want %q", got.Card, fresh)
		}
		agents, err := s.Agents()
		if err != nil || len(agents) != 2 || string(agents[0].Card) != string(card) || string(agents[1].Card) != string(fresh) {
			t.Errorf("Agents() = %+v, %v; want both cards as stored", agents, err)
		}
	})
}
