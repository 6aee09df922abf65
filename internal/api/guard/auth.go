package guard

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
)

// Names and defaults of the credentials a2aflow accepts.
const (
	// APIKeySchemeName names the API key scheme in agent cards'
	// securitySchemes and securityRequirements.
	APIKeySchemeName a2a.SecuritySchemeName = "apiKey"
	// BearerSchemeName names the bearer JWT scheme in agent cards.
	BearerSchemeName a2a.SecuritySchemeName = "bearer"
	// OpenIDConnectSchemeName names the OpenID Connect scheme that cards
	// declare when JWTs have an issuer (permissions.go): the same bearer
	// JWTs, with the issuer's discovery document and the scopes each agent
	// needs.
	OpenIDConnectSchemeName a2a.SecuritySchemeName = "openIdConnect"
	// DefaultAPIKeyHeader is the request header carrying an API key unless
	// AuthConfig.APIKeyHeader says otherwise.
	DefaultAPIKeyHeader = "X-API-Key"
	// DefaultPrincipalClaim is the JWT claim naming the caller unless
	// JWTConfig.PrincipalClaim says otherwise.
	DefaultPrincipalClaim = "sub"

	// authRealm is the realm of the WWW-Authenticate challenges.
	authRealm = "a2aflow"
)

// jwksMethods are the signing algorithms accepted for keys from a JWKS.
// HMAC is never among them: a JWKS names public keys, and accepting HS*
// there would let a token signed with a public key's bytes pass.
var jwksMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

var (
	// ErrNoCredentials means a request to a guarded endpoint carried no
	// credential of an accepted scheme.
	ErrNoCredentials = errors.New("no credentials")
	// ErrInvalidCredentials means a request's credential was refused (an
	// unknown API key, a bad signature, an expired token...).
	ErrInvalidCredentials = errors.New("invalid credentials")
	// ErrAuthConfig means the authentication configuration is unusable.
	ErrAuthConfig = errors.New("invalid authentication configuration")
)

// AuthConfig configures who may call the A2A endpoints. The zero value turns
// authentication off, which suits the local all-in-one: every caller is
// served and tasks have no owner. With API keys or JWT configured, every
// A2A request must carry a valid credential; agent cards, GET /agents,
// /healthz, /readyz, the inbox page and the console's files stay public.
type AuthConfig struct {
	// APIKeys maps a principal name to its API key; the name is the
	// principal of requests carrying the key. Default: no API keys.
	APIKeys map[string]string
	// APIKeyHeader is the request header carrying the API key; default
	// DefaultAPIKeyHeader ("X-API-Key").
	APIKeyHeader string
	// JWT configures bearer JWTs in the Authorization header. Default: none.
	JWT JWTConfig
	// APIKeyAgents maps the principal of an API key to the agents it may
	// use (permissions.go); a principal not listed may use every agent.
	// Every name must be a key of APIKeys. Default: none, every key may
	// use every agent.
	APIKeyAgents map[string][]string
	// Logger receives JWKS refresh failures and refused credentials (at
	// debug); default slog.Default().
	Logger *slog.Logger
}

// JWTConfig configures bearer JWTs. Any of HS256Secret, JWKSURL and
// JWKSFile turns JWTs on; tokens must carry an "exp" claim.
type JWTConfig struct {
	// HS256Secret verifies HS256 tokens; at least 32 bytes (RFC 7518
	// §3.2). Default: none, HS256 tokens are refused.
	HS256Secret []byte
	// JWKSURL is fetched at start (a failure is an error) and refreshed
	// hourly, and at most every 5 minutes when a token names an unknown
	// key ID; its keys verify RS*, PS*, ES* and EdDSA tokens. Default: none.
	JWKSURL string
	// JWKSFile is a JWK Set read once at start, for the same algorithms.
	// Default: none.
	JWKSFile string
	// Issuer, when set, must equal the token's "iss" claim.
	Issuer string
	// Audience, when set, must be one of the token's "aud" values.
	Audience string
	// PrincipalClaim is the string claim naming the caller; default
	// DefaultPrincipalClaim ("sub").
	PrincipalClaim string
	// Leeway tolerates clock skew when checking "exp" and "nbf";
	// default none.
	Leeway time.Duration
	// AgentScopePrefix, when set (e.g. DefaultAgentScopePrefix), limits a
	// token to the agents its scopes name: scope AgentScopePrefix+NAME
	// lets it use agent NAME, AgentScopePrefix+"*" every agent. Scopes are
	// read from the "scope" claim (space-separated, RFC 9068) and the "scp"
	// claim (a string or a list). Default: none (permissions.go).
	AgentScopePrefix string
	// AgentsClaim, when set, names a claim listing the agents a token may
	// use (a list of names, or one string of names separated by spaces or
	// commas; "*" for all). With AgentScopePrefix too, either grants.
	// Default: none.
	AgentsClaim string
	// OpenIDConnectURL is the OpenID Connect discovery URL cards declare
	// for bearer JWTs; default Issuer + "/.well-known/openid-configuration"
	// when Issuer is an http(s) URL, else none.
	OpenIDConnectURL string
	// HTTPClient fetches JWKSURL; default a client with a 10 s timeout.
	HTTPClient *http.Client
}

// Identity is an authenticated caller.
type Identity struct {
	// Principal names the caller; it owns the tasks it creates.
	Principal string
	// Scheme is the security scheme the caller authenticated with.
	Scheme a2a.SecuritySchemeName
	// ExpiresAt is when the caller's token expires; zero for an API key.
	ExpiresAt time.Time
	// Agents are the agents the caller may use; nil: every agent
	// (permissions.go).
	Agents []string
}

// Authenticator checks the credentials of A2A requests against an
// AuthConfig. A nil *Authenticator, like one built from the zero AuthConfig,
// lets every request through.
type Authenticator struct {
	header   string
	keys     []apiKey
	hsSecret []byte
	jwks     keyfunc.Keyfunc
	parser   *jwt.Parser
	claim    string
	logger   *slog.Logger
	// perms are the agent permissions of API keys and tokens
	// (permissions.go).
	perms permissions
}

// apiKey is one configured key, kept as a hash so that comparing takes the
// same time whatever the length of the presented key.
type apiKey struct {
	principal string
	hash      [sha256.Size]byte
}

// NewAuthenticator validates cfg and prepares its verifiers. ctx bounds the
// background refresh of cfg.JWT.JWKSURL; the first fetch happens before
// NewAuthenticator returns. Errors wrap ErrAuthConfig.
func NewAuthenticator(ctx context.Context, cfg AuthConfig) (*Authenticator, error) {
	a := &Authenticator{header: cfg.APIKeyHeader, logger: cfg.Logger, claim: cfg.JWT.PrincipalClaim}
	if a.header == "" {
		a.header = DefaultAPIKeyHeader
	}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	if a.claim == "" {
		a.claim = DefaultPrincipalClaim
	}
	if err := a.setKeys(cfg.APIKeys); err != nil {
		return nil, err
	}
	if err := a.setJWT(ctx, cfg.JWT); err != nil {
		return nil, err
	}
	if err := a.setPermissions(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Authenticator) setKeys(keys map[string]string) error {
	seen := map[[sha256.Size]byte]string{}
	for name, key := range keys {
		switch {
		case strings.TrimSpace(name) == "":
			return fmt.Errorf("%w: an API key has an empty principal name", ErrAuthConfig)
		case key == "":
			return fmt.Errorf("%w: the API key of %q is empty", ErrAuthConfig, name)
		}
		h := sha256.Sum256([]byte(key))
		if other, dup := seen[h]; dup {
			return fmt.Errorf("%w: %q and %q have the same API key", ErrAuthConfig, other, name)
		}
		seen[h] = name
		a.keys = append(a.keys, apiKey{principal: name, hash: h})
	}
	// Sorted, so that logs and tests see a stable order.
	slices.SortFunc(a.keys, func(x, y apiKey) int { return strings.Compare(x.principal, y.principal) })
	return nil
}

func (a *Authenticator) setJWT(ctx context.Context, cfg JWTConfig) error {
	var methods []string
	if len(cfg.HS256Secret) > 0 {
		if len(cfg.HS256Secret) < 32 {
			return fmt.Errorf("%w: the HS256 secret has %d bytes; it needs at least 32", ErrAuthConfig, len(cfg.HS256Secret))
		}
		a.hsSecret = cfg.HS256Secret
		methods = append(methods, "HS256")
	}
	var given jwkset.Storage
	if cfg.JWKSFile != "" {
		store, err := readJWKSFile(ctx, cfg.JWKSFile)
		if err != nil {
			return err
		}
		given = store
	}
	switch {
	case cfg.JWKSURL != "":
		client := cfg.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: 10 * time.Second}
		}
		fail := false
		k, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{cfg.JWKSURL}, keyfunc.Override{
			Client:                    client,
			Given:                     given,
			NoErrorReturnFirstHTTPReq: &fail,
			RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
				return func(ctx context.Context, err error) {
					a.logger.Error("cannot refresh the JWKS; keeping the keys fetched before", "url", u, "error", err)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("%w: fetch JWKS %s: %w", ErrAuthConfig, cfg.JWKSURL, err)
		}
		a.jwks = k
		methods = append(methods, jwksMethods...)
	case given != nil:
		k, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: given})
		if err != nil {
			return fmt.Errorf("%w: JWKS file %s: %w", ErrAuthConfig, cfg.JWKSFile, err)
		}
		a.jwks = k
		methods = append(methods, jwksMethods...)
	}
	if len(methods) == 0 {
		if cfg.Issuer != "" || cfg.Audience != "" {
			return fmt.Errorf("%w: a JWT issuer or audience is set but no HS256 secret, JWKS URL or JWKS file", ErrAuthConfig)
		}
		return nil
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithExpirationRequired(), jwt.WithLeeway(cfg.Leeway)}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	a.parser = jwt.NewParser(opts...)
	return nil
}

// readJWKSFile loads a JWK Set file; a file without a usable key is an error.
func readJWKSFile(ctx context.Context, path string) (jwkset.Storage, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read JWKS file: %w", ErrAuthConfig, err)
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%w: JWKS file %s is not a JWK Set: %w", ErrAuthConfig, path, err)
	}
	store, err := set.ToStorage()
	if err != nil {
		return nil, fmt.Errorf("%w: JWKS file %s: %w", ErrAuthConfig, path, err)
	}
	keys, err := store.KeyReadAll(ctx)
	if err != nil || len(keys) == 0 {
		return nil, fmt.Errorf("%w: JWKS file %s has no usable key", ErrAuthConfig, path)
	}
	return store, nil
}

// ParseAPIKeys reads API keys as "name=key" pairs, one per line or
// separated by commas; blank lines and lines starting with # are skipped.
// It is the format of --api-keys and of the --api-keys-file file.
func ParseAPIKeys(text string) (map[string]string, error) {
	keys := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		entry := strings.TrimSpace(sc.Text())
		if entry == "" || strings.HasPrefix(entry, "#") {
			continue
		}
		for pair := range strings.SplitSeq(entry, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			name, key, ok := strings.Cut(pair, "=")
			name, key = strings.TrimSpace(name), strings.TrimSpace(key)
			if !ok || name == "" || key == "" {
				return nil, fmt.Errorf("%w: API keys line %d: want name=key", ErrAuthConfig, line)
			}
			if _, dup := keys[name]; dup {
				return nil, fmt.Errorf("%w: API keys line %d: %q has more than one key", ErrAuthConfig, line, name)
			}
			keys[name] = key
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: read API keys: %w", ErrAuthConfig, err)
	}
	return keys, nil
}

// APIKeyHeader returns the header carrying API keys, or "" when no API key
// is configured: what a page that sends the user's key must set.
func (a *Authenticator) APIKeyHeader() string {
	if a == nil || len(a.keys) == 0 {
		return ""
	}
	return a.header
}

// BearerTokens reports whether bearer JWTs are accepted.
func (a *Authenticator) BearerTokens() bool { return a != nil && a.parser != nil }

// Enabled reports whether requests need credentials.
func (a *Authenticator) Enabled() bool {
	return a != nil && (len(a.keys) > 0 || a.parser != nil)
}

// Authenticate returns the caller of r. A request presents one credential:
// the API key header when API keys are configured and the header is set,
// else the Authorization bearer token. Errors wrap ErrNoCredentials or
// ErrInvalidCredentials.
func (a *Authenticator) Authenticate(r *http.Request) (Identity, error) {
	return a.authenticateHeaders(r.Header)
}

// authenticateHeaders is Authenticate over a request's headers, or a gRPC
// call's metadata in their form (a2abinding/grpc.go).
func (a *Authenticator) authenticateHeaders(h http.Header) (Identity, error) {
	if len(a.keys) > 0 {
		if key := h.Get(a.header); key != "" {
			return a.checkAPIKey(key)
		}
	}
	if a.parser != nil {
		if authz := h.Get("Authorization"); authz != "" {
			scheme, token, _ := strings.Cut(authz, " ")
			token = strings.TrimSpace(token)
			if !strings.EqualFold(scheme, "Bearer") || token == "" {
				return Identity{}, &credentialError{scheme: BearerSchemeName, reason: "the Authorization header must be Bearer followed by a JWT"}
			}
			return a.checkJWT(token)
		}
	}
	return Identity{}, ErrNoCredentials
}

func (a *Authenticator) checkAPIKey(key string) (Identity, error) {
	h := sha256.Sum256([]byte(key))
	found := ""
	// Compare with every key, without stopping early, so that timing tells
	// nothing about which key came close.
	for _, k := range a.keys {
		if subtle.ConstantTimeCompare(h[:], k.hash[:]) == 1 {
			found = k.principal
		}
	}
	if found == "" {
		return Identity{}, &credentialError{scheme: APIKeySchemeName, reason: "unknown API key"}
	}
	return Identity{Principal: found, Scheme: APIKeySchemeName, Agents: a.perms.keyAgents(found)}, nil
}

func (a *Authenticator) checkJWT(raw string) (Identity, error) {
	token, err := a.parser.Parse(raw, a.verificationKey)
	if err != nil {
		a.logger.Debug("refused bearer token", "error", err)
		return Identity{}, &credentialError{scheme: BearerSchemeName, reason: jwtReason(err)}
	}
	claims, _ := token.Claims.(jwt.MapClaims)
	principal, _ := claims[a.claim].(string)
	if principal == "" {
		return Identity{}, &credentialError{scheme: BearerSchemeName, reason: fmt.Sprintf("the token has no %s claim naming the caller", a.claim)}
	}
	id := Identity{Principal: principal, Scheme: BearerSchemeName, Agents: a.perms.tokenAgents(claims)}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		id.ExpiresAt = exp.Time
	}
	return id, nil
}

// verificationKey picks the key of a token: the shared secret for HS256,
// else the JWKS key its "kid" names. The parser has already refused
// algorithms that are not configured.
func (a *Authenticator) verificationKey(t *jwt.Token) (any, error) {
	if t.Method.Alg() == jwt.SigningMethodHS256.Alg() {
		return a.hsSecret, nil
	}
	if a.jwks == nil {
		return nil, fmt.Errorf("no JWKS for %s tokens", t.Method.Alg())
	}
	return a.jwks.Keyfunc(t)
}

// jwtReason says in a few words why a token was refused, without echoing
// internal details of the key lookup.
func jwtReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{jwt.ErrTokenMalformed, "the token is malformed"},
		{jwt.ErrTokenSignatureInvalid, "the token signature is invalid"},
		{jwt.ErrTokenUnverifiable, "the token is signed with an unknown key or algorithm"},
		{jwt.ErrTokenExpired, "the token is expired"},
		{jwt.ErrTokenNotValidYet, "the token is not valid yet"},
		{jwt.ErrTokenInvalidIssuer, "the token has the wrong issuer"},
		{jwt.ErrTokenInvalidAudience, "the token has the wrong audience"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	if errors.Is(err, jwt.ErrTokenRequiredClaimMissing) {
		for _, claim := range []string{"exp", "aud", "iss"} {
			if strings.Contains(err.Error(), claim+" claim is required") {
				return "the token lacks the " + claim + " claim"
			}
		}
		return "the token lacks a required claim"
	}
	return "the token is invalid"
}

// credentialError is a refused credential of one scheme.
type credentialError struct {
	scheme a2a.SecuritySchemeName
	reason string
}

func (e *credentialError) Error() string { return e.reason }
func (e *credentialError) Unwrap() error { return ErrInvalidCredentials }

// challenges returns the WWW-Authenticate challenges for a request refused
// with err: one per accepted scheme, the bearer one with RFC 6750's
// invalid_token when a token was refused.
func (a *Authenticator) challenges(err error) []string {
	var out []string
	if a.parser != nil {
		c := fmt.Sprintf("Bearer realm=%q", authRealm)
		var ce *credentialError
		if errors.As(err, &ce) && ce.scheme == BearerSchemeName {
			// RFC 6750 §3 forbids the double quote and the backslash in error_description.
			desc := strings.NewReplacer(`"`, "'", `\`, "/").Replace(ce.reason)
			c += fmt.Sprintf(`, error="invalid_token", error_description="%s"`, desc)
		}
		out = append(out, c)
	}
	if len(a.keys) > 0 {
		out = append(out, fmt.Sprintf("APIKey realm=%q, header=%q", authRealm, a.header))
	}
	return out
}

// Declare lists the accepted schemes in card's securitySchemes and
// securityRequirements (any one of them suffices) and announces the
// extended card, which authenticated callers get. It leaves the card of a
// server without authentication unchanged.
func (a *Authenticator) Declare(card *a2a.AgentCard) {
	if !a.Enabled() {
		return
	}
	card.SecuritySchemes = a2a.NamedSecuritySchemes{}
	card.SecurityRequirements = nil
	if len(a.keys) > 0 {
		card.SecuritySchemes[APIKeySchemeName] = a2a.APIKeySecurityScheme{
			Location:    a2a.APIKeySecuritySchemeLocationHeader,
			Name:        a.header,
			Description: "An API key issued by the operator of this server; the key's name is the caller's principal.",
		}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{APIKeySchemeName: {}})
	}
	if a.parser != nil {
		card.SecuritySchemes[BearerSchemeName] = a2a.HTTPAuthSecurityScheme{
			Scheme:       "Bearer",
			BearerFormat: "JWT",
			Description:  fmt.Sprintf("A JWT with an exp claim; its %q claim is the caller's principal.", a.claim),
		}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{BearerSchemeName: {}})
		a.perms.declare(card) // the scopes of the agent (permissions.go)
	}
	card.Capabilities.ExtendedAgentCard = true
}

// Caller is what authentication records about a request for the handlers
// behind it: who the caller is, and the Authenticator that found it.
type Caller struct {
	Identity
	auth *Authenticator
}

// Authenticator is the Authenticator that authenticated the caller.
func (c *Caller) Authenticator() *Authenticator { return c.auth }

type callerKey struct{}

// CallerOf returns the authenticated caller of ctx; false without
// authentication.
func CallerOf(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// withCaller records the caller authenticated as id by a in ctx, and its
// principal.
func withCaller(ctx context.Context, id Identity, a *Authenticator) context.Context {
	ctx = WithPrincipal(ctx, id.Principal)
	return context.WithValue(ctx, callerKey{}, &Caller{Identity: id, auth: a})
}

// Authenticate is the Gin middleware guarding every route but the public
// ones (agent cards, GET /agents, /healthz, /readyz, the inbox page, the console's files). A caller with
// valid credentials goes on with its principal in the request context (the
// owner of the tasks it creates); any other gets 401 with a WWW-Authenticate
// challenge per accepted scheme, as a JSON-RPC error (-31401) on JSON-RPC
// endpoints and as a google.rpc.Status (UNAUTHENTICATED) on HTTP+JSON ones.
// A public route is served to anyone, with the principal when the
// credentials are valid.
func (g *Guard) Authenticate(c *gin.Context) {
	auth := g.cfg.Auth
	r := c.Request
	if !auth.Enabled() {
		c.Next()
		return
	}
	id, err := auth.Authenticate(r)
	if err != nil && publicRoute(r) {
		c.Next()
		return
	}
	if err != nil {
		auth.logger.Debug("refused request", "path", r.URL.Path, "error", err)
		for _, ch := range auth.challenges(err) {
			c.Writer.Header().Add("WWW-Authenticate", ch)
		}
		writeUnauthenticated(c, err)
		return
	}
	c.Request = r.WithContext(withCaller(r.Context(), id, auth))
	c.Next()
}

// writeUnauthenticated answers 401 in the form of the binding the request
// used: JSON-RPC is a POST on an agent's base path or any request to
// MCPPath, anything else HTTP+JSON.
func writeUnauthenticated(c *gin.Context, err error) {
	msg := unauthenticatedMessage(err)
	p := strings.TrimSuffix(c.Request.URL.Path, "/")
	if prefix := agentPrefix(p); prefix != "" {
		p = strings.TrimPrefix(p, prefix)
	}
	b := apierror.HTTPJSON
	if (c.Request.Method == http.MethodPost && p == "") || p == MCPPath {
		b = apierror.JSONRPCCodeOnly // MCP's transport is JSON-RPC on every method
	}
	// 401 on either binding: the status that goes with WWW-Authenticate.
	apierror.Abort(c, b, http.StatusUnauthorized, a2a.NewError(a2a.ErrUnauthenticated, msg))
}

// unauthenticatedMessage is the message of the refusal of a request whose
// credential authentication refused with err.
func unauthenticatedMessage(err error) string {
	if errors.Is(err, ErrNoCredentials) {
		return "authentication required: the agent card's securitySchemes list the accepted credentials"
	}
	return "authentication required: " + err.Error()
}
