package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"golang.org/x/oauth2"

	"github.com/a2aflow/a2aflow/internal/remote"
)

// seen is what a server received on the wire.
type seen struct {
	Path   string
	Header http.Header
	Query  url.Values
	Cookie map[string]string
}

func (s seen) basic() (user, pass string, ok bool) {
	r := &http.Request{Header: s.Header}
	return r.BasicAuth()
}

// recorder is an httptest server that records every request it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{Path: r.URL.Path, Header: r.Header.Clone(), Query: r.URL.Query(), Cookie: map[string]string{}}
		for _, c := range r.Cookies() {
			s.Cookie[c.Name] = c.Value
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, s)
		rec.mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) requests() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

func (r *recorder) last(t *testing.T) seen {
	t.Helper()
	reqs := r.requests()
	if len(reqs) == 0 {
		t.Fatal("the server got no request")
	}
	return reqs[len(reqs)-1]
}

// get makes a GET through hc and fails the test unless it answers 200.
func get(t *testing.T, hc *http.Client, u string) {
	t.Helper()
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
}

func TestCredentialsOnTheWire(t *testing.T) {
	tests := []struct {
		name  string
		creds *remote.Credentials
		check func(t *testing.T, s seen)
	}{
		{"api key in the default header", &remote.Credentials{APIKey: &remote.APIKey{Value: "k1"}}, func(t *testing.T, s seen) {
			want(t, "X-API-Key header", s.Header.Get("X-API-Key"), "k1")
			want(t, "Authorization", s.Header.Get("Authorization"), "")
			want(t, "query", s.Query.Encode(), "x=1")
		}},
		{"api key in a named header", &remote.Credentials{APIKey: &remote.APIKey{Value: "k2", In: "header", Name: "X-Agent-Token"}}, func(t *testing.T, s seen) {
			want(t, "X-Agent-Token header", s.Header.Get("X-Agent-Token"), "k2")
			want(t, "X-API-Key header", s.Header.Get("X-API-Key"), "")
		}},
		{"api key in the default query parameter", &remote.Credentials{APIKey: &remote.APIKey{Value: "k 3&=", In: "query"}}, func(t *testing.T, s seen) {
			want(t, "api_key parameter", s.Query.Get("api_key"), "k 3&=")
			want(t, "x parameter (the caller's own)", s.Query.Get("x"), "1")
			want(t, "X-API-Key header", s.Header.Get("X-API-Key"), "")
		}},
		{"api key in a named query parameter", &remote.Credentials{APIKey: &remote.APIKey{Value: "k4", In: "QUERY", Name: "key"}}, func(t *testing.T, s seen) {
			want(t, "key parameter", s.Query.Get("key"), "k4")
			want(t, "api_key parameter", s.Query.Get("api_key"), "")
		}},
		{"api key in the default cookie", &remote.Credentials{APIKey: &remote.APIKey{Value: "k5", In: "cookie"}}, func(t *testing.T, s seen) {
			want(t, "api_key cookie", s.Cookie["api_key"], "k5")
			want(t, "query", s.Query.Get("api_key"), "")
			want(t, "X-API-Key header", s.Header.Get("X-API-Key"), "")
		}},
		{"api key in a named cookie", &remote.Credentials{APIKey: &remote.APIKey{Value: "k6", In: "cookie", Name: "session"}}, func(t *testing.T, s seen) {
			want(t, "session cookie", s.Cookie["session"], "k6")
		}},
		{"bearer", &remote.Credentials{Bearer: "tok-7"}, func(t *testing.T, s seen) {
			want(t, "Authorization", s.Header.Get("Authorization"), "Bearer tok-7")
		}},
		{"basic", &remote.Credentials{Basic: &remote.Basic{Username: "alice", Password: "p:w d"}}, func(t *testing.T, s seen) {
			user, pass, ok := s.basic()
			if !ok || user != "alice" || pass != "p:w d" {
				t.Errorf("basic auth = %q, %q, %t; want alice, p:w d", user, pass, ok)
			}
		}},
		{"api key in a cookie with bearer", &remote.Credentials{APIKey: &remote.APIKey{Value: "k8", In: "cookie"}, Bearer: "tok-8"}, func(t *testing.T, s seen) {
			want(t, "api_key cookie", s.Cookie["api_key"], "k8")
			want(t, "Authorization", s.Header.Get("Authorization"), "Bearer tok-8")
		}},
		{"api key in a query with basic", &remote.Credentials{APIKey: &remote.APIKey{Value: "k9", In: "query"}, Basic: &remote.Basic{Username: "bob", Password: "pw"}}, func(t *testing.T, s seen) {
			want(t, "api_key parameter", s.Query.Get("api_key"), "k9")
			if user, pass, ok := s.basic(); !ok || user != "bob" || pass != "pw" {
				t.Errorf("basic auth = %q, %q, %t; want bob, pw", user, pass, ok)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.creds.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			rec := newRecorder(t)
			get(t, tt.creds.HTTPClient(), rec.URL+"/.well-known/agent-card.json?x=1")
			tt.check(t, rec.last(t))
		})
	}
}

func want(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func TestNoCredentialsSendNothing(t *testing.T) {
	rec := newRecorder(t)
	var nilCreds *remote.Credentials
	for _, hc := range []*http.Client{nilCreds.HTTPClient(), (&remote.Credentials{}).HTTPClient(), remote.PlainClient()} {
		get(t, hc, rec.URL+"/a")
		s := rec.last(t)
		if s.Header.Get("Authorization") != "" || s.Header.Get("X-API-Key") != "" || len(s.Cookie) != 0 || len(s.Query) != 0 {
			t.Errorf("a request without credentials carried some: %+v", s)
		}
	}
}

func TestHTTPClientIsBuiltOnce(t *testing.T) {
	c := &remote.Credentials{Bearer: "t"}
	first, second := c.HTTPClient(), c.HTTPClient()
	if first != second {
		t.Error("HTTPClient returned two clients for the same credentials")
	}
	if c.HTTPClient().Timeout != 0 {
		t.Errorf("the client has an overall timeout %s; streams would be cut", c.HTTPClient().Timeout)
	}
}

func TestValidate(t *testing.T) {
	const secret = "s3cr3t-value"
	tests := []struct {
		name    string
		creds   *remote.Credentials
		wantErr string // "" valid
	}{
		{"nil", nil, ""},
		{"empty", &remote.Credentials{}, ""},
		{"everything that can go together", &remote.Credentials{
			APIKey: &remote.APIKey{Value: secret, In: "cookie"},
			OAuth2: &remote.OAuth2{TokenURL: "https://idp.example/token", ClientID: "c", ClientSecret: secret, Scopes: []string{"a", "b:read"}},
		}, ""},
		{"unknown in", &remote.Credentials{APIKey: &remote.APIKey{Value: secret, In: "body"}}, `apiKey.in "body" is not header, query or cookie`},
		{"api key without value", &remote.Credentials{APIKey: &remote.APIKey{In: "query"}}, "apiKey.value is empty"},
		{"bad header name", &remote.Credentials{APIKey: &remote.APIKey{Value: secret, Name: "X Key"}}, `apiKey.name "X Key" is not a valid header name`},
		{"bad cookie name", &remote.Credentials{APIKey: &remote.APIKey{Value: secret, In: "cookie", Name: "a;b"}}, "not a valid cookie name"},
		{"cookie value net/http would rewrite", &remote.Credentials{APIKey: &remote.APIKey{Value: secret + ";x", In: "cookie"}}, "cannot go in a cookie"},
		{"header value with a newline", &remote.Credentials{APIKey: &remote.APIKey{Value: secret + "\r\nX-Evil: 1"}}, "cannot go in a header"},
		{"bearer with its prefix", &remote.Credentials{Bearer: "Bearer " + secret}, `holds the "Bearer " prefix`},
		{"bearer with a newline", &remote.Credentials{Bearer: secret + "\n"}, "bearer holds a space or a control character"},
		{"basic without user", &remote.Credentials{Basic: &remote.Basic{Password: secret}}, "basic.username is empty"},
		{"basic user with a colon", &remote.Credentials{Basic: &remote.Basic{Username: "a:b", Password: secret}}, "holds a colon"},
		{"oauth2 without token URL", &remote.Credentials{OAuth2: &remote.OAuth2{ClientID: "c", ClientSecret: secret}}, "oauth2.tokenUrl is empty"},
		{"oauth2 with a relative token URL", &remote.Credentials{OAuth2: &remote.OAuth2{TokenURL: "/token", ClientID: "c", ClientSecret: secret}}, `oauth2.tokenUrl "/token" is not an http(s) URL`},
		{"oauth2 token URL with secrets in it", &remote.Credentials{OAuth2: &remote.OAuth2{TokenURL: "ftp://u:" + secret + "@idp/t?k=" + secret, ClientID: "c", ClientSecret: secret}}, `oauth2.tokenUrl "ftp://idp/t?..." is not an http(s) URL`},
		{"oauth2 without client ID", &remote.Credentials{OAuth2: &remote.OAuth2{TokenURL: "https://idp/t", ClientSecret: secret}}, "oauth2.clientId is empty"},
		{"oauth2 without client secret", &remote.Credentials{OAuth2: &remote.OAuth2{TokenURL: "https://idp/t", ClientID: "c"}}, "oauth2.clientSecret is empty"},
		{"oauth2 with two scopes in one", &remote.Credentials{OAuth2: &remote.OAuth2{TokenURL: "https://idp/t", ClientID: "c", ClientSecret: secret, Scopes: []string{"a b"}}}, `oauth2.scopes: "a b" is not a scope`},
		{"bearer and oauth2", &remote.Credentials{Bearer: secret, OAuth2: &remote.OAuth2{TokenURL: "https://idp/t", ClientID: "c", ClientSecret: secret}},
			"bearer and oauth2 both use the Authorization header"},
		{"basic and bearer", &remote.Credentials{Bearer: secret, Basic: &remote.Basic{Username: "u", Password: secret}},
			"bearer and basic both use the Authorization header"},
		{"basic and oauth2", &remote.Credentials{Basic: &remote.Basic{Username: "u", Password: secret}, OAuth2: &remote.OAuth2{TokenURL: "https://idp/t", ClientID: "c", ClientSecret: secret}},
			"basic and oauth2 both use the Authorization header"},
		{"api key in Authorization and bearer", &remote.Credentials{APIKey: &remote.APIKey{Value: secret, Name: "authorization"}, Bearer: secret},
			"an API key in the Authorization header and bearer both use the Authorization header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.creds.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

func TestInvalidCredentialsSendNothing(t *testing.T) {
	rec := newRecorder(t)
	c := &remote.Credentials{Bearer: "t", Basic: &remote.Basic{Username: "u", Password: "p"}}
	_, err := c.HTTPClient().Get(rec.URL)
	if err == nil || !strings.Contains(err.Error(), "invalid credentials: bearer and basic both use the Authorization header") {
		t.Fatalf("GET with invalid credentials = %v, want the validation error", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}

func TestStringHidesSecrets(t *testing.T) {
	c := &remote.Credentials{
		APIKey: &remote.APIKey{Value: "SECRET-KEY", In: "query"},
		Basic:  &remote.Basic{Username: "alice", Password: "SECRET-PASS"},
		OAuth2: &remote.OAuth2{TokenURL: "https://idp.example/token?sig=SECRET-SIG", ClientID: "svc", ClientSecret: "SECRET-CS", Scopes: []string{"a", "b"}},
	}
	wantStr := "apiKey(query api_key), basic(user alice), oauth2(client svc at https://idp.example/token?..., scopes a b)"
	if got := c.String(); got != wantStr {
		t.Errorf("String() = %q, want %q", got, wantStr)
	}
	b := &remote.Credentials{Bearer: "SECRET-TOK"}
	for _, s := range []string{
		fmt.Sprint(c), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.Redacted(),
		fmt.Sprintf("%v %+v %#v", c.APIKey, *c.Basic, c.OAuth2), fmt.Sprintf("%#v", *c.APIKey),
		fmt.Sprint(b), fmt.Sprintf("%#v", b),
	} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("printed credentials show a secret: %s", s)
		}
	}
	if got := b.String(); got != "bearer" {
		t.Errorf("String() = %q, want bearer", got)
	}
}

func TestRedirectKeepsCredentialsOnTheSameHostOnly(t *testing.T) {
	other := newRecorder(t)
	rec := newRecorder(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/landing", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusFound)
	})
	mux.Handle("/landing", rec.Config.Handler)
	front := httptest.NewServer(mux)
	defer front.Close()

	c := &remote.Credentials{APIKey: &remote.APIKey{Value: "k", In: "query"}, Bearer: "tok"}
	get(t, c.HTTPClient(), front.URL+"/same")
	s := rec.last(t)
	want(t, "same-host redirect: api_key parameter", s.Query.Get("api_key"), "k")
	want(t, "same-host redirect: Authorization", s.Header.Get("Authorization"), "Bearer tok")

	get(t, c.HTTPClient(), front.URL+"/away")
	s = other.last(t)
	want(t, "cross-host redirect: api_key parameter", s.Query.Get("api_key"), "")
	want(t, "cross-host redirect: Authorization", s.Header.Get("Authorization"), "")
}

// tokenEndpoint is a fake OAuth2 authorization server's token endpoint
// (RFC 6749 section 4.4): a form POST with grant_type=client_credentials,
// the client authenticated with HTTP basic or with client_id and
// client_secret in the form, answered with JSON.
type tokenEndpoint struct {
	*httptest.Server
	clientID, clientSecret string
	expiresIn              int

	mu      sync.Mutex
	fetches int
	scopes  []string
	authBy  []string
}

func newTokenEndpoint(t *testing.T, expiresIn int) *tokenEndpoint {
	te := &tokenEndpoint{clientID: "a2aflow client", clientSecret: "cs/+&=", expiresIn: expiresIn}
	te.Server = httptest.NewServer(http.HandlerFunc(te.serve))
	t.Cleanup(te.Close)
	return te
}

func (te *tokenEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	oauthError := func(status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		oauthError(http.StatusBadRequest, "invalid_request", "POST a form")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		oauthError(http.StatusBadRequest, "unsupported_grant_type", "want client_credentials")
		return
	}
	// RFC 6749 2.3.1: the client ID and secret are form-encoded, then sent
	// with HTTP basic (or in the form body).
	id, secret, by := "", "", ""
	if u, p, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(u)
		secret, _ = url.QueryUnescape(p)
		by = "basic"
	} else {
		id, secret, by = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), "form"
	}
	if id != te.clientID || secret != te.clientSecret {
		oauthError(http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	te.mu.Lock()
	te.fetches++
	n := te.fetches
	te.scopes = strings.Fields(r.PostForm.Get("scope"))
	te.authBy = append(te.authBy, by)
	te.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": fmt.Sprintf("tok-%d", n), "token_type": "bearer", "expires_in": te.expiresIn,
	})
}

func (te *tokenEndpoint) count() int {
	te.mu.Lock()
	defer te.mu.Unlock()
	return te.fetches
}

func (te *tokenEndpoint) creds(scopes ...string) *remote.OAuth2 {
	return &remote.OAuth2{TokenURL: te.URL + "/token", ClientID: te.clientID, ClientSecret: te.clientSecret, Scopes: scopes}
}

func TestOAuth2TokenFetchedOnceAndReused(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	rec := newRecorder(t)
	c := &remote.Credentials{OAuth2: te.creds("agents.read", "tasks:write"), APIKey: &remote.APIKey{Value: "k", In: "cookie"}}
	for range 3 {
		get(t, c.HTTPClient(), rec.URL+"/seq")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := c.HTTPClient().Get(rec.URL + "/concurrent")
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	if n := te.count(); n != 1 {
		t.Errorf("the token was fetched %d times for 11 requests, want once", n)
	}
	reqs := rec.requests()
	if len(reqs) != 11 {
		t.Fatalf("the server got %d requests, want 11", len(reqs))
	}
	for _, s := range reqs {
		want(t, s.Path+": Authorization", s.Header.Get("Authorization"), "Bearer tok-1")
		want(t, s.Path+": api_key cookie", s.Cookie["api_key"], "k")
	}
	te.mu.Lock()
	defer te.mu.Unlock()
	if strings.Join(te.scopes, " ") != "agents.read tasks:write" {
		t.Errorf("scopes sent = %q, want agents.read tasks:write", te.scopes)
	}
	if te.authBy[0] != "basic" {
		t.Errorf("the client authenticated by %s, want HTTP basic first", te.authBy[0])
	}
}

func TestOAuth2TokenRefreshedAfterExpiry(t *testing.T) {
	// golang.org/x/oauth2 treats a token as expired 10 s before its
	// expires_in: 12 s gives a token good for 2 s.
	te := newTokenEndpoint(t, 12)
	rec := newRecorder(t)
	c := &remote.Credentials{OAuth2: te.creds()}
	start := time.Now()
	for range 3 {
		get(t, c.HTTPClient(), rec.URL)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Skip("the first requests took too long to tell reuse from refresh")
	}
	if n := te.count(); n != 1 {
		t.Fatalf("the token was fetched %d times before it expired, want once", n)
	}
	time.Sleep(2500*time.Millisecond - time.Since(start))
	get(t, c.HTTPClient(), rec.URL)
	get(t, c.HTTPClient(), rec.URL)
	if n := te.count(); n != 2 {
		t.Errorf("the token was fetched %d times, want twice (once more after it expired)", n)
	}
	reqs := rec.requests()
	got := []string{}
	for _, s := range reqs {
		got = append(got, s.Header.Get("Authorization"))
	}
	wantSeq := "Bearer tok-1,Bearer tok-1,Bearer tok-1,Bearer tok-2,Bearer tok-2"
	if strings.Join(got, ",") != wantSeq {
		t.Errorf("Authorization sent = %v, want %s", got, wantSeq)
	}
	if len(te.scopes) != 0 {
		t.Errorf("scopes sent = %q, want none", te.scopes)
	}
}

func TestOAuth2TokenEndpointError(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	rec := newRecorder(t)
	o := te.creds()
	o.ClientSecret = "wrong-secret"
	c := &remote.Credentials{OAuth2: o}
	_, err := c.HTTPClient().Get(rec.URL)
	if err == nil {
		t.Fatal("GET succeeded with a token endpoint refusing the client")
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
		t.Errorf("error = %v, want an oauth2.RetrieveError invalid_client", err)
	}
	for _, s := range []string{"oauth2 token from " + te.URL + "/token", "invalid_client"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("the error quotes the client secret: %v", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the agent got %d requests without a token, want none", n)
	}

	// An unreachable token endpoint is an error too, not a request without
	// credentials.
	te.Close()
	c = &remote.Credentials{OAuth2: te.creds()}
	if _, err := c.HTTPClient().Get(rec.URL); err == nil || !strings.Contains(err.Error(), "oauth2 token from") {
		t.Errorf("GET with the token endpoint down = %v, want an oauth2 token error", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the agent got %d requests without a token, want none", n)
	}
}

// echoExecutor is an a2asrv agent answering "echo: <text>".
type echoExecutor struct{}

func (echoExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		if ec.Message != nil && len(ec.Message.Parts) > 0 {
			text = ec.Message.Parts[0].Text()
		}
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("echo: "+text)), nil)
	}
}

func (echoExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// a2aAgent serves echoExecutor with a2a-go over binding, every path (the
// card included) behind a middleware that wants the API key "agent-key" in
// the api_key query parameter and a bearer token from te. It answers 401 as
// the binding does: a JSON-RPC error, or a google.rpc.Status with the A2A
// UNAUTHENTICATED reason.
func a2aAgent(t *testing.T, binding a2a.TransportProtocol, te *tokenEndpoint) (srv *httptest.Server, authorized func() []string) {
	var mu sync.Mutex
	var paths []string
	var handler http.Handler
	if binding == a2a.TransportProtocolJSONRPC {
		handler = a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoExecutor{}))
	} else {
		handler = a2asrv.NewRESTHandler(a2asrv.NewHandler(echoExecutor{}))
	}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return &a2a.AgentCard{
			Name: "echo", Version: "1.0.0", Description: "echoes",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL, binding)},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		}, nil
	})))
	mux.Handle("/", handler)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		te.mu.Lock()
		valid := fmt.Sprintf("Bearer tok-%d", te.fetches)
		te.mu.Unlock()
		if r.URL.Query().Get("api_key") != "agent-key" || r.Header.Get("Authorization") != valid {
			w.Header().Set("WWW-Authenticate", `Bearer realm="echo"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			if binding == a2a.TransportProtocolJSONRPC {
				fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"authentication required"}}`)
			} else {
				fmt.Fprintf(w, `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"authentication required","details":[{"@type":%q,"reason":"UNAUTHENTICATED","domain":%q}]}}`,
					errordetails.ErrorInfoType, a2a.ProtocolDomain)
			}
			return
		}
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

func TestA2AAgentBehindAuthentication(t *testing.T) {
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			te := newTokenEndpoint(t, 3600)
			srv, authorized := a2aAgent(t, binding, te)
			creds := &remote.Credentials{APIKey: &remote.APIKey{Value: "agent-key", In: "query"}, OAuth2: te.creds("echo")}
			hc := creds.HTTPClient()

			card, err := remote.ResolveCard(ctx, hc, srv.URL)
			if err != nil {
				t.Fatalf("ResolveCard with credentials: %v", err)
			}
			client, err := remote.NewClient(ctx, hc, card)
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			defer client.Destroy()
			for _, text := range []string{"hi", "again"} {
				res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
				if err != nil {
					t.Fatalf("SendMessage with credentials: %v", err)
				}
				msg, ok := res.(*a2a.Message)
				if !ok || len(msg.Parts) == 0 || msg.Parts[0].Text() != "echo: "+text {
					t.Fatalf("SendMessage = %#v, want the message echo: %s", res, text)
				}
			}
			if got := authorized(); len(got) != 3 || got[0] != a2asrv.WellKnownAgentCardPath {
				t.Errorf("authenticated requests = %v, want the card then two sends", got)
			}
			if n := te.count(); n != 1 {
				t.Errorf("the token was fetched %d times, want once", n)
			}

			// Without credentials: the card fetch gets 401...
			_, err = remote.ResolveCard(ctx, remote.PlainClient(), srv.URL)
			var notOK *agentcard.ErrStatusNotOK
			if !errors.As(err, &notOK) || notOK.StatusCode != http.StatusUnauthorized {
				t.Errorf("ResolveCard without credentials = %v, want HTTP 401", err)
			}
			// ...and so does a send, even with the card in hand.
			plain, err := remote.NewClient(ctx, remote.PlainClient(), card)
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			defer plain.Destroy()
			_, err = plain.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
			switch {
			case err == nil:
				t.Error("SendMessage without credentials succeeded")
			case binding == a2a.TransportProtocolJSONRPC && !strings.Contains(err.Error(), "401"):
				t.Errorf("SendMessage without credentials = %v, want HTTP 401", err)
			case binding == a2a.TransportProtocolHTTPJSON && !errors.Is(err, a2a.ErrUnauthenticated):
				t.Errorf("SendMessage without credentials = %v, want a2a.ErrUnauthenticated", err)
			}
			// ...and with credentials of the wrong key too.
			wrong := &remote.Credentials{APIKey: &remote.APIKey{Value: "other-key", In: "query"}, OAuth2: te.creds("echo")}
			if _, err := remote.ResolveCard(ctx, wrong.HTTPClient(), srv.URL); !errors.As(err, &notOK) || notOK.StatusCode != http.StatusUnauthorized {
				t.Errorf("ResolveCard with a wrong key = %v, want HTTP 401", err)
			}
			if got := authorized(); len(got) != 3 {
				t.Errorf("authenticated requests = %v after the unauthenticated ones, want still 3", got)
			}
		})
	}
}
