package guard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2aflow/a2aflow/internal/api/guard/guardtest"
)

// limitedAuth has API keys alice (limited to echo) and bob (every agent),
// and HS256 JWTs limited by scopes and by an agents claim.
func limitedAuth(t *testing.T) *Authenticator {
	t.Helper()
	a, err := NewAuthenticator(t.Context(), AuthConfig{
		APIKeys:      map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789"},
		APIKeyAgents: map[string][]string{"alice": {"echo", " ", "echo"}},
		JWT: JWTConfig{HS256Secret: []byte(guardtest.Secret), Issuer: guardtest.Issuer, Audience: guardtest.Audience,
			AgentScopePrefix: DefaultAgentScopePrefix, AgentsClaim: "agents"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CheckAgents([]string{"echo", "other"}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPermissionsOfCallers: the agents an API key or a token may use.
func TestPermissionsOfCallers(t *testing.T) {
	a := limitedAuth(t)
	hs := func(edit func(jwt.MapClaims)) string {
		if edit == nil {
			edit = func(jwt.MapClaims) {}
		}
		return guardtest.Sign(t, jwt.SigningMethodHS256, "", []byte(guardtest.Secret), guardtest.Claims("carol", edit))
	}
	tests := []struct {
		name string
		set  func(*http.Request)
		want []string // nil: every agent
	}{
		{"API key limited", guardtest.APIKey("alice-key-0123456789"), []string{"echo"}},
		{"API key not listed", guardtest.APIKey("bob-key-0123456789"), nil},
		{"JWT without scopes", guardtest.Bearer(hs(nil)), []string{}},
		{"JWT scope string", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["scope"] = "openid a2aflow:agent:other profile a2aflow:agent:" })), []string{"other"}},
		{"JWT scp list", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["scp"] = []any{"a2aflow:agent:echo", 7, "a2aflow:agent:other"} })), []string{"echo", "other"}},
		{"JWT scope wildcard", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["scope"] = "a2aflow:agent:*" })), nil},
		{"JWT agents claim list", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["agents"] = []any{"other"} })), []string{"other"}},
		{"JWT agents claim string", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["agents"] = "echo, other" })), []string{"echo", "other"}},
		{"JWT agents claim wildcard", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["agents"] = "*" })), nil},
		{"JWT scope and claim", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["scope"] = "a2aflow:agent:echo"; c["agents"] = []any{"other"} })), []string{"echo", "other"}},
		{"JWT prefix elsewhere", guardtest.Bearer(hs(func(c jwt.MapClaims) { c["scope"] = "x:a2aflow:agent:echo" })), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			tt.set(r)
			id, err := a.Authenticate(r)
			if err != nil {
				t.Fatal(err)
			}
			if (tt.want == nil) != (id.Agents == nil) || !slices.Equal(tt.want, id.Agents) {
				t.Errorf("agents = %#v, want %#v", id.Agents, tt.want)
			}
		})
	}
	t.Run("no permissions configured: every agent", func(t *testing.T) {
		open, err := NewAuthenticator(t.Context(), AuthConfig{APIKeys: map[string]string{"alice": "k-0123456789"},
			JWT: JWTConfig{HS256Secret: []byte(guardtest.Secret)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []func(*http.Request){guardtest.APIKey("k-0123456789"), guardtest.Bearer(hs(nil))} {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			set(r)
			if id, err := open.Authenticate(r); err != nil || id.Agents != nil {
				t.Errorf("agents = %#v (%v), want nil: every agent", id.Agents, err)
			}
		}
	})
}

func TestPermissionsConfigErrors(t *testing.T) {
	keys := map[string]string{"alice": "alice-key-0123456789"}
	for name, cfg := range map[string]AuthConfig{
		"agents of no key":             {APIKeys: keys, APIKeyAgents: map[string][]string{"bob": {"echo"}}},
		"empty agents":                 {APIKeys: keys, APIKeyAgents: map[string][]string{"alice": {" "}}},
		"scope prefix without JWTs":    {APIKeys: keys, JWT: JWTConfig{AgentScopePrefix: DefaultAgentScopePrefix}},
		"agents claim without JWTs":    {APIKeys: keys, JWT: JWTConfig{AgentsClaim: "agents"}},
		"scope prefix with a space":    {JWT: JWTConfig{HS256Secret: []byte(guardtest.Secret), AgentScopePrefix: "a b:"}},
		"OpenID Connect URL not a URL": {JWT: JWTConfig{HS256Secret: []byte(guardtest.Secret), OpenIDConnectURL: "ftp://x"}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewAuthenticator(t.Context(), cfg); !errors.Is(err, ErrAuthConfig) {
				t.Errorf("err = %v, want ErrAuthConfig", err)
			}
		})
	}
	a, err := NewAuthenticator(t.Context(), AuthConfig{APIKeys: keys, APIKeyAgents: map[string][]string{"alice": {"echo", "ekho"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CheckAgents([]string{"echo", "other"}); !errors.Is(err, ErrAuthConfig) || !strings.Contains(err.Error(), `"ekho"`) {
		t.Errorf("CheckAgents = %v, want the unknown agent ekho", err)
	}
}
