package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Credentials are what a2aflow sends to authenticate to one remote agent.
// Any combination may be set, except two that both use the Authorization
// header (bearer, basic, OAuth2, or an API key in a header named
// Authorization); each is added to every request, the card fetch included.
//
// The zero value (and a nil *Credentials) sends nothing. Credentials must not
// be changed or copied once HTTPClient has been called: the client is built
// once from them and keeps the OAuth2 token it got.
//
// Printing Credentials (String, or %v / %#v) names the schemes without their
// secrets.
type Credentials struct {
	// APIKey is sent in a header, a query parameter or a cookie.
	APIKey *APIKey `json:"apiKey,omitempty"`
	// Bearer is sent as "Authorization: Bearer <token>".
	Bearer string `json:"bearer,omitempty"`
	// Basic is sent as HTTP basic authentication.
	Basic *Basic `json:"basic,omitempty"`
	// OAuth2 gets (and refreshes) an access token with the client
	// credentials grant and sends it as a bearer token.
	OAuth2 *OAuth2 `json:"oauth2,omitempty"`
	// Login is an OAuth 2.0 login made with the authorization code (or
	// device code) flow (a2aflow agents login): its access token, refreshed
	// as it expires, is sent as a bearer token. It is never read from a
	// credentials file: the keyring finds logins in the database
	// (Keyring.Logins).
	Login LoginTokens `json:"-"`
	// Hosts are the hosts the credentials are registered for, "host" (any
	// port) or "host:port": they are sent to no other. Empty: in a2aflow's
	// worker, only to the host of the directory entry that names them (see
	// Endpoint); from the CLI, to the agent it is given.
	Hosts []string `json:"hosts,omitempty"`

	once   sync.Once
	client *http.Client
	err    error

	// tokens is the OAuth2 token source, built once (so that every client
	// of these credentials shares the token) by tokenSource.
	tokensOnce sync.Once
	tokens     oauth2.TokenSource
}

// Where an API key goes (APIKey.In).
const (
	InHeader = "header"
	InQuery  = "query"
	InCookie = "cookie"
)

// Default API key names: DefaultAPIKeyHeader for a header, DefaultAPIKeyParam
// for a query parameter or a cookie.
const (
	DefaultAPIKeyHeader = "X-API-Key"
	DefaultAPIKeyParam  = "api_key"
)

// APIKey is an API key and where it goes.
type APIKey struct {
	Value string `json:"value"`
	// In is "header" (default), "query" or "cookie".
	In string `json:"in,omitempty"`
	// Name is the header, query parameter or cookie name; default X-API-Key
	// for a header, api_key for a query parameter or cookie.
	Name string `json:"name,omitempty"`
}

// Basic is HTTP basic authentication.
type Basic struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// OAuth2 is the OAuth 2.0 client credentials grant (RFC 6749 section 4.4).
// The client authenticates to the token endpoint with HTTP basic, or with
// client_id and client_secret in the form when the endpoint refuses basic.
type OAuth2 struct {
	TokenURL     string   `json:"tokenUrl"`
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret"`
	Scopes       []string `json:"scopes,omitempty"`
}

// LoginTokens are the tokens of an OAuth 2.0 login (package oauthlogin
// keeps them sealed in the database).
type LoginTokens interface {
	// TokenSource returns the login's access tokens, refreshed through
	// tokenClient as they expire. A refresh the authorization server
	// refuses (a revoked or expired refresh token) is an error matching
	// ErrLoginRequired.
	TokenSource(tokenClient *http.Client) oauth2.TokenSource
	// TokenURL is the token endpoint (the operator's: trusted by the
	// outbound policy, as a credentials file's tokenUrl is).
	TokenURL() string
	// String names the login, never a token.
	String() string
}

// ErrLoginRequired: an OAuth login's tokens were refused or are gone; the
// user must log in again (a2aflow agents login).
var ErrLoginRequired = errors.New("the OAuth login must be made again")

// LoginRequiredError is a login whose refresh the authorization server
// refused, or that has no usable token left. It matches ErrLoginRequired.
type LoginRequiredError struct {
	// Name is the login's name (its auth reference).
	Name string
	// Why says what happened, without a token ("the authorization server
	// refused the refresh token (invalid_grant)").
	Why string
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("OAuth login %s: %s: run `a2aflow agents login %s` again", e.Name, e.Why, e.Name)
}

// Unwrap makes the error match ErrLoginRequired.
func (e *LoginRequiredError) Unwrap() error { return ErrLoginRequired }

// TokenFetchTimeout bounds one request to an OAuth2 token endpoint. A token
// fetch does not follow the context of the request that needed it (the token
// is shared by every request), so it has its own bound.
const TokenFetchTimeout = 30 * time.Second

// location is where the key goes, with the defaults applied.
func (k *APIKey) location() (in, name string) {
	in = strings.ToLower(k.In)
	if in == "" {
		in = InHeader
	}
	name = k.Name
	if name == "" {
		if in == InHeader {
			name = DefaultAPIKeyHeader
		} else {
			name = DefaultAPIKeyParam
		}
	}
	return in, name
}

// Validate reports the first problem of c: a missing value, an unknown place
// for the API key, an unusable OAuth2 configuration, or two schemes that both
// need the Authorization header. It never quotes a secret. A nil or empty c
// is valid and sends nothing.
func (c *Credentials) Validate() error {
	if c == nil {
		return nil
	}
	var auth []string // schemes that set the Authorization header
	if k := c.APIKey; k != nil {
		in, name := k.location()
		switch in {
		case InHeader:
			if !validToken(name) {
				return fmt.Errorf("apiKey.name %q is not a valid header name", name)
			}
			if strings.EqualFold(name, "Authorization") {
				auth = append(auth, "an API key in the Authorization header")
			}
		case InQuery:
		case InCookie:
			if !validToken(name) {
				return fmt.Errorf("apiKey.name %q is not a valid cookie name", name)
			}
		default:
			return fmt.Errorf("apiKey.in %q is not header, query or cookie", k.In)
		}
		if k.Value == "" {
			return errors.New("apiKey.value is empty")
		}
		switch {
		case in == InCookie && !validCookieValue(k.Value):
			return errors.New("apiKey.value cannot go in a cookie: it holds a space, quote, comma, semicolon, backslash or control character")
		case in == InHeader && !validHeaderValue(k.Value):
			return errors.New("apiKey.value cannot go in a header: it holds a control character")
		}
	}
	if c.Bearer != "" {
		if !validHeaderValue(c.Bearer) || strings.ContainsAny(c.Bearer, " \t") {
			if len(c.Bearer) > 7 && strings.EqualFold(c.Bearer[:7], "bearer ") {
				return errors.New("bearer holds the \"Bearer \" prefix: give the token alone")
			}
			return errors.New("bearer holds a space or a control character")
		}
		auth = append(auth, "bearer")
	}
	if b := c.Basic; b != nil {
		if b.Username == "" {
			return errors.New("basic.username is empty")
		}
		if strings.Contains(b.Username, ":") {
			return errors.New("basic.username holds a colon, which basic authentication cannot carry")
		}
		if !validHeaderValue(b.Username) || !validHeaderValue(b.Password) {
			return errors.New("basic.username or basic.password holds a control character")
		}
		auth = append(auth, "basic")
	}
	if o := c.OAuth2; o != nil {
		if o.TokenURL == "" {
			return errors.New("oauth2.tokenUrl is empty")
		}
		u, err := url.Parse(o.TokenURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("oauth2.tokenUrl %q is not an http(s) URL", redactURL(o.TokenURL))
		}
		if o.ClientID == "" {
			return errors.New("oauth2.clientId is empty")
		}
		if o.ClientSecret == "" {
			return errors.New("oauth2.clientSecret is empty")
		}
		for _, s := range o.Scopes {
			if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
				return fmt.Errorf("oauth2.scopes: %q is not a scope (no spaces, quotes or backslashes; one scope per entry)", s)
			}
		}
		auth = append(auth, "oauth2")
	}
	if c.Login != nil {
		auth = append(auth, "an OAuth login")
	}
	if len(auth) > 1 {
		return fmt.Errorf("%s and %s both use the Authorization header: keep one", auth[0], auth[1])
	}
	for _, h := range c.Hosts {
		if _, err := parseHostPattern(h); err != nil {
			return fmt.Errorf("hosts: %w", err)
		}
	}
	return nil
}

// HTTPClient returns the HTTP client that adds c to every request. It is
// built once: every call returns the same client, so an OAuth2 token is
// fetched once and reused until it expires. It has no overall timeout: a
// stream or a blocking send may last long, so callers bound each call with
// its context. When c is invalid (see Validate), every request through the
// client fails with the validation error and nothing is sent.
func (c *Credentials) HTTPClient() *http.Client {
	hc, _ := c.httpClient()
	return hc
}

// httpClient is HTTPClient with the validation error.
func (c *Credentials) httpClient() (*http.Client, error) {
	if c == nil {
		return plainClient, nil
	}
	c.once.Do(func() {
		if err := c.Validate(); err != nil {
			c.err = err
			c.client = &http.Client{Transport: failingTransport{err: fmt.Errorf("invalid credentials: %w", err)}}
			return
		}
		// The token endpoint gets only the client authentication, through
		// its own bounded client.
		tokens := c.tokenSource(&http.Client{Timeout: TokenFetchTimeout, Transport: http.DefaultTransport})
		c.client = &http.Client{Transport: newCredentialTransport(c, http.DefaultTransport, tokens, c.registeredHosts())}
	})
	return c.client, c.err
}

// tokenSource returns the OAuth2 token source of c (nil without OAuth2 or
// a login),
// built on first use with tokenClient, which fetches the tokens: every
// client of c shares it, and the token it caches until it expires.
func (c *Credentials) tokenSource(tokenClient *http.Client) oauth2.TokenSource {
	c.tokensOnce.Do(func() {
		if c.Login != nil {
			c.tokens = c.Login.TokenSource(tokenClient)
			return
		}
		o := c.OAuth2
		if o == nil {
			return
		}
		cfg := &clientcredentials.Config{
			ClientID:     o.ClientID,
			ClientSecret: o.ClientSecret,
			TokenURL:     o.TokenURL,
			Scopes:       append([]string(nil), o.Scopes...),
		}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, tokenClient)
		c.tokens = cfg.TokenSource(ctx) // caches the token until it expires
	})
	return c.tokens
}

// registeredHosts is c.Hosts parsed (Validate checked them); nil when c
// names none.
func (c *Credentials) registeredHosts() hostSet {
	var set hostSet
	for _, h := range c.Hosts {
		if p, err := parseHostPattern(h); err == nil {
			set = append(set, p)
		}
	}
	return set
}

// plainClient is the client without credentials.
var plainClient = &http.Client{}

// PlainClient returns the HTTP client without credentials (no overall
// timeout either).
func PlainClient() *http.Client { return plainClient }

// credentialTransport adds a snapshot of Credentials to each request.
type credentialTransport struct {
	base http.RoundTripper
	// hosts are the only hosts the credentials go to; nil: any (the CLI
	// with credentials that name no hosts).
	hosts hostSet

	apiKeyIn, apiKeyName, apiKey string
	bearer                       string
	basicUser, basicPassword     string
	hasBasic                     bool
	tokens                       oauth2.TokenSource
	tokenURL                     string
}

func newCredentialTransport(c *Credentials, base http.RoundTripper, tokens oauth2.TokenSource, hosts hostSet) *credentialTransport {
	t := &credentialTransport{base: base, bearer: c.Bearer, hosts: hosts}
	if k := c.APIKey; k != nil {
		t.apiKeyIn, t.apiKeyName = k.location()
		t.apiKey = k.Value
	}
	if b := c.Basic; b != nil {
		t.hasBasic, t.basicUser, t.basicPassword = true, b.Username, b.Password
	}
	if o := c.OAuth2; o != nil {
		t.tokens = tokens
		t.tokenURL = redactURL(o.TokenURL)
	}
	if c.Login != nil {
		t.tokens = tokens
		t.tokenURL = redactURL(c.Login.TokenURL())
	}
	return t
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !credentialsFollow(req) {
		return t.base.RoundTrip(req)
	}
	if t.hosts != nil && !t.hosts.match(req.URL) {
		// Not sent without the credentials either: the call would fail
		// anyway, and the error says why.
		closeBody(req)
		return nil, fmt.Errorf("%w: %s", ErrCredentialsHost, req.URL.Host)
	}
	var bearer string
	if t.tokens != nil {
		tok, err := t.tokens.Token()
		if err != nil {
			closeBody(req)
			return nil, fmt.Errorf("oauth2 token from %s: %w", t.tokenURL, err)
		}
		if tok.Type() != "Bearer" {
			closeBody(req)
			return nil, fmt.Errorf("oauth2 token from %s: token type %q is not supported (only Bearer)", t.tokenURL, tok.TokenType)
		}
		bearer = tok.AccessToken
	}
	req = req.Clone(req.Context())
	switch t.apiKeyIn {
	case InHeader:
		req.Header.Set(t.apiKeyName, t.apiKey)
	case InQuery:
		q := req.URL.Query()
		q.Set(t.apiKeyName, t.apiKey)
		req.URL.RawQuery = q.Encode()
	case InCookie:
		req.AddCookie(&http.Cookie{Name: t.apiKeyName, Value: t.apiKey})
	}
	if t.hasBasic {
		req.SetBasicAuth(t.basicUser, t.basicPassword)
	}
	if t.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+t.bearer)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return t.base.RoundTrip(req)
}

// credentialsFollow reports whether the credentials go with req. They go
// with every request the caller makes; on a redirect the client follows,
// only to the same host or one of its subdomains, and never from https down
// to http (as net/http does for the Authorization and Cookie headers).
func credentialsFollow(req *http.Request) bool {
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	if first == req {
		return true
	}
	if first.URL.Scheme == "https" && req.URL.Scheme != "https" {
		return false
	}
	if req.URL.Host == first.URL.Host {
		return true
	}
	return strings.HasSuffix(req.URL.Hostname(), "."+first.URL.Hostname()) && req.URL.Port() == first.URL.Port()
}

// closeBody closes the body of a request RoundTrip will not send, as the
// RoundTripper contract asks.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// failingTransport fails every request with err, sending nothing.
type failingTransport struct{ err error }

func (t failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	closeBody(req)
	return nil, t.err
}

// String names the schemes of c and where they go, never a secret: e.g.
// "apiKey(query api_key), oauth2(client a2aflow at https://idp/token, scopes a b)".
func (c *Credentials) String() string {
	if c == nil {
		return "none"
	}
	var parts []string
	if c.APIKey != nil {
		parts = append(parts, c.APIKey.String())
	}
	if c.Bearer != "" {
		parts = append(parts, "bearer")
	}
	if c.Basic != nil {
		parts = append(parts, c.Basic.String())
	}
	if c.OAuth2 != nil {
		parts = append(parts, c.OAuth2.String())
	}
	if c.Login != nil {
		parts = append(parts, c.Login.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// GoString keeps %#v from printing secrets.
func (c *Credentials) GoString() string { return "remote.Credentials{" + c.String() + "}" }

// Redacted is String.
func (c *Credentials) Redacted() string { return c.String() }

// String names where the key goes, not the key.
func (k APIKey) String() string {
	in, name := k.location()
	return "apiKey(" + in + " " + name + ")"
}

// GoString keeps %#v from printing the key.
func (k APIKey) GoString() string { return "remote." + k.String() }

// String names the user, not the password.
func (b Basic) String() string { return "basic(user " + b.Username + ")" }

// GoString keeps %#v from printing the password.
func (b Basic) GoString() string { return "remote." + b.String() }

// String names the client and the token endpoint, not the secret.
func (o OAuth2) String() string {
	s := "oauth2(client " + o.ClientID + " at " + redactURL(o.TokenURL)
	if len(o.Scopes) > 0 {
		s += ", scopes " + strings.Join(o.Scopes, " ")
	}
	return s + ")"
}

// GoString keeps %#v from printing the secret.
func (o OAuth2) GoString() string { return "remote." + o.String() }

// redactURL drops what may be secret in a URL: its user info and query.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "..."
	}
	u.Fragment = ""
	return u.String()
}

// validToken reports whether s is an RFC 9110 token: a valid header or
// cookie name.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s holds no control character but tab.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

// validCookieValue reports whether net/http sends s as a cookie value
// unchanged (RFC 6265 cookie-octets), so that it never rewrites, and logs, a
// secret.
func validCookieValue(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= 0x20 || b >= 0x7f || b == '"' || b == ',' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}
