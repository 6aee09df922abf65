package api

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

// permittedAuth has API keys alice (limited to echo) and bob (every
// agent), and HS256 JWTs limited by scopes and by an agents claim.
func permittedAuth(t *testing.T) *Authenticator {
	t.Helper()
	a, err := NewAuthenticator(t.Context(), AuthConfig{
		APIKeys:      map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789"},
		APIKeyAgents: map[string][]string{"alice": {"echo", " ", "echo"}},
		JWT: JWTConfig{HS256Secret: []byte(testSecret), Issuer: testIssuer, Audience: testAudience,
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
	a := permittedAuth(t)
	hs := func(edit func(jwt.MapClaims)) string {
		if edit == nil {
			edit = func(jwt.MapClaims) {}
		}
		return sign(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims("carol", edit))
	}
	tests := []struct {
		name string
		set  func(*http.Request)
		want []string // nil: every agent
	}{
		{"API key limited", apiKeyHeader("alice-key-0123456789"), []string{"echo"}},
		{"API key not listed", apiKeyHeader("bob-key-0123456789"), nil},
		{"JWT without scopes", bearer(hs(nil)), []string{}},
		{"JWT scope string", bearer(hs(func(c jwt.MapClaims) { c["scope"] = "openid a2aflow:agent:other profile a2aflow:agent:" })), []string{"other"}},
		{"JWT scp list", bearer(hs(func(c jwt.MapClaims) { c["scp"] = []any{"a2aflow:agent:echo", 7, "a2aflow:agent:other"} })), []string{"echo", "other"}},
		{"JWT scope wildcard", bearer(hs(func(c jwt.MapClaims) { c["scope"] = "a2aflow:agent:*" })), nil},
		{"JWT agents claim list", bearer(hs(func(c jwt.MapClaims) { c["agents"] = []any{"other"} })), []string{"other"}},
		{"JWT agents claim string", bearer(hs(func(c jwt.MapClaims) { c["agents"] = "echo, other" })), []string{"echo", "other"}},
		{"JWT agents claim wildcard", bearer(hs(func(c jwt.MapClaims) { c["agents"] = "*" })), nil},
		{"JWT scope and claim", bearer(hs(func(c jwt.MapClaims) { c["scope"] = "a2aflow:agent:echo"; c["agents"] = []any{"other"} })), []string{"echo", "other"}},
		{"JWT prefix elsewhere", bearer(hs(func(c jwt.MapClaims) { c["scope"] = "x:a2aflow:agent:echo" })), []string{}},
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
			JWT: JWTConfig{HS256Secret: []byte(testSecret)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []func(*http.Request){apiKeyHeader("k-0123456789"), bearer(hs(nil))} {
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
		"scope prefix with a space":    {JWT: JWTConfig{HS256Secret: []byte(testSecret), AgentScopePrefix: "a b:"}},
		"OpenID Connect URL not a URL": {JWT: JWTConfig{HS256Secret: []byte(testSecret), OpenIDConnectURL: "ftp://x"}},
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

// TestPermissionsGateEveryMethod: the handler every binding serves
// (JSON-RPC, HTTP+JSON, gRPC; 1.0 and 0.3) refuses each method of an agent
// the caller may not use with PermissionDenied before the service sees it,
// and lets a permitted caller through.
func TestPermissionsGateEveryMethod(t *testing.T) {
	seen := 0
	handler := gatedService{RequestHandler: countingHandler{seen: &seen}, agent: "other"}
	a, err := NewAuthenticator(t.Context(), AuthConfig{
		APIKeys:      map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789", "carol": "carol-key-0123456789"},
		APIKeyAgents: map[string][]string{"alice": {"echo"}, "carol": {"echo", "other"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	limited := callerContext(t, a, "alice-key-0123456789")
	calls := permissionCalls(handler)
	for name, call := range calls {
		err := call(limited)
		if !errors.Is(err, a2a.ErrUnauthorized) || !strings.Contains(err.Error(), "alice may not use agent other: its API key is limited to echo") {
			t.Errorf("%s of a caller limited to echo: %v, want PermissionDenied", name, err)
		}
	}
	if seen != 0 {
		t.Errorf("the service saw %d calls of a caller without permission", seen)
	}
	for _, ctx := range []context.Context{
		t.Context(), // authentication off
		callerContext(t, a, "bob-key-0123456789"),   // every agent
		callerContext(t, a, "carol-key-0123456789"), // echo and other
	} {
		for name, call := range calls {
			if err := call(ctx); err != nil {
				t.Errorf("%s of a permitted caller: %v", name, err)
			}
		}
	}
	if seen != 3*len(calls) {
		t.Errorf("the service saw %d calls of permitted callers, want %d", seen, 3*len(calls))
	}
}

// callerContext is the context of a request that a authenticated with the
// API key key, as the guard hands it to the handlers.
func callerContext(t *testing.T, a *Authenticator, key string) context.Context {
	t.Helper()
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
	c.Request.Header.Set(DefaultAPIKeyHeader, key)
	newGuard(guardConfig{Auth: a}).Authenticate(c)
	if _, ok := CallerOf(c.Request.Context()); !ok {
		t.Fatalf("API key %s: no caller", key)
	}
	return c.Request.Context()
}

// permissionCalls are the task methods of a2asrv.RequestHandler on h.
func permissionCalls(h a2asrv.RequestHandler) map[string]func(context.Context) error {
	first := func(seq iter.Seq2[a2a.Event, error]) error {
		var err error
		for _, e := range seq {
			err = e
			break
		}
		return err
	}
	return map[string]func(context.Context) error{
		"SendMessage": func(ctx context.Context) error { _, err := h.SendMessage(ctx, &a2a.SendMessageRequest{}); return err },
		"SendStreamingMessage": func(ctx context.Context) error {
			return first(h.SendStreamingMessage(ctx, &a2a.SendMessageRequest{}))
		},
		"GetTask":    func(ctx context.Context) error { _, err := h.GetTask(ctx, &a2a.GetTaskRequest{}); return err },
		"ListTasks":  func(ctx context.Context) error { _, err := h.ListTasks(ctx, &a2a.ListTasksRequest{}); return err },
		"CancelTask": func(ctx context.Context) error { _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{}); return err },
		"SubscribeToTask": func(ctx context.Context) error {
			return first(h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{}))
		},
		"CreateTaskPushConfig": func(ctx context.Context) error { _, err := h.CreateTaskPushConfig(ctx, &a2a.PushConfig{}); return err },
		"GetTaskPushConfig": func(ctx context.Context) error {
			_, err := h.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{})
			return err
		},
		"ListTaskPushConfigs": func(ctx context.Context) error {
			_, err := h.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{})
			return err
		},
		"DeleteTaskPushConfig": func(ctx context.Context) error {
			return h.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{})
		},
	}
}

// countingHandler answers every task method and counts the calls.
type countingHandler struct {
	a2asrv.RequestHandler
	seen *int
}

func (h countingHandler) SendMessage(context.Context, *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	*h.seen++
	return &a2a.Task{}, nil
}
func (h countingHandler) SendStreamingMessage(context.Context, *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	*h.seen++
	return func(func(a2a.Event, error) bool) {}
}
func (h countingHandler) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	*h.seen++
	return &a2a.Task{}, nil
}
func (h countingHandler) ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	*h.seen++
	return &a2a.ListTasksResponse{}, nil
}
func (h countingHandler) CancelTask(context.Context, *a2a.CancelTaskRequest) (*a2a.Task, error) {
	*h.seen++
	return &a2a.Task{}, nil
}
func (h countingHandler) SubscribeToTask(context.Context, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	*h.seen++
	return func(func(a2a.Event, error) bool) {}
}
func (h countingHandler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	*h.seen++
	return &a2a.PushConfig{}, nil
}
func (h countingHandler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	*h.seen++
	return &a2a.PushConfig{}, nil
}
func (h countingHandler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	*h.seen++
	return &a2a.ListTaskPushConfigResponse{}, nil
}
func (h countingHandler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	*h.seen++
	return nil
}

// TestPermissionsOverHTTP: over JSON-RPC and HTTP+JSON, 1.0 and 0.3, a
// caller limited to echo gets PermissionDenied (-31403, HTTP 403) from
// the other agent's endpoint, including the HTTP+JSON subscription
// refused before the handler and the extended card; the extended card of
// echo names the agents the caller may use.
func TestPermissionsOverHTTP(t *testing.T) {
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: permittedAuth(t)}).Handler())
	t.Cleanup(srv.Close)
	alice := apiKeyHeader("alice-key-0123456789")
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
		if ext.URI == CallerExtensionURI {
			agents = ext.Params["agents"]
		}
	}
	if diff := cmp.Diff([]any{"echo"}, agents); diff != "" {
		t.Errorf("caller extension's agents (-want +got):\n%s", diff)
	}
	// bob may use every agent: his card names none.
	_, card = extendedCardCall(t, srv.URL, "/agents/other", apiKeyHeader("bob-key-0123456789"))
	for _, ext := range card.Capabilities.Extensions {
		if _, ok := ext.Params["agents"]; ext.URI == CallerExtensionURI && ok {
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
		oidc, ok := card.SecuritySchemes[OpenIDConnectSchemeName].(a2a.OpenIDConnectSecurityScheme)
		if !ok || oidc.OpenIDConnectURL != testIssuer+"/.well-known/openid-configuration" {
			t.Errorf("%s: openIdConnect scheme = %#v", agent, card.SecuritySchemes[OpenIDConnectSchemeName])
		}
		want := a2a.SecurityRequirementsOptions{{APIKeySchemeName: {}}, {BearerSchemeName: {}},
			{OpenIDConnectSchemeName: {DefaultAgentScopePrefix + agent}}}
		if diff := cmp.Diff(want, card.SecurityRequirements); diff != "" {
			t.Errorf("%s: security requirements (-want +got):\n%s", agent, diff)
		}
		bearerScheme, _ := card.SecuritySchemes[BearerSchemeName].(a2a.HTTPAuthSecurityScheme)
		if !strings.Contains(bearerScheme.Description, "scope "+DefaultAgentScopePrefix+agent) {
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
