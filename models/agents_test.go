package models

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a2aflow.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

// ignoreTimes leaves out the fields the database sets.
var ignoreTimes = cmpopts.IgnoreFields(RemoteAgent{}, "ID", "CreatedAt", "UpdatedAt")

func TestAgentDirectory(t *testing.T) {
	s, path := openTemp(t)
	card := json.RawMessage(`{"name":"echo"}`)
	for _, a := range []RemoteAgent{
		{Name: "echo", URL: "http://127.0.0.1:1/agents/echo", Card: card, AuthRef: "echo-key", Healthy: true},
		{Name: "travel", URL: "http://127.0.0.1:1/"},
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
			{"duplicate name", RemoteAgent{Name: "echo", URL: "http://elsewhere"}, ErrAlreadyExists},
			{"no name", RemoteAgent{URL: "http://x"}, nil},
			{"no URL", RemoteAgent{Name: "x"}, nil},
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
		want := &RemoteAgent{Name: "echo", URL: "http://127.0.0.1:1/agents/echo", Card: json.RawMessage(`{"name":"echo","version":"2"}`),
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

	// The directory survives reopening the file.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
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
