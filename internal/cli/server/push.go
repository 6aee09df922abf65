package server

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/webhook"
)

// pushKeyFile is where `serve` keeps its generated push key, under the data dir.
const pushKeyFile = "push.key"

// pushConfig holds the push notification flags of serve, api and worker.
type pushConfig struct {
	AllowHosts       []string
	Key              string
	PreviousKeys     []string
	Insecure         bool
	MaxRetryInterval time.Duration
	GiveUpAfter      time.Duration

	// policy and sealer are built by build from the flags above; outbound
	// delivers with the policy.
	policy   *webhook.Policy
	sealer   *webhook.Sealer
	keys     [][]byte // the key, then the previous ones; nil without a key
	outbound *outbound.Client
}

// bind adds the flags; delivery adds the worker's retry flags.
func (c *pushConfig) bind(fs *pflag.FlagSet, delivery bool) {
	b := cmdutil.Bind(fs)
	b.StringSlice(&c.AllowHosts, "push-allow-hosts", "A2AFLOW_PUSH_ALLOW_HOSTS", nil,
		"non-public addresses push webhooks may reach besides public ones: loopback, private, link-local, CIDRs or IPs, or all; comma-separated")
	b.String(&c.Key, "push-key", "A2AFLOW_PUSH_KEY", "",
		"base64 32-byte key sealing the secrets a2aflow keeps (webhook tokens and credentials, credentials given to auth-required tasks); api and worker need the same and refuse to start without one; serve generates <data-dir>/push.key when unset; prefer the environment variable")
	b.StringSlice(&c.PreviousKeys, "push-previous-keys", "A2AFLOW_PUSH_PREVIOUS_KEYS", nil,
		"earlier push keys, base64, comma-separated: they still open what they sealed while --push-key seals everything new (key rotation)")
	b.Bool(&c.Insecure, "insecure-store-push-secrets", "A2AFLOW_INSECURE_STORE_PUSH_SECRETS", false,
		"let api and worker start without a push key: webhook tokens and credentials then go into Temporal history as given, and auth-required credentials are refused")
	if delivery {
		b.Duration(&c.MaxRetryInterval, "push-max-retry-interval", "A2AFLOW_PUSH_MAX_RETRY_INTERVAL", 5*time.Minute,
			"longest wait between two attempts to deliver a push notification")
		b.Duration(&c.GiveUpAfter, "push-give-up-after", "A2AFLOW_PUSH_GIVE_UP_AFTER", 24*time.Hour,
			"how long one push notification is retried before the webhook gets the next one")
	}
}

// build checks the flags and prepares the address policy and the sealer.
// With keyDir set (serve), a missing key is generated once into keyDir and
// reused on every restart; without it (api, worker), a missing key stops
// the start unless --insecure-store-push-secrets says to store secrets as
// given.
func (c *pushConfig) build(keyDir string, logger *slog.Logger) error {
	policy, err := webhook.ParsePolicy(c.AllowHosts)
	if err != nil {
		return fmt.Errorf("--push-allow-hosts: %w", err)
	}
	c.policy = policy
	c.outbound = outbound.New(outbound.Options{Policy: policy})
	key, err := c.key(keyDir)
	if err != nil {
		return err
	}
	switch {
	case key == nil && !c.Insecure:
		return errors.New("no push key: set A2AFLOW_PUSH_KEY (the same base64 32-byte key on api and worker; `openssl rand -base64 32`), " +
			"or --insecure-store-push-secrets to keep webhook tokens in Temporal history as given")
	case key == nil:
		logger.Warn("no push key (--insecure-store-push-secrets): webhook tokens and credentials are stored in Temporal history as given")
	default:
		keys := [][]byte{key}
		for i, old := range c.PreviousKeys {
			k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(old))
			if err != nil {
				return fmt.Errorf("--push-previous-keys: key %d is not base64: %w", i+1, err)
			}
			keys = append(keys, k)
		}
		if c.sealer, err = webhook.NewSealer(keys...); err != nil {
			return fmt.Errorf("--push-key: %w", err)
		}
		c.keys = keys
	}
	logger.Debug("push notifications", "webhooks may reach", policy.String(), "sealed", c.sealer != nil)
	return nil
}

func (c *pushConfig) key(keyDir string) ([]byte, error) {
	if c.Key != "" {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(c.Key))
		if err != nil {
			return nil, fmt.Errorf("--push-key is not base64: %w", err)
		}
		return key, nil
	}
	if keyDir == "" {
		return nil, nil
	}
	path := filepath.Join(keyDir, pushKeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(keyDir, 0o755); err != nil {
			return nil, fmt.Errorf("push key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("push key: %w", err)
		}
		key := webhook.NewKey()
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("push key %s: %w", path, werr)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("push key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("push key %s is not base64: %w", path, err)
	}
	return key, nil
}

// apiOptions is what the API needs: the policy checking new configs and the
// sealer of their secrets.
func (c *pushConfig) apiOptions() api.PushOptions {
	return api.PushOptions{Policy: c.policy, Sealer: c.sealer}
}

// workflowOptions is how the task workflow retries deliveries.
func (c *pushConfig) workflowOptions() engine.PushOptions {
	return engine.PushOptions{MaxRetryInterval: c.MaxRetryInterval, GiveUpAfter: c.GiveUpAfter}
}

// activity is the delivery activity, its requests through the guarded
// outbound client with the push allow-list.
func (c *pushConfig) activity() *activities.Webhooks {
	return &activities.Webhooks{Policy: c.policy, Outbound: c.outbound, Sealer: c.sealer}
}
