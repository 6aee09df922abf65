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

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/webhook"
)

// The secrets key seals every secret a2aflow keeps: the tokens and
// credentials of push configs (webhook.Sealer, in history), the credentials
// users give tasks in auth-required (the credential store, in the payload
// store); and it mints the tokens of waitpoints (wire.WaitpointTokens). api
// and worker processes share it; serve generates one into its data dir.

// envSecretsKey holds the secrets key, base64.
const envSecretsKey = "A2AFLOW_SECRETS_KEY"

// Where serve keeps its generated secrets key, under the data dir; a data
// dir of an earlier release holds it under its former name, which wins.
const (
	secretsKeyFile       = "secrets.key"
	formerSecretsKeyFile = "push.key"
)

// secretsConfig holds the secrets key flags of serve, api and worker, and
// what build makes of them.
type secretsConfig struct {
	Key          cmdutil.Secret
	PreviousKeys []string
	Insecure     bool

	// keys are the key, then the previous ones; nil without a key.
	keys [][]byte
	// sealer seals the secrets of push configs; nil without a key.
	sealer *webhook.Sealer
	// credentials is the store of the credentials given to tasks in
	// auth-required; nil without a key: none are kept.
	credentials *secrets.CredentialStore
}

func (c *secretsConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.Secret(&c.Key, "secrets-key", envSecretsKey,
		"base64 32-byte key sealing every secret a2aflow keeps (webhook tokens and credentials, credentials given to auth-required tasks) and minting waitpoint tokens; "+
			"api and worker need the same and refuse to start without one; serve generates <data-dir>/"+secretsKeyFile+" when unset; prefer the environment variable",
		cmdutil.Formerly("push-key", "A2AFLOW_PUSH_KEY"))
	b.StringSlice(&c.PreviousKeys, "secrets-previous-keys", "A2AFLOW_SECRETS_PREVIOUS_KEYS", nil,
		"earlier secrets keys, base64, comma-separated: they still open what they sealed while --secrets-key seals everything new (key rotation)",
		cmdutil.Formerly("push-previous-keys", "A2AFLOW_PUSH_PREVIOUS_KEYS"))
	b.Bool(&c.Insecure, "insecure-store-secrets", "A2AFLOW_INSECURE_STORE_SECRETS", false,
		"let api and worker start without a secrets key: webhook tokens and credentials then go into Temporal history as given, and auth-required credentials are refused",
		cmdutil.Formerly("insecure-store-push-secrets", "A2AFLOW_INSECURE_STORE_PUSH_SECRETS"))
}

// build reads the keys and prepares the sealer. With keyDir set (serve), a
// missing key is generated once into keyDir and reused on every restart;
// without it (api, worker), a missing key stops the start unless
// --insecure-store-secrets says to store secrets as given.
func (c *secretsConfig) build(keyDir string, logger *slog.Logger) error {
	key, err := c.key(keyDir, logger)
	if err != nil {
		return err
	}
	switch {
	case key == nil && !c.Insecure:
		return errors.New("no secrets key: set " + envSecretsKey + " (the same base64 32-byte key on api and worker; `openssl rand -base64 32`), " +
			"or --insecure-store-secrets to keep webhook tokens in Temporal history as given")
	case key == nil:
		logger.Warn("no secrets key (--insecure-store-secrets): webhook tokens and credentials are stored in Temporal history as given")
		return nil
	}
	keys := [][]byte{key}
	for i, old := range c.PreviousKeys {
		k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(old))
		if err != nil {
			return fmt.Errorf("--secrets-previous-keys: key %d is not base64: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if c.sealer, err = webhook.NewSealer(keys...); err != nil {
		return fmt.Errorf("--secrets-key: %w", err)
	}
	c.keys = keys
	return nil
}

func (c *secretsConfig) key(keyDir string, logger *slog.Logger) ([]byte, error) {
	if v := c.Key.Get(); v != "" {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("--secrets-key is not base64: %w", err)
		}
		return key, nil
	}
	if keyDir == "" {
		return nil, nil
	}
	path := filepath.Join(keyDir, formerSecretsKeyFile)
	if _, err := os.Stat(path); err == nil {
		logger.Debug("secrets key kept under its former name", "file", path)
	} else {
		path = filepath.Join(keyDir, secretsKeyFile)
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(keyDir, 0o755); err != nil {
			return nil, fmt.Errorf("secrets key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("secrets key: %w", err)
		}
		key := webhook.NewKey()
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("secrets key %s: %w", path, werr)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("secrets key %s is not base64: %w", path, err)
	}
	return key, nil
}

// buildCredentials opens the credential store over the payload store,
// sealed with the secrets keys (c.Secrets.build read them first). Without a
// key (--insecure-store-secrets) no credential is kept: tasks that ask for
// one are answered that the server keeps none.
func (c *config) buildCredentials(logger *slog.Logger) error {
	if len(c.Secrets.keys) == 0 {
		logger.Warn("no secrets key: credentials given to tasks in auth-required cannot be kept")
		return nil
	}
	sealer, err := secrets.NewSealer(c.Secrets.keys...)
	if err != nil {
		return err
	}
	payloads, err := c.payloadStore()
	if err != nil {
		return err
	}
	c.Secrets.credentials = &secrets.CredentialStore{Store: payloads, Sealer: sealer, Namespace: c.Namespace}
	return nil
}
