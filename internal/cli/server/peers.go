package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
)

// peer is one --peer NAME=URL: a remote A2A agent serve puts into its
// directory at start-up, so that its agents (the router) can call it by name.
type peer struct {
	Name string
	URL  string
}

// parsePeers parses and validates --peer values: NAME=URL where NAME is
// non-empty without spaces or '@' (it is written "@NAME" in messages) and URL
// is an absolute http or https URL. A name may appear once.
func parsePeers(values []string) ([]peer, error) {
	var out []peer
	seen := map[string]string{}
	for _, v := range values {
		name, rawURL, ok := strings.Cut(strings.TrimSpace(v), "=")
		if !ok {
			return nil, fmt.Errorf("--peer %q: want NAME=URL, e.g. beta=http://127.0.0.1:4201/agents/router", v)
		}
		name, rawURL = strings.TrimSpace(name), strings.TrimSpace(rawURL)
		if err := validatePeerName(name); err != nil {
			return nil, fmt.Errorf("--peer %q: %w", v, err)
		}
		if err := validatePeerURL(rawURL); err != nil {
			return nil, fmt.Errorf("--peer %q: %w", v, err)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("--peer %q: the name %s is already given to %s", v, name, prev)
		}
		seen[name] = rawURL
		out = append(out, peer{Name: name, URL: rawURL})
	}
	return out, nil
}

func validatePeerName(name string) error {
	if name == "" {
		return errors.New("empty name: want NAME=URL")
	}
	if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return fmt.Errorf("name %q contains a space", name)
	}
	if strings.Contains(name, "@") {
		return fmt.Errorf("name %q contains '@' (messages address it as @NAME)", name)
	}
	return nil
}

func validatePeerURL(raw string) error {
	if raw == "" {
		return errors.New("empty URL: want NAME=URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("URL %q: want an absolute http:// or https:// URL (%w)", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q: want an absolute http:// or https:// URL", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("URL %q: no host", raw)
	}
	return nil
}

// Retry schedule of the peers' card fetch: peers often start at the same
// time as this process, so a refused connection is retried with backoff for
// a few minutes.
var (
	peerCheckTimeout  = 10 * time.Second
	peerRetryFirst    = time.Second
	peerRetryMax      = 15 * time.Second
	peerRetryDeadline = 3 * time.Minute
)

// registerPeers puts the peers into the agent directory of cfg's database.
// It returns the opened store for the background checks; the caller closes it.
func registerPeers(cfg *config, peers []peer, logger *slog.Logger) (*models.Store, error) {
	dsn := cfg.DatabaseDSN
	if dsn == "" {
		dsn = filepath.Join(cfg.DataDir, "a2aflow.db")
	}
	store, err := models.Open(dsn)
	if err != nil {
		return nil, err
	}
	for _, p := range peers {
		if err := upsertPeer(store, p, logger); err != nil {
			_ = store.Close()
			return nil, fmt.Errorf("--peer %s=%s: %w", p.Name, p.URL, err)
		}
	}
	return store, nil
}

// upsertPeer adds p to the directory; an entry of the same name with another
// URL is replaced, keeping its AuthRef; one with the same URL is left as is.
func upsertPeer(store *models.Store, p peer, logger *slog.Logger) error {
	existing, err := store.Agent(p.Name)
	switch {
	case errors.Is(err, models.ErrNotFound):
		err = store.AddAgent(&models.RemoteAgent{Shared: true, Name: p.Name, URL: p.URL})
		if errors.Is(err, models.ErrAlreadyExists) {
			// Another process (agents add) won the race: go again.
			return upsertPeer(store, p, logger)
		}
		if err == nil {
			logger.Info("peer added to the directory", "peer", p.Name, "url", p.URL)
		}
		return err
	case err != nil:
		return err
	case existing.URL == p.URL:
		return nil
	}
	if err := store.RemoveAgent(p.Name); err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	if err := store.AddAgent(&models.RemoteAgent{Shared: true, Name: p.Name, URL: p.URL, AuthRef: existing.AuthRef}); err != nil {
		return err
	}
	logger.Info("peer replaced in the directory", "peer", p.Name, "url", p.URL, "previous_url", existing.URL)
	return nil
}

// fetchPeerCard fetches and validates the card at u, as `agents add` does:
// it must parse and offer an interface this process can speak.
func fetchPeerCard(ctx context.Context, clients remote.Clients, u string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, peerCheckTimeout)
	defer cancel()
	card, err := remote.ResolveCard(ctx, clients.Card, u)
	if err != nil {
		return nil, err
	}
	c, err := remote.NewClient(ctx, clients.Calls, card)
	if err != nil {
		return nil, err
	}
	_ = c.Destroy()
	raw, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("encode card of %s: %w", u, err)
	}
	return raw, nil
}

// checkPeers fetches every peer's card in the background and records each
// attempt's outcome in the directory, retrying until it succeeds, the retry
// deadline passes or ctx ends. The returned function waits for the checks to
// end (cancel ctx first to cut them short).
//
// A peer whose directory entry has an auth reference (set with `a2aflow
// agents add --auth-ref`, kept by --peer) is checked with those credentials
// from keyring, as its delegations are. Its card is fetched through the
// guarded outbound client, the peer's host trusted (the operator named it):
// a peer on loopback or a private network is reached, and only that host
// (no redirect elsewhere; credentials only to the hosts they are
// registered for); the card is bounded as every card is.
func checkPeers(ctx context.Context, store *models.Store, keyring *remote.Keyring, peers []peer, logger *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkPeer(ctx, store, keyring, p, logger)
		}()
	}
	return wg.Wait
}

// peerOutbound makes the peer checks' requests. Only the peers' own hosts
// are reached, trusted, so its policy is the default: public addresses only.
var peerOutbound = sync.OnceValue(func() *outbound.Client { return outbound.New(outbound.Options{}) })

// peerClients are the HTTP clients for p's card: its host trusted, with the
// credentials its directory entry refers to, if any.
func peerClients(store *models.Store, keyring *remote.Keyring, p peer) (remote.Clients, error) {
	entry, err := store.Agent(p.Name)
	if err != nil {
		return remote.Clients{}, err
	}
	if entry.AuthRef != "" && keyring == nil {
		return remote.Clients{}, fmt.Errorf("its auth reference %q needs an outbound credentials file (--outbound-credentials)", entry.AuthRef)
	}
	e, err := keyring.Endpoint(entry.URL, true, entry.AuthRef)
	if err != nil {
		return remote.Clients{}, err
	}
	return e.Clients(peerOutbound())
}

func checkPeer(ctx context.Context, store *models.Store, keyring *remote.Keyring, p peer, logger *slog.Logger) {
	clients, err := peerClients(store, keyring, p)
	if err != nil {
		// Configuration, not reachability: say so once, do not retry.
		if _, rerr := store.RecordAgentCheck(p.Name, models.AgentCheck{Err: err}); rerr != nil {
			logger.Warn("peer check not recorded", "peer", p.Name, "error", rerr)
		}
		logger.Warn("peer not checked", "peer", p.Name, "url", p.URL, "error", err)
		return
	}
	deadline := time.Now().Add(peerRetryDeadline)
	delay := peerRetryFirst
	for attempt := 1; ; attempt++ {
		raw, err := fetchPeerCard(ctx, clients, p.URL)
		if ctx.Err() != nil {
			return // shutting down: do not record the cancellation as the peer's fault
		}
		if _, rerr := store.RecordAgentCheck(p.Name, models.AgentCheck{Card: raw, Err: err}); rerr != nil {
			// Removed meanwhile (agents remove), or the database is gone.
			logger.Warn("peer check not recorded", "peer", p.Name, "error", rerr)
			return
		}
		if err == nil {
			logger.Info("peer is reachable", "peer", p.Name, "url", p.URL, "attempts", attempt)
			return
		}
		if time.Now().Add(delay).After(deadline) {
			logger.Warn("peer unreachable, giving up; `a2aflow agents refresh` checks it again",
				"peer", p.Name, "url", p.URL, "attempts", attempt, "error", err)
			return
		}
		logger.Debug("peer not reachable yet, retrying", "peer", p.Name, "url", p.URL, "in", delay, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, peerRetryMax)
	}
}
