package oauthlogin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coreos/go-oidc/v3/oidc"
)

// Provider is the authorization server of a login: its endpoints and the
// scopes to ask for.
type Provider struct {
	// AuthURL is the authorization endpoint (authorization code flow);
	// DeviceURL the device authorization endpoint (device code flow); either
	// may be empty, not both.
	AuthURL   string
	DeviceURL string
	// TokenURL is the token endpoint; required.
	TokenURL string
	// RevocationURL is the revocation endpoint (RFC 7009), when known.
	RevocationURL string
	// Scopes are the scopes to ask for.
	Scopes []string
	// Scheme is the card's security scheme the provider came from ("" when
	// given by --issuer).
	Scheme string
}

// ErrNoOAuth: the card declares no scheme a user can log in with.
var ErrNoOAuth = errors.New("the agent's card declares no oauth2 authorizationCode or deviceCode flow and no openIdConnect scheme")

// maxMetadata bounds a discovery document.
const maxMetadata = 1 << 20

// FromCard finds the authorization server card asks users to log in with:
// its oauth2 schemes' authorizationCode and deviceCode flows (endpoints
// completed from the scheme's oauth2MetadataUrl, RFC 8414, when it has
// one), else its openIdConnect scheme's discovery document, fetched with
// hc. The scopes are those the card's security requirements name for the
// scheme, else every scope the flow lists; an OpenID Connect login asks for
// openid and offline_access (a refresh token) too. Schemes are tried in the
// order of the card's security requirements, then by name.
func FromCard(ctx context.Context, hc *http.Client, card *a2a.AgentCard) (Provider, error) {
	names := schemeOrder(card)
	required := map[a2a.SecuritySchemeName][]string{}
	for _, req := range card.SecurityRequirements {
		for name, scopes := range req {
			required[name] = append(required[name], scopes...)
		}
	}
	for _, name := range names {
		switch s := card.SecuritySchemes[name].(type) {
		case a2a.OAuth2SecurityScheme:
			p := Provider{Scheme: string(name)}
			var flowScopes map[string]string
			switch f := s.Flows.(type) {
			case a2a.AuthorizationCodeOAuthFlow:
				p.AuthURL, p.TokenURL, flowScopes = f.AuthorizationURL, f.TokenURL, f.Scopes
			case a2a.DeviceCodeOAuthFlow:
				p.DeviceURL, p.TokenURL, flowScopes = f.DeviceAuthorizationURL, f.TokenURL, f.Scopes
			default:
				continue // client credentials, implicit, password: not a user's login
			}
			if s.Oauth2MetadataURL != "" {
				md, err := fetchMetadata(ctx, hc, s.Oauth2MetadataURL)
				if err != nil {
					return Provider{}, fmt.Errorf("security scheme %s: %w", name, err)
				}
				p.fill(md)
			}
			p.Scopes = scopesOf(required[name], flowScopes)
			// Another oauth2 scheme of the card may offer the other flow
			// of the same token endpoint.
			for _, other := range names {
				if o, ok := card.SecuritySchemes[other].(a2a.OAuth2SecurityScheme); ok && other != name {
					switch f := o.Flows.(type) {
					case a2a.DeviceCodeOAuthFlow:
						if p.DeviceURL == "" && f.TokenURL == p.TokenURL {
							p.DeviceURL = f.DeviceAuthorizationURL
						}
					case a2a.AuthorizationCodeOAuthFlow:
						if p.AuthURL == "" && f.TokenURL == p.TokenURL {
							p.AuthURL = f.AuthorizationURL
						}
					}
				}
			}
			return p, p.validate()
		case a2a.OpenIDConnectSecurityScheme:
			p, err := Discover(ctx, hc, s.OpenIDConnectURL)
			if err != nil {
				return Provider{}, fmt.Errorf("security scheme %s: %w", name, err)
			}
			p.Scheme = string(name)
			p.Scopes = oidcScopes(required[name])
			return p, nil
		}
	}
	return Provider{}, ErrNoOAuth
}

// Discover reads an OpenID Connect discovery document with
// github.com/coreos/go-oidc (which checks that the document names the
// issuer it was fetched for): issuerOrURL is the issuer, or its
// /.well-known/openid-configuration URL. The login asks for the scopes
// openid and offline_access.
func Discover(ctx context.Context, hc *http.Client, issuerOrURL string) (Provider, error) {
	issuer := strings.TrimSuffix(issuerOrURL, "/.well-known/openid-configuration")
	op, err := oidc.NewProvider(oidc.ClientContext(ctx, hc), issuer)
	if err != nil {
		return Provider{}, fmt.Errorf("OpenID Connect discovery of %s: %w", issuer, err)
	}
	var md metadata
	if err := op.Claims(&md); err != nil {
		return Provider{}, fmt.Errorf("OpenID Connect discovery of %s: %w", issuer, err)
	}
	ep := op.Endpoint()
	p := Provider{AuthURL: ep.AuthURL, TokenURL: ep.TokenURL, DeviceURL: ep.DeviceAuthURL}
	p.fill(md) // the revocation endpoint
	p.Scopes = oidcScopes(nil)
	return p, p.validate()
}

// metadata is what a2aflow reads of RFC 8414 / OpenID discovery.
type metadata struct {
	AuthorizationEndpoint       string `json:"authorization_endpoint"`
	TokenEndpoint               string `json:"token_endpoint"`
	DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint"`
	RevocationEndpoint          string `json:"revocation_endpoint"`
}

func (p *Provider) fill(md metadata) {
	if p.AuthURL == "" {
		p.AuthURL = md.AuthorizationEndpoint
	}
	if p.TokenURL == "" {
		p.TokenURL = md.TokenEndpoint
	}
	if p.DeviceURL == "" {
		p.DeviceURL = md.DeviceAuthorizationEndpoint
	}
	if p.RevocationURL == "" {
		p.RevocationURL = md.RevocationEndpoint
	}
}

func (p Provider) validate() error {
	for _, e := range []struct{ name, u string }{{"token endpoint", p.TokenURL}, {"authorization endpoint", p.AuthURL}, {"device authorization endpoint", p.DeviceURL}} {
		if e.u == "" {
			continue
		}
		u, err := url.Parse(e.u)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("the %s %q is not an http(s) URL", e.name, e.u)
		}
	}
	switch {
	case p.TokenURL == "":
		return errors.New("the authorization server names no token endpoint")
	case p.AuthURL == "" && p.DeviceURL == "":
		return errors.New("the authorization server names neither an authorization nor a device authorization endpoint")
	}
	return nil
}

func fetchMetadata(ctx context.Context, hc *http.Client, u string) (metadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return metadata{}, fmt.Errorf("discovery URL %q: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return metadata{}, fmt.Errorf("discovery document at %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return metadata{}, fmt.Errorf("discovery document at %s: HTTP %d", u, resp.StatusCode)
	}
	var md metadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadata)).Decode(&md); err != nil {
		return metadata{}, fmt.Errorf("discovery document at %s: %w", u, err)
	}
	return md, nil
}

// schemeOrder lists the card's schemes: those its requirements name first,
// in their order, then the others by name.
func schemeOrder(card *a2a.AgentCard) []a2a.SecuritySchemeName {
	var out []a2a.SecuritySchemeName
	seen := map[a2a.SecuritySchemeName]bool{}
	for _, req := range card.SecurityRequirements {
		var names []a2a.SecuritySchemeName
		for n := range req {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
		for _, n := range names {
			if _, ok := card.SecuritySchemes[n]; ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	var rest []a2a.SecuritySchemeName
	for n := range card.SecuritySchemes {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
	return append(out, rest...)
}

func scopesOf(required []string, flow map[string]string) []string {
	if len(required) > 0 {
		return dedupe(required)
	}
	var out []string
	for s := range flow {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func oidcScopes(required []string) []string {
	return dedupe(append([]string{"openid", "offline_access"}, required...))
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
