package server

import (
	"log/slog"

	"github.com/a2aflow/a2aflow/internal/secrets"
)

// credentialsConfig holds what the credentials of auth-required answers
// need: the secrets key (the push key, which seals every secret a2aflow
// keeps) and the payload store they are kept in.
type credentialsConfig struct {
	// store is built by buildCredentials; nil: no credentials are kept.
	store *secrets.CredentialStore
}

// buildCredentials opens the credential store over the payload store,
// sealed with the push keys (c.Push.build read them first). Without a key
// (--insecure-store-push-secrets) no credential is kept: tasks that ask for
// one are answered that the server keeps none.
func (c *config) buildCredentials(logger *slog.Logger) error {
	if len(c.Push.keys) == 0 {
		logger.Warn("no push key: credentials given to tasks in auth-required cannot be kept")
		return nil
	}
	sealer, err := secrets.NewSealer(c.Push.keys...)
	if err != nil {
		return err
	}
	payloads, err := c.payloadStore()
	if err != nil {
		return err
	}
	c.Credentials.store = &secrets.CredentialStore{Store: payloads, Sealer: sealer, Namespace: c.Namespace}
	return nil
}
