package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/api/a2abinding"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/guard/guardtest"
)

// permittedAuth has API keys alice (limited to echo) and bob (every
// agent), and HS256 JWTs limited by scopes and by an agents claim.
func permittedAuth(t *testing.T) *guard.Authenticator {
	t.Helper()
	a, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{
		APIKeys:      map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789"},
		APIKeyAgents: map[string][]string{"alice": {"echo", " ", "echo"}},
		JWT: guard.JWTConfig{HS256Secret: []byte(guardtest.Secret), Issuer: guardtest.Issuer, Audience: guardtest.Audience,
			AgentScopePrefix: guard.DefaultAgentScopePrefix, AgentsClaim: "agents"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CheckAgents([]string{"echo", "other"}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPermissionsOverHTTP: over JSON-RPC and HTTP+JSON, 1.0 and 0.3, a
// caller limited to echo gets PermissionDenied (-31403, HTTP 403) from
// the other agent's endpoint, including the HTTP+JSON subscription
// refused before the handler and the extended card; the extended card of
// echo names the agents the caller may use.
func TestPermissionsOverHTTP(t *testing.T) {
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: permittedAuth(t)}).Handler())
	t.Cleanup(srv.Close)
	alice := guardtest.APIKey("alice-key-0123456789")
	do := func(method, path, version, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", version)
		alice(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	rpcBodies := map[string]string{
		"1.0 SendMessage":     `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		"1.0 GetTask":         `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}`,
		"1.0 ListTasks":       `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`,
		"1.0 CancelTask":      `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"t1"}}`,
		"1.0 ListPush":        `{"jsonrpc":"2.0","id":1,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"t1"}}`,
		"1.0 GetExtendedCard": `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`,
		"0.3 message/send":    `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
		"0.3 tasks/get":       `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}`,
		"0.3 tasks/cancel":    `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"t1"}}`,
		"0.3 extended card":   `{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard","params":{}}`,
	}
	for name, body := range rpcBodies {
		version, _, _ := strings.Cut(name, " ")
		status, got := do(http.MethodPost, "/agents/other", version, body)
		if status != http.StatusOK || !strings.Contains(got, `"code":-31403`) || !strings.Contains(got, "alice may not use agent other") {
			t.Errorf("JSON-RPC %s at /agents/other: %d %s, want -31403", name, status, got)
		}
	}
	for _, c := range []struct{ method, path, version, body string }{
		{http.MethodPost, "/agents/other/message:send", "1.0", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
		{http.MethodGet, "/agents/other/tasks/t1", "1.0", ""},
		{http.MethodGet, "/agents/other/tasks", "1.0", ""},
		{http.MethodPost, "/agents/other/tasks/t1:cancel", "1.0", "{}"},
		{http.MethodGet, "/agents/other/tasks/t1:subscribe", "1.0", ""},
		{http.MethodGet, "/agents/other/tasks/t1/pushNotificationConfigs", "1.0", ""},
		{http.MethodDelete, "/agents/other/tasks/t1/pushNotificationConfigs/c1", "1.0", ""},
		{http.MethodGet, "/agents/other/extendedAgentCard", "1.0", ""},
		{http.MethodGet, "/agents/other/v1/tasks/t1", "0.3", ""},
		{http.MethodGet, "/agents/other/v1/tasks/t1:subscribe", "0.3", ""},
		{http.MethodGet, "/agents/other/v1/card", "0.3", ""},
	} {
		status, got := do(c.method, c.path, c.version, c.body)
		// A 0.3 subscription's refusal is its stream's first event, as
		// for a task that does not exist.
		inStream := status == http.StatusOK && strings.Contains(got, `data: {"error":{"code":403,"status":"PERMISSION_DENIED"`)
		if (status != http.StatusForbidden && !inStream) || !strings.Contains(got, "alice may not use agent other") {
			t.Errorf("%s %s (%s): %d %s, want 403", c.method, c.path, c.version, status, got)
		}
	}

	// The extended card of echo, which alice may use, names her agents.
	_, card := extendedCardCall(t, srv.URL, "/agents/echo", alice)
	if card == nil {
		t.Fatal("no extended card of echo for alice")
	}
	var agents any
	for _, ext := range card.Capabilities.Extensions {
		if ext.URI == a2abinding.CallerExtensionURI {
			agents = ext.Params["agents"]
		}
	}
	if diff := cmp.Diff([]any{"echo"}, agents); diff != "" {
		t.Errorf("caller extension's agents (-want +got):\n%s", diff)
	}
	// bob may use every agent: his card names none.
	_, card = extendedCardCall(t, srv.URL, "/agents/other", guardtest.APIKey("bob-key-0123456789"))
	for _, ext := range card.Capabilities.Extensions {
		if _, ok := ext.Params["agents"]; ext.URI == a2abinding.CallerExtensionURI && ok {
			t.Errorf("bob's extended card names agents %v; he may use all", ext.Params["agents"])
		}
	}
}

// TestPermissionsInCards: with a scope prefix and an issuer, each agent's
// card requires its own scope under the openIdConnect scheme, and the
// bearer scheme says which scope a token needs.
func TestPermissionsInCards(t *testing.T) {
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: permittedAuth(t)}).Handler())
	t.Cleanup(srv.Close)
	for agent, path := range map[string]string{"echo": "/.well-known/agent-card.json", "other": "/agents/other/.well-known/agent-card.json"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		card, err := a2aCardOf(resp)
		if err != nil {
			t.Fatal(err)
		}
		oidc, ok := card.SecuritySchemes[guard.OpenIDConnectSchemeName].(a2a.OpenIDConnectSecurityScheme)
		if !ok || oidc.OpenIDConnectURL != guardtest.Issuer+"/.well-known/openid-configuration" {
			t.Errorf("%s: openIdConnect scheme = %#v", agent, card.SecuritySchemes[guard.OpenIDConnectSchemeName])
		}
		want := a2a.SecurityRequirementsOptions{{guard.APIKeySchemeName: {}}, {guard.BearerSchemeName: {}},
			{guard.OpenIDConnectSchemeName: {guard.DefaultAgentScopePrefix + agent}}}
		if diff := cmp.Diff(want, card.SecurityRequirements); diff != "" {
			t.Errorf("%s: security requirements (-want +got):\n%s", agent, diff)
		}
		bearerScheme, _ := card.SecuritySchemes[guard.BearerSchemeName].(a2a.HTTPAuthSecurityScheme)
		if !strings.Contains(bearerScheme.Description, "scope "+guard.DefaultAgentScopePrefix+agent) {
			t.Errorf("%s: bearer description %q does not name the scope", agent, bearerScheme.Description)
		}
	}
}

// a2aCardOf reads the card resp carries with a2a-go's 1.0 parser.
func a2aCardOf(resp *http.Response) (*a2a.AgentCard, error) {
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return agentcard.DefaultCardParser(raw)
}
