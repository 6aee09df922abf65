package cmdutil

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/oauthlogin"
	"github.com/a2aflow/a2aflow/internal/secrets"
)

// EnvSecretsKey is --secrets-key's variable: the base64 key that seals
// every secret a2aflow keeps.
const EnvSecretsKey = "A2AFLOW_SECRETS_KEY"

// SecretsKeyFiles are where serve keeps its generated key under the data
// dir: the former name first (it wins when present), then the current one.
var SecretsKeyFiles = []string{"push.key", "secrets.key"}

// ReadSecretsKey returns the secrets key: value (a flag's, base64), else
// $A2AFLOW_SECRETS_KEY, else the key serve generated under dataDir. It
// generates none: a command that keeps secrets for a server must seal them
// with the server's key.
func ReadSecretsKey(value, dataDir string) ([]byte, error) {
	if value == "" {
		value = os.Getenv(EnvSecretsKey)
	}
	if value != "" {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("--secrets-key is not base64: %w", err)
		}
		return key, nil
	}
	for _, name := range SecretsKeyFiles {
		path := filepath.Join(dataDir, name)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
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
	return nil, fmt.Errorf("no secrets key: set %s (the key of the servers that use the login) or --secrets-key, or run %s serve once with --data-dir %s to create %s",
		EnvSecretsKey, ProgName(), dataDir, filepath.Join(dataDir, "secrets.key"))
}

// OpenLogins opens the OAuth logins of database d, sealed with the secrets
// key (ReadSecretsKey of key and d's data dir). With mustExist, a SQLite
// database that does not exist yet is an error rather than created. The
// returned function closes the database.
func OpenLogins(d Database, key string, mustExist bool) (*oauthlogin.Store, func(), error) {
	path := d.Path()
	if mustExist && d.DSN == "" {
		if _, err := os.Stat(path); err != nil {
			return nil, nil, fmt.Errorf("no database at %s (--data-dir, --database), where `%s agents login` keeps logins", path, ProgName())
		}
	}
	k, err := ReadSecretsKey(key, d.DataDir)
	if err != nil {
		return nil, nil, err
	}
	sealer, err := secrets.NewSealer(k)
	if err != nil {
		return nil, nil, fmt.Errorf("secrets key: %w", err)
	}
	store, err := models.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return &oauthlogin.Store{DB: store.DB(), Sealer: sealer}, func() { _ = store.Close() }, nil
}
