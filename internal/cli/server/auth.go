package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// authConfig holds the authentication flags of the processes serving the
// A2A API (serve, api). All empty, the default, means no authentication.
type authConfig struct {
	APIKeys       cmdutil.Secret
	APIKeysFile   string
	APIKeyHeader  string
	JWTSecret     cmdutil.Secret
	JWTSecretFile string
	JWKSURL       string
	JWKSFile      string
	JWTIssuer     string
	JWTAudience   string
	JWTClaim      string
	APIKeyAgents  string
	JWTScopes     string
	JWTAgents     string
	JWTOIDCURL    string

	// authenticator is built by build from the flags above.
	authenticator *guard.Authenticator
}

func (c *authConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.Secret(&c.APIKeys, "api-keys", "A2AFLOW_API_KEYS", "API keys as name=key pairs separated by commas; the name is the caller's principal")
	b.String(&c.APIKeysFile, "api-keys-file", "A2AFLOW_API_KEYS_FILE", "", "file of API keys, one name=key per line, # comments")
	b.String(&c.APIKeyHeader, "api-key-header", "A2AFLOW_API_KEY_HEADER", guard.DefaultAPIKeyHeader, "request header carrying the API key")
	b.Secret(&c.JWTSecret, "jwt-hs256-secret", "A2AFLOW_JWT_SECRET", "shared secret (at least 32 bytes) verifying HS256 bearer JWTs; prefer the environment variable")
	b.String(&c.JWTSecretFile, "jwt-hs256-secret-file", "A2AFLOW_JWT_SECRET_FILE", "", "file holding the HS256 secret")
	b.String(&c.JWKSURL, "jwks-url", "A2AFLOW_JWKS_URL", "", "JWK Set URL verifying RS256/ES256 bearer JWTs, refreshed hourly")
	b.String(&c.JWKSFile, "jwks-file", "A2AFLOW_JWKS_FILE", "", "JWK Set file verifying RS256/ES256 bearer JWTs")
	b.String(&c.JWTIssuer, "jwt-issuer", "A2AFLOW_JWT_ISSUER", "", "required iss claim of bearer JWTs; empty: not checked")
	b.String(&c.JWTAudience, "jwt-audience", "A2AFLOW_JWT_AUDIENCE", "", "required aud value of bearer JWTs; empty: not checked")
	b.String(&c.JWTClaim, "jwt-principal-claim", "A2AFLOW_JWT_PRINCIPAL_CLAIM", guard.DefaultPrincipalClaim, "JWT claim naming the caller")
	b.String(&c.APIKeyAgents, "api-key-agents", "A2AFLOW_API_KEY_AGENTS", "", `agents each API key may use, "alice:orders,billing;bob:payroll"; a key not listed may use every agent (docs/guides/permissions.md)`)
	b.String(&c.JWTScopes, "jwt-agent-scope-prefix", "A2AFLOW_JWT_AGENT_SCOPE_PREFIX", "", `limit each JWT to the agents its scopes name: with "`+guard.DefaultAgentScopePrefix+`", scope `+guard.DefaultAgentScopePrefix+`orders lets it use orders (`+guard.DefaultAgentScopePrefix+`* every agent), and cards require the scope; empty: every JWT may use every agent`)
	b.String(&c.JWTAgents, "jwt-agents-claim", "A2AFLOW_JWT_AGENTS_CLAIM", "", "limit each JWT to the agents this claim lists (a list, or names separated by spaces or commas; * for all); empty: off")
	b.String(&c.JWTOIDCURL, "jwt-openid-config-url", "A2AFLOW_JWT_OPENID_CONFIG_URL", "", "OpenID Connect discovery URL that cards declare (an openIdConnect scheme with each agent's scope); default <jwt-issuer>/.well-known/openid-configuration when --jwt-issuer is an http(s) URL")
}

// build checks the flags and prepares the authenticator, fetching the JWKS
// URL once; ctx bounds its later refreshes. Called before anything slow
// starts, so a mistake is reported at once.
func (c *authConfig) build(ctx context.Context, logger *slog.Logger) error {
	keys, err := guard.ParseAPIKeys(c.APIKeys.Get())
	if err != nil {
		return fmt.Errorf("--api-keys: %w", err)
	}
	if c.APIKeysFile != "" {
		raw, err := os.ReadFile(c.APIKeysFile)
		if err != nil {
			return fmt.Errorf("--api-keys-file: %w", err)
		}
		fromFile, err := guard.ParseAPIKeys(string(raw))
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
	secret := c.JWTSecret.Get()
	if c.JWTSecretFile != "" {
		// A secret in the environment gives way to the file.
		if secret = c.JWTSecret.String(); secret != "" {
			return fmt.Errorf("set --jwt-hs256-secret or --jwt-hs256-secret-file, not both")
		}
		raw, err := os.ReadFile(c.JWTSecretFile)
		if err != nil {
			return fmt.Errorf("--jwt-hs256-secret-file: %w", err)
		}
		// Editors end files with a newline that is not part of the secret.
		secret = strings.TrimRight(string(raw), "\r\n")
	}
	keyAgents, err := guard.ParseApproverGroups(c.APIKeyAgents) // the same "name:a,b;name2:c" form
	if err != nil {
		return fmt.Errorf("--api-key-agents: %w", err)
	}
	a, err := guard.NewAuthenticator(ctx, guard.AuthConfig{
		APIKeys:      keys,
		APIKeyAgents: keyAgents,
		APIKeyHeader: c.APIKeyHeader,
		JWT: guard.JWTConfig{
			HS256Secret:      []byte(secret),
			JWKSURL:          c.JWKSURL,
			JWKSFile:         c.JWKSFile,
			Issuer:           c.JWTIssuer,
			Audience:         c.JWTAudience,
			PrincipalClaim:   c.JWTClaim,
			AgentScopePrefix: c.JWTScopes,
			AgentsClaim:      c.JWTAgents,
			OpenIDConnectURL: c.JWTOIDCURL,
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
		if len(keyAgents) > 0 || c.JWTScopes != "" || c.JWTAgents != "" {
			schemes = append(schemes, "agent permissions")
		}
		logger.Info("authentication on", "schemes", strings.Join(schemes, "; "))
	}
	return nil
}
