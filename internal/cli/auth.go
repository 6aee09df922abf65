package cli

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/api"
)

// authConfig holds the authentication flags of the processes serving the
// A2A API (serve, api). All empty, the default, means no authentication.
type authConfig struct {
	APIKeys       string
	APIKeysFile   string
	APIKeyHeader  string
	JWTSecret     string
	JWTSecretFile string
	JWKSURL       string
	JWKSFile      string
	JWTIssuer     string
	JWTAudience   string
	JWTClaim      string

	// authenticator is built by build from the flags above.
	authenticator *api.Authenticator
}

func (c *authConfig) bind(fs *pflag.FlagSet) {
	// Secrets are not flag defaults: --help would print them.
	fs.StringVar(&c.APIKeys, "api-keys", "", "API keys as name=key pairs separated by commas; the name is the caller's principal (A2AFLOW_API_KEYS)")
	fs.StringVar(&c.APIKeysFile, "api-keys-file", env("A2AFLOW_API_KEYS_FILE", ""), "file of API keys, one name=key per line, # comments (A2AFLOW_API_KEYS_FILE)")
	fs.StringVar(&c.APIKeyHeader, "api-key-header", env("A2AFLOW_API_KEY_HEADER", api.DefaultAPIKeyHeader), "request header carrying the API key (A2AFLOW_API_KEY_HEADER)")
	fs.StringVar(&c.JWTSecret, "jwt-hs256-secret", "", "shared secret (at least 32 bytes) verifying HS256 bearer JWTs; prefer the environment variable (A2AFLOW_JWT_SECRET)")
	fs.StringVar(&c.JWTSecretFile, "jwt-hs256-secret-file", env("A2AFLOW_JWT_SECRET_FILE", ""), "file holding the HS256 secret (A2AFLOW_JWT_SECRET_FILE)")
	fs.StringVar(&c.JWKSURL, "jwks-url", env("A2AFLOW_JWKS_URL", ""), "JWK Set URL verifying RS256/ES256 bearer JWTs, refreshed hourly (A2AFLOW_JWKS_URL)")
	fs.StringVar(&c.JWKSFile, "jwks-file", env("A2AFLOW_JWKS_FILE", ""), "JWK Set file verifying RS256/ES256 bearer JWTs (A2AFLOW_JWKS_FILE)")
	fs.StringVar(&c.JWTIssuer, "jwt-issuer", env("A2AFLOW_JWT_ISSUER", ""), "required iss claim of bearer JWTs; empty: not checked (A2AFLOW_JWT_ISSUER)")
	fs.StringVar(&c.JWTAudience, "jwt-audience", env("A2AFLOW_JWT_AUDIENCE", ""), "required aud value of bearer JWTs; empty: not checked (A2AFLOW_JWT_AUDIENCE)")
	fs.StringVar(&c.JWTClaim, "jwt-principal-claim", env("A2AFLOW_JWT_PRINCIPAL_CLAIM", api.DefaultPrincipalClaim), "JWT claim naming the caller (A2AFLOW_JWT_PRINCIPAL_CLAIM)")
}

// build checks the flags and prepares the authenticator, fetching the JWKS
// URL once; ctx bounds its later refreshes. Called before anything slow
// starts, so a mistake is reported at once.
func (c *authConfig) build(ctx context.Context, logger *slog.Logger) error {
	if c.APIKeys == "" {
		c.APIKeys = os.Getenv("A2AFLOW_API_KEYS")
	}
	if c.JWTSecret == "" && c.JWTSecretFile == "" {
		c.JWTSecret = os.Getenv("A2AFLOW_JWT_SECRET")
	}
	keys, err := api.ParseAPIKeys(c.APIKeys)
	if err != nil {
		return fmt.Errorf("--api-keys: %w", err)
	}
	if c.APIKeysFile != "" {
		raw, err := os.ReadFile(c.APIKeysFile)
		if err != nil {
			return fmt.Errorf("--api-keys-file: %w", err)
		}
		fromFile, err := api.ParseAPIKeys(string(raw))
		if err != nil {
			return fmt.Errorf("--api-keys-file %s: %w", c.APIKeysFile, err)
		}
		for name, key := range fromFile {
			if _, dup := keys[name]; dup {
				return fmt.Errorf("API key %q is both in --api-keys and in --api-keys-file", name)
			}
			keys[name] = key
		}
	}
	secret := c.JWTSecret
	if c.JWTSecretFile != "" {
		if secret != "" {
			return fmt.Errorf("set --jwt-hs256-secret or --jwt-hs256-secret-file, not both")
		}
		raw, err := os.ReadFile(c.JWTSecretFile)
		if err != nil {
			return fmt.Errorf("--jwt-hs256-secret-file: %w", err)
		}
		// Editors end files with a newline that is not part of the secret.
		secret = strings.TrimRight(string(raw), "\r\n")
	}
	a, err := api.NewAuthenticator(ctx, api.AuthConfig{
		APIKeys:      keys,
		APIKeyHeader: c.APIKeyHeader,
		JWT: api.JWTConfig{
			HS256Secret:    []byte(secret),
			JWKSURL:        c.JWKSURL,
			JWKSFile:       c.JWKSFile,
			Issuer:         c.JWTIssuer,
			Audience:       c.JWTAudience,
			PrincipalClaim: c.JWTClaim,
		},
		Logger: logger,
	})
	if err != nil {
		return err
	}
	c.authenticator = a
	if a.Enabled() {
		var schemes []string
		if len(keys) > 0 {
			schemes = append(schemes, fmt.Sprintf("API keys in %s (%s)", c.APIKeyHeader, strings.Join(slices.Sorted(maps.Keys(keys)), ", ")))
		}
		if secret != "" || c.JWKSURL != "" || c.JWKSFile != "" {
			schemes = append(schemes, "bearer JWT")
		}
		logger.Info("authentication on", "schemes", strings.Join(schemes, "; "))
	}
	return nil
}
