package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/remote"
)

func TestParsePeers(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    []peer
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"two", []string{"beta=http://127.0.0.1:4201/agents/router", " gamma = https://gamma.example/agents/travel "},
			[]peer{{"beta", "http://127.0.0.1:4201/agents/router"}, {"gamma", "https://gamma.example/agents/travel"}}, ""},
		{"URL with a query", []string{"x=http://h/a?k=v"}, []peer{{"x", "http://h/a?k=v"}}, ""},
		{"no equals", []string{"http://127.0.0.1:4201"}, nil, "want NAME=URL"},
		{"empty name", []string{"=http://127.0.0.1:4201"}, nil, "empty name"},
		{"space in name", []string{"my peer=http://127.0.0.1:4201"}, nil, `name "my peer" contains a space`},
		{"at in name", []string{"@beta=http://127.0.0.1:4201"}, nil, `contains '@'`},
		{"empty URL", []string{"beta="}, nil, "empty URL"},
		{"relative URL", []string{"beta=/agents/router"}, nil, "absolute http:// or https:// URL"},
		{"no scheme", []string{"beta=127.0.0.1:4201"}, nil, "absolute http:// or https:// URL"},
		{"ftp", []string{"beta=ftp://h/x"}, nil, "absolute http:// or https:// URL"},
		{"no host", []string{"beta=http:///x"}, nil, "no host"},
		{"bad URL", []string{"beta=http://h:port"}, nil, "invalid port"},
		{"duplicate", []string{"beta=http://a", "beta=http://b"}, nil, "already given to http://a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePeers(tt.values)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parsePeers(%q) error = %v, want one containing %q", tt.values, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parsePeers(%q): %v", tt.values, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parsePeers(%q) (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}

func TestPeersFlagAndEnv(t *testing.T) {
	t.Setenv("A2AFLOW_PEERS", "alpha=http://127.0.0.1:4200/agents/router, beta=http://127.0.0.1:4201/agents/router,")
	var cfg config
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	cfg.bindPeers(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"alpha=http://127.0.0.1:4200/agents/router", "beta=http://127.0.0.1:4201/agents/router"}
	if diff := cmp.Diff(want, cfg.Peers); diff != "" {
		t.Errorf("peers from A2AFLOW_PEERS (-want +got):\n%s", diff)
	}

	// Flags replace the environment, and repeat.
	cfg = config{}
	fs = pflag.NewFlagSet("serve", pflag.ContinueOnError)
	cfg.bindPeers(fs)
	if err := fs.Parse([]string{"--peer", "x=http://x", "--peer", "y=http://y"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x=http://x", "y=http://y"}, cfg.Peers); diff != "" {
		t.Errorf("peers from flags (-want +got):\n%s", diff)
	}
}

// TestRegisterAndCheckPeers registers peers into a fresh directory, replaces
// one whose URL changed (keeping its AuthRef), and checks that the background
// fetch retries a peer that starts late and records its card.
func TestRegisterAndCheckPeers(t *testing.T) {
	oldFirst, oldMax := peerRetryFirst, peerRetryMax
	peerRetryFirst, peerRetryMax = 20*time.Millisecond, 50*time.Millisecond
	t.Cleanup(func() { peerRetryFirst, peerRetryMax = oldFirst, oldMax })

	// A peer that answers 503 to its first three card fetches, as if starting.
	var fetches atomic.Int32
	srv := cardServer(t, "late", func(w http.ResponseWriter, _ *http.Request) bool {
		if fetches.Add(1) <= 3 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return false
		}
		return true
	})

	cfg := &config{DataDir: t.TempDir()}
	dbPath := filepath.Join(cfg.DataDir, "a2aflow.db")
	pre, err := models.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []models.RemoteAgent{
		{Shared: true, Name: "moved", URL: "http://old.example", AuthRef: "moved-key"},
		{Shared: true, Name: "same", URL: "http://same.example", AuthRef: "same-key"},
	} {
		if err := pre.AddAgent(&a); err != nil {
			t.Fatal(err)
		}
	}
	_ = pre.Close()

	peers, err := parsePeers([]string{"late=" + srv.URL, "moved=http://new.example", "same=http://same.example", "down=http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := registerPeers(cfg, peers, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	got := map[string]models.RemoteAgent{}
	list, err := store.Agents()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		got[a.Name] = a
	}
	if len(got) != 4 || got["late"].URL != srv.URL || got["down"].URL != "http://127.0.0.1:1" {
		t.Fatalf("directory after registering = %+v, want late, moved, same and down", list)
	}
	if m := got["moved"]; m.URL != "http://new.example" || m.AuthRef != "moved-key" {
		t.Errorf("moved = %+v, want the new URL with its AuthRef kept", m)
	}
	if s := got["same"]; s.URL != "http://same.example" || s.AuthRef != "same-key" {
		t.Errorf("same = %+v, want it unchanged", s)
	}
	// Registering again is a no-op.
	if s2, err := registerPeers(cfg, peers, logger); err != nil {
		t.Fatalf("registering again: %v", err)
	} else {
		_ = s2.Close()
	}

	ctx, cancel := context.WithCancel(context.Background())
	wait := checkPeers(ctx, store, nil, peers[:1], logger)
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("the check of a peer that comes up did not end")
	}
	cancel()
	late, err := store.Agent("late")
	if err != nil {
		t.Fatal(err)
	}
	if !late.Healthy || late.LastSeen == nil || late.LastError != "" || !strings.Contains(string(late.Card), `"name":"late"`) {
		t.Errorf("late after its check = %+v (card %s), want healthy with its card", late, late.Card)
	}
	if n := fetches.Load(); n < 4 {
		t.Errorf("card fetched %d times, want 3 failures then a success", n)
	}

	// An unreachable peer is recorded as such; cancelling ends its retries.
	ctx, cancel = context.WithCancel(context.Background())
	wait = checkPeers(ctx, store, nil, []peer{{"down", "http://127.0.0.1:1"}}, logger)
	deadline := time.Now().Add(10 * time.Second)
	for {
		down, err := store.Agent("down")
		if err != nil {
			t.Fatal(err)
		}
		if down.LastError != "" {
			if down.Healthy {
				t.Errorf("down = %+v, want unhealthy", down)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no failed check recorded for an unreachable peer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wait()
}

// TestCheckPeerWithCredentials checks a peer behind a bearer token with the
// credentials its directory entry names, and records a peer whose
// credentials are missing, or registered for another host, as a
// configuration error, without retrying and without sending them. The peer
// is on loopback: the operator's peers are reached whatever the outbound
// policy.
func TestCheckPeerWithCredentials(t *testing.T) {
	var foreignToken atomic.Int32
	srv := cardServer(t, "guarded", func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") == "Bearer partner-token" {
			foreignToken.Add(1)
		}
		if r.Header.Get("Authorization") != "Bearer peer-token" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return false
		}
		return true
	})

	store, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, a := range []models.RemoteAgent{
		{Shared: true, Name: "guarded", URL: srv.URL, AuthRef: "peer"},
		{Shared: true, Name: "nokeys", URL: srv.URL, AuthRef: "missing"},
		{Shared: true, Name: "borrowed", URL: srv.URL, AuthRef: "partner"},
	} {
		if err := store.AddAgent(&a); err != nil {
			t.Fatal(err)
		}
	}
	keyring := remote.NewKeyring(map[string]*remote.Credentials{
		"peer":    {Bearer: "peer-token"},
		"partner": {Bearer: "partner-token", Hosts: []string{"partner.example"}},
	})
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	checkPeers(ctx, store, keyring, []peer{{"guarded", srv.URL}, {"nokeys", srv.URL}, {"borrowed", srv.URL}}, logger)()

	guarded, err := store.Agent("guarded")
	if err != nil {
		t.Fatal(err)
	}
	if !guarded.Healthy || guarded.LastError != "" || !strings.Contains(string(guarded.Card), `"name":"guarded"`) {
		t.Errorf("guarded = %+v, want healthy with its card (checked with its token)", guarded)
	}
	nokeys, err := store.Agent("nokeys")
	if err != nil {
		t.Fatal(err)
	}
	if nokeys.Healthy || !strings.Contains(nokeys.LastError, "no credentials named missing") {
		t.Errorf("nokeys = %+v, want unhealthy naming the unknown credentials", nokeys)
	}
	borrowed, err := store.Agent("borrowed")
	if err != nil {
		t.Fatal(err)
	}
	if borrowed.Healthy || !strings.Contains(borrowed.LastError, `credentials "partner" are registered for partner.example, not for 127.0.0.1:`) {
		t.Errorf("borrowed = %+v, want unhealthy: its credentials are another host's", borrowed)
	}
	if n := foreignToken.Load(); n != 0 {
		t.Errorf("the peer got partner.example's token %d times, want never", n)
	}
	if ctx.Err() != nil {
		t.Error("the checks retried a configuration error until the deadline")
	}
}

// cardServer serves the card of an agent named name, when admit (which may
// answer the request itself) returns true.
func cardServer(t *testing.T, name string, admit func(http.ResponseWriter, *http.Request) bool) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !admit(w, r) {
			return
		}
		card := &a2a.AgentCard{
			Name: name, Version: "1", Description: "a peer",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL, a2a.TransportProtocolJSONRPC)},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	}))
	t.Cleanup(srv.Close)
	return srv
}
