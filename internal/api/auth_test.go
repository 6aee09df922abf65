package api

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api/a2abinding"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/guard/guardtest"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/workflows"
)

// healthyTemporal answers CheckHealth; the routes under test call nothing else.
type healthyTemporal struct{ client.Client }

func (healthyTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

func testRegistry(t *testing.T) *engine.Registry {
	t.Helper()
	noop := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(
		&workflows.Agent{Name: "echo", Description: "Echoes.", Handle: noop},
		&workflows.Agent{Name: "other", Description: "Another agent.", Handle: noop},
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// newTestAuth configures every scheme: two API keys, HS256, an RSA JWKS URL
// and a P-256 JWKS file, with issuer and audience checks.
func newTestAuth(t *testing.T, k *guardtest.Keys) *guard.Authenticator {
	t.Helper()
	a, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{
		APIKeys: map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789"},
		JWT: guard.JWTConfig{
			HS256Secret: []byte(guardtest.Secret),
			JWKSURL:     k.JWKSURL,
			JWKSFile:    k.JWKSFile,
			Issuer:      guardtest.Issuer,
			Audience:    guardtest.Audience,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// rpcResponse is a JSON-RPC response whose result is an agent card.
type rpcResponse struct {
	Result *a2a.AgentCard `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// outcome is what a request to a guarded endpoint came to.
type outcome struct {
	Status     int
	Principal  string   // from the extended card's caller extension
	Scheme     string   // idem
	Code       int      // JSON-RPC error code
	Reason     string   // the error message without its fixed prefix
	Challenges []string // WWW-Authenticate
}

// extendedCardCall asks for the extended card over JSON-RPC at path, with
// the headers set by setAuth.
func extendedCardCall(t *testing.T, srvURL, path string, setAuth func(*http.Request)) (outcome, *a2a.AgentCard) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`
	req, _ := http.NewRequest(http.MethodPost, srvURL+path, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	if setAuth != nil {
		setAuth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rpc rpcResponse
	if err := json.NewDecoder(resp.Body).Decode(&rpc); err != nil {
		t.Fatalf("decode response (status %d): %v", resp.StatusCode, err)
	}
	got := outcome{Status: resp.StatusCode, Challenges: resp.Header.Values("WWW-Authenticate")}
	if rpc.Error != nil {
		got.Code = rpc.Error.Code
		got.Reason = strings.TrimPrefix(rpc.Error.Message, "authentication required: ")
	}
	if rpc.Result != nil {
		for _, ext := range rpc.Result.Capabilities.Extensions {
			if ext.URI == a2abinding.CallerExtensionURI {
				got.Principal, _ = ext.Params["principal"].(string)
				got.Scheme, _ = ext.Params["scheme"].(string)
			}
		}
	}
	return got, rpc.Result
}

const (
	plainBearer = `Bearer realm="a2aflow"`
	apiKeyChall = `APIKey realm="a2aflow", header="X-API-Key"`
)

func invalidToken(reason string) string {
	return `Bearer realm="a2aflow", error="invalid_token", error_description="` + reason + `"`
}

func TestAuthMiddleware(t *testing.T) {
	k := guardtest.NewKeys(t)
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: newTestAuth(t, k)}).Handler())
	t.Cleanup(srv.Close)

	hs := func(c jwt.MapClaims) string {
		return guardtest.Sign(t, jwt.SigningMethodHS256, "", []byte(guardtest.Secret), c)
	}
	rs := func(c jwt.MapClaims) string { return guardtest.Sign(t, jwt.SigningMethodRS256, "rsa-1", k.RSA, c) }
	es := func(c jwt.MapClaims) string { return guardtest.Sign(t, jwt.SigningMethodES256, "ec-1", k.EC, c) }
	expired := func(c jwt.MapClaims) {
		c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
		c["exp"] = time.Now().Add(-time.Hour).Unix()
	}
	unauthorized := func(reason string, challenges ...string) outcome {
		return outcome{Status: http.StatusUnauthorized, Code: -31401, Reason: reason, Challenges: challenges}
	}
	badToken := func(reason string) outcome { return unauthorized(reason, invalidToken(reason), apiKeyChall) }
	rsaPublicDER, err := x509.MarshalPKIXPublicKey(&k.RSA.PublicKey)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		setAuth func(*http.Request)
		want    outcome
	}{
		{"no credentials", nil,
			unauthorized("the agent card's securitySchemes list the accepted credentials", plainBearer, apiKeyChall)},
		{"wrong API key", guardtest.APIKey("mallory-key"), unauthorized("unknown API key", plainBearer, apiKeyChall)},
		{"right API key", guardtest.APIKey("alice-key-0123456789"), outcome{Status: 200, Principal: "alice", Scheme: "apiKey"}},
		{"another right API key", guardtest.APIKey("bob-key-0123456789"), outcome{Status: 200, Principal: "bob", Scheme: "apiKey"}},
		{"API key wins over a bearer token", func(r *http.Request) {
			guardtest.APIKey("bob-key-0123456789")(r)
			guardtest.Bearer(hs(guardtest.Claims("carol")))(r)
		}, outcome{Status: 200, Principal: "bob", Scheme: "apiKey"}},
		{"HS256 ok", guardtest.Bearer(hs(guardtest.Claims("carol"))), outcome{Status: 200, Principal: "carol", Scheme: "bearer"}},
		{"HS256 expired", guardtest.Bearer(hs(guardtest.Claims("carol", expired))), badToken("the token is expired")},
		{"HS256 wrong signature", guardtest.Bearer(guardtest.Sign(t, jwt.SigningMethodHS256, "", []byte(guardtest.Secret+"-not"), guardtest.Claims("carol"))),
			badToken("the token signature is invalid")},
		{"HS256 wrong issuer", guardtest.Bearer(hs(guardtest.Claims("carol", func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }))),
			badToken("the token has the wrong issuer")},
		{"HS256 wrong audience", guardtest.Bearer(hs(guardtest.Claims("carol", func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} }))),
			badToken("the token has the wrong audience")},
		{"audience among several", guardtest.Bearer(hs(guardtest.Claims("carol", func(c jwt.MapClaims) { c["aud"] = []string{"x", guardtest.Audience} }))),
			outcome{Status: 200, Principal: "carol", Scheme: "bearer"}},
		{"no exp", guardtest.Bearer(hs(guardtest.Claims("carol", func(c jwt.MapClaims) { delete(c, "exp") }))),
			badToken("the token lacks the exp claim")},
		{"not valid yet", guardtest.Bearer(hs(guardtest.Claims("carol", func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() }))),
			badToken("the token is not valid yet")},
		{"no sub", guardtest.Bearer(hs(guardtest.Claims("carol", func(c jwt.MapClaims) { delete(c, "sub") }))),
			badToken("the token has no sub claim naming the caller")},
		{"malformed", guardtest.Bearer("not.a.jwt"), badToken("the token is malformed")},
		{"alg none", guardtest.Bearer(guardtest.Sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, guardtest.Claims("carol"))),
			badToken("the token signature is invalid")},
		{"HS256 keyed with the RSA public key", guardtest.Bearer(guardtest.Sign(t, jwt.SigningMethodHS256, "rsa-1", rsaPublicDER, guardtest.Claims("carol"))),
			badToken("the token signature is invalid")},
		{"Basic scheme", func(r *http.Request) { r.SetBasicAuth("alice", "alice-key-0123456789") },
			badToken("the Authorization header must be Bearer followed by a JWT")},
		{"RS256 via JWKS URL", guardtest.Bearer(rs(guardtest.Claims("dave"))), outcome{Status: 200, Principal: "dave", Scheme: "bearer"}},
		{"RS256 expired", guardtest.Bearer(rs(guardtest.Claims("dave", expired))), badToken("the token is expired")},
		{"RS256 signed by another key", guardtest.Bearer(guardtest.Sign(t, jwt.SigningMethodRS256, "rsa-1", k.RSAOther, guardtest.Claims("dave"))),
			badToken("the token signature is invalid")},
		{"RS256 unknown kid", guardtest.Bearer(guardtest.Sign(t, jwt.SigningMethodRS256, "rsa-9", k.RSAOther, guardtest.Claims("dave"))),
			badToken("the token is signed with an unknown key or algorithm")},
		{"ES256 via JWKS file", guardtest.Bearer(es(guardtest.Claims("erin"))), outcome{Status: 200, Principal: "erin", Scheme: "bearer"}},
		{"ES256 without aud", guardtest.Bearer(es(guardtest.Claims("erin", func(c jwt.MapClaims) { delete(c, "aud") }))),
			badToken("the token lacks the aud claim")},
		{"ES256 wrong issuer", guardtest.Bearer(es(guardtest.Claims("erin", func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }))),
			badToken("the token has the wrong issuer")},
		{"ES256 claiming the RSA kid", guardtest.Bearer(guardtest.Sign(t, jwt.SigningMethodES256, "rsa-1", k.EC, guardtest.Claims("erin"))),
			badToken("the token is signed with an unknown key or algorithm")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := extendedCardCall(t, srv.URL, "/", tt.setAuth)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthCustomClaimAndHeader(t *testing.T) {
	a, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{
		APIKeys:      map[string]string{"svc": "svc-key"},
		APIKeyHeader: "X-Agent-Key",
		JWT:          guard.JWTConfig{HS256Secret: []byte(guardtest.Secret), PrincipalClaim: "email"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: a}).Handler())
	t.Cleanup(srv.Close)
	token := guardtest.Sign(t, jwt.SigningMethodHS256, "", []byte(guardtest.Secret), guardtest.Claims("user-1", func(c jwt.MapClaims) { c["email"] = "carol@example.com" }))

	tests := []struct {
		name    string
		setAuth func(*http.Request)
		want    outcome
	}{
		{"principal from the configured claim", guardtest.Bearer(token), outcome{Status: 200, Principal: "carol@example.com", Scheme: "bearer"}},
		{"key in the configured header", func(r *http.Request) { r.Header.Set("X-Agent-Key", "svc-key") }, outcome{Status: 200, Principal: "svc", Scheme: "apiKey"}},
		{"key in the default header is not looked at", guardtest.APIKey("svc-key"), outcome{
			Status: 401, Code: -31401, Reason: "the agent card's securitySchemes list the accepted credentials",
			Challenges: []string{plainBearer, `APIKey realm="a2aflow", header="X-Agent-Key"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := extendedCardCall(t, srv.URL, "/agents/other", tt.setAuth)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuthRoutes checks which routes are guarded and the shape of the 401 on
// each binding.
func TestAuthRoutes(t *testing.T) {
	a, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{APIKeys: map[string]string{"alice": "alice-key"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: a}).Handler())
	t.Cleanup(srv.Close)

	type result struct {
		Status    int
		Challenge string
		Body      string // JSON-RPC error code or google.rpc.Status status
	}
	unauth := func(body string) result { return result{401, `APIKey realm="a2aflow", header="X-API-Key"`, body} }
	tests := []struct {
		method, path, version string
		want                  result
	}{
		{"GET", "/healthz", "", result{200, "", ""}},
		{"GET", "/agents", "", result{200, "", ""}},
		{"GET", "/.well-known/agent-card.json", "", result{200, "", ""}},
		{"GET", "/agents/other/.well-known/agent-card.json", "", result{200, "", ""}},
		{"GET", "/inbox", "", result{200, "", ""}},
		{"GET", "/console", "", result{200, "", ""}},
		{"GET", "/console/app.js", "", result{200, "", ""}},
		{"POST", "/console", "", unauth("UNAUTHENTICATED")},
		{"GET", "/approvals", "", unauth("UNAUTHENTICATED")},
		{"POST", "/", "1.0", unauth("-31401")},
		{"POST", "/", "", unauth("-31401")}, // 0.3
		{"POST", "/agents/other", "1.0", unauth("-31401")},
		{"POST", "/agents/other/", "1.0", unauth("-31401")},
		{"POST", "/message:send", "1.0", unauth("UNAUTHENTICATED")},
		{"POST", "/message:stream", "1.0", unauth("UNAUTHENTICATED")},
		{"GET", "/tasks/abc", "1.0", unauth("UNAUTHENTICATED")},
		{"POST", "/tasks/abc:cancel", "1.0", unauth("UNAUTHENTICATED")},
		{"GET", "/extendedAgentCard", "1.0", unauth("UNAUTHENTICATED")},
		{"POST", "/agents/other/message:send", "1.0", unauth("UNAUTHENTICATED")},
		{"GET", "/agents/other/tasks/abc", "1.0", unauth("UNAUTHENTICATED")},
		{"POST", "/v1/message:send", "", unauth("UNAUTHENTICATED")}, // 0.3 REST
		{"POST", "/.well-known/agent-card.json", "", unauth("UNAUTHENTICATED")},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.version, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(`{}`))
			// A bad key changes nothing: public routes stay public.
			req.Header.Set("X-API-Key", "wrong-key")
			if tt.version != "" {
				req.Header.Set("A2A-Version", tt.version)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error json.RawMessage `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			var e struct {
				Code   any    `json:"code"`
				Status string `json:"status"`
			}
			_ = json.Unmarshal(body.Error, &e)
			got := result{Status: resp.StatusCode, Challenge: resp.Header.Get("WWW-Authenticate")}
			if resp.StatusCode == http.StatusUnauthorized {
				got.Body = e.Status
				if got.Body == "" {
					got.Body = strings.TrimSuffix(strings.TrimSuffix(jsonString(e.Code), "\n"), ".0")
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAuthCards checks the security declared in the public cards and the
// extended card of an authenticated caller.
func TestAuthCards(t *testing.T) {
	k := guardtest.NewKeys(t)
	on := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{Auth: newTestAuth(t, k)}).Handler())
	t.Cleanup(on.Close)
	off := httptest.NewServer(New(healthyTemporal{}, testRegistry(t), Config{}).Handler())
	t.Cleanup(off.Close)

	type security struct {
		Schemes      a2a.NamedSecuritySchemes
		Requirements a2a.SecurityRequirementsOptions
		Extended     bool
	}
	declared := security{
		Schemes: a2a.NamedSecuritySchemes{
			guard.APIKeySchemeName: a2a.APIKeySecurityScheme{Location: "header", Name: "X-API-Key",
				Description: "An API key issued by the operator of this server; the key's name is the caller's principal."},
			guard.BearerSchemeName: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT",
				Description: `A JWT with an exp claim; its "sub" claim is the caller's principal.`},
			// The issuer is an https URL: its discovery document (guard/permissions.go).
			guard.OpenIDConnectSchemeName: a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: guardtest.Issuer + "/.well-known/openid-configuration",
				Description: "OpenID Connect: the issuer's access tokens, sent as bearer JWTs."},
		},
		Requirements: a2a.SecurityRequirementsOptions{{guard.APIKeySchemeName: {}}, {guard.BearerSchemeName: {}}, {guard.OpenIDConnectSchemeName: {}}},
		Extended:     true,
	}
	tests := []struct {
		name string
		url  string
		want security
	}{
		{"auth on, default agent", on.URL + "/.well-known/agent-card.json", declared},
		{"auth on, named agent", on.URL + "/agents/other/.well-known/agent-card.json", declared},
		{"auth off", off.URL + "/.well-known/agent-card.json", security{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			// The card is read the same by a 1.0 parser (a2a-go's default)
			// and by the 0.3 one.
			for parser, parse := range map[string]agentcard.Parser{"1.0": agentcard.DefaultCardParser, "0.3": a2av0.NewAgentCardParser()} {
				card, err := parse(raw)
				if err != nil {
					t.Fatalf("%s parser: %v\n%s", parser, err, raw)
				}
				got := security{Schemes: card.SecuritySchemes, Requirements: card.SecurityRequirements, Extended: card.Capabilities.ExtendedAgentCard}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("card security read by the %s parser (-want +got):\n%s", parser, diff)
				}
			}
			// The 0.3 fields a 0.3 client reads.
			var v0 struct {
				Security        []map[string][]string     `json:"security"`
				SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
				Extended        bool                      `json:"supportsAuthenticatedExtendedCard"`
			}
			if err := json.Unmarshal(raw, &v0); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, name := range []string{"apiKey", "bearer", "openIdConnect"} {
				if s, ok := v0.SecuritySchemes[name]; ok {
					types = append(types, fmt.Sprint(s["type"], " ", s["in"], " ", s["name"], " ", s["scheme"], " ", s["openIdConnectUrl"]))
				}
			}
			var wantTypes []string
			var wantSecurity []map[string][]string
			if tt.want.Extended {
				wantTypes = []string{"apiKey header X-API-Key <nil> <nil>", "http <nil> <nil> Bearer <nil>",
					"openIdConnect <nil> <nil> <nil> " + guardtest.Issuer + "/.well-known/openid-configuration"}
				wantSecurity = []map[string][]string{{"apiKey": {}}, {"bearer": {}}, {"openIdConnect": {}}}
			}
			if diff := cmp.Diff(wantTypes, types); diff != "" {
				t.Errorf("0.3 securitySchemes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSecurity, v0.Security); diff != "" {
				t.Errorf("0.3 security (-want +got):\n%s", diff)
			}
			if v0.Extended != tt.want.Extended {
				t.Errorf("supportsAuthenticatedExtendedCard = %v, want %v", v0.Extended, tt.want.Extended)
			}
		})
	}

	t.Run("extended card", func(t *testing.T) {
		token := guardtest.Sign(t, jwt.SigningMethodRS256, "rsa-1", k.RSA, guardtest.Claims("dave"))
		_, card := extendedCardCall(t, on.URL, "/agents/other", guardtest.Bearer(token))
		if card == nil {
			t.Fatal("no extended card")
		}
		var urls []string
		for _, iface := range card.SupportedInterfaces {
			urls = append(urls, iface.URL)
		}
		want := on.URL + "/agents/other"
		// JSON-RPC and HTTP+JSON, each in A2A 1.0, 0.3 and 1.1.
		if diff := cmp.Diff([]string{want, want, want, want, want, want}, urls); diff != "" {
			t.Errorf("extended card interfaces (-want +got):\n%s", diff)
		}
		var ext *a2a.AgentExtension
		for i := range card.Capabilities.Extensions {
			if card.Capabilities.Extensions[i].URI == a2abinding.CallerExtensionURI {
				ext = &card.Capabilities.Extensions[i]
			}
		}
		if ext == nil {
			t.Fatalf("extended card has no %s extension: %+v", a2abinding.CallerExtensionURI, card.Capabilities)
		}
		exp, err := time.Parse(time.RFC3339, ext.Params["expiresAt"].(string))
		if err != nil || time.Until(exp) < 50*time.Minute || time.Until(exp) > time.Hour {
			t.Errorf("expiresAt = %v (%v), want about an hour from now", ext.Params["expiresAt"], err)
		}
		if card.Name != "other" || !card.Capabilities.ExtendedAgentCard || len(card.SecuritySchemes) != 3 {
			t.Errorf("extended card = %+v, want the other agent's card with its security", card)
		}
	})

	t.Run("auth off answers ExtendedCardNotConfigured", func(t *testing.T) {
		got, _ := extendedCardCall(t, off.URL, "/", nil)
		if diff := cmp.Diff(outcome{Status: 200, Code: -32007, Reason: got.Reason}, got); diff != "" || got.Reason == "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
	})
}
