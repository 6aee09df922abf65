package temporalserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// uiSettings is the part of the UI server's GET /api/v1/settings the tests
// read: what the browser is told.
type uiSettings struct {
	Auth struct {
		Enabled            bool
		RedirectToProvider bool
	}
	DisableWriteActions bool
}

func getUISettings(t *testing.T, uiURL string) uiSettings {
	t.Helper()
	resp, err := http.Get(uiURL + "/api/v1/settings")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s uiSettings
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/settings: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("GET /api/v1/settings: %v", err)
	}
	return s
}

// uiBrowser is an HTTP client that behaves as the UI's own page does: it
// keeps the UI server's cookies and sends its CSRF token back.
type uiBrowser struct {
	t      *testing.T
	base   string
	client *http.Client
}

func newUIBrowser(t *testing.T, base string) *uiBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &uiBrowser{t: t, base: base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	// The first page load sets the _csrf cookie.
	resp, err := b.client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return b
}

// post sends a UI API call with the page's CSRF token and returns the status.
func (b *uiBrowser) post(path, body string) int {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	u, _ := url.Parse(b.base)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "_csrf" {
			req.Header.Set("X-CSRF-Token", c.Value)
		}
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestUIWriteActions: by default the UI says write actions are off and its
// API refuses to terminate a workflow (405), which keeps running; with
// UIWriteActions the same call terminates it.
func TestUIWriteActions(t *testing.T) {
	tests := []struct {
		name         string
		writeActions bool
		wantStatus   int
		wantState    enums.WorkflowExecutionStatus
	}{
		{"default off", false, http.StatusMethodNotAllowed, enums.WORKFLOW_EXECUTION_STATUS_RUNNING},
		{"on", true, http.StatusOK, enums.WORKFLOW_EXECUTION_STATUS_TERMINATED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.name, Options{DataDir: t.TempDir(), FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0",
				UIWriteActions: tt.writeActions, Logger: testLogger(t)})
			if got := getUISettings(t, s.UIURL()); got.DisableWriteActions == tt.writeActions {
				t.Errorf("settings DisableWriteActions = %v, want %v", got.DisableWriteActions, !tt.writeActions)
			}
			c := dial(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// No worker polls this queue: the workflow runs until terminated.
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "victim", TaskQueue: "nobody-polls"}, "NoSuchWorkflow")
			if err != nil {
				t.Fatal(err)
			}
			b := newUIBrowser(t, s.UIURL())
			path := fmt.Sprintf("/api/v1/namespaces/%s/workflows/%s/terminate", s.Namespace(), run.GetID())
			if got := b.post(path, `{"reason": "from the UI"}`); got != tt.wantStatus {
				t.Errorf("POST %s: status %d, want %d", path, got, tt.wantStatus)
			}
			desc, err := c.DescribeWorkflowExecution(ctx, run.GetID(), "")
			if err != nil {
				t.Fatal(err)
			}
			if got := desc.GetWorkflowExecutionInfo().GetStatus(); got != tt.wantState {
				t.Errorf("workflow status after the UI's terminate = %v, want %v", got, tt.wantState)
			}
			// Queries are reads: the UI may always send them (to a workflow
			// that does not exist, which answers at once: 404, not 405).
			if got := b.post(fmt.Sprintf("/api/v1/namespaces/%s/workflows/no-such-workflow/query/__stack_trace", s.Namespace()), `{}`); got != http.StatusNotFound {
				t.Errorf("a query through the UI: status %d, want 404 (let through, workflow not found)", got)
			}
		})
	}
}

// fakeIssuer is an OpenID Connect provider on loopback that serves its
// discovery document and records the browsers sent to its authorize page.
type fakeIssuer struct {
	*httptest.Server
	mu         sync.Mutex
	discovered int
	authorized []url.Values
}

func newFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	f := &fakeIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.discovered++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                f.URL,
			"authorization_endpoint":                f.URL + "/authorize",
			"token_endpoint":                        f.URL + "/token",
			"jwks_uri":                              f.URL + "/jwks",
			"response_types_supported":              []string{"code"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.authorized = append(f.authorized, r.URL.Query())
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>fake issuer login</body></html>")
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeIssuer) authorizeRequests() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.authorized...)
}

// TestUIOIDCLogin: with UIOIDC the UI's settings ask for a login, its
// login route sends the browser to the issuer's authorize URL with the
// configured client, callback and scopes, its API refuses calls without a
// token, and a real browser opening the UI lands on the issuer.
func TestUIOIDCLogin(t *testing.T) {
	issuer := newFakeIssuer(t)
	const callback = "http://localhost:18233/auth/sso/callback"
	s := startServer(t, "OIDC", Options{DataDir: t.TempDir(), FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0", Logger: testLogger(t),
		UIOIDC: &UIOIDC{IssuerURL: issuer.URL, ClientID: "a2aflow-ui", ClientSecret: "ui-secret", CallbackURL: callback}})

	settings := getUISettings(t, s.UIURL())
	if !settings.Auth.Enabled || !settings.Auth.RedirectToProvider || !settings.DisableWriteActions {
		t.Errorf("settings = %+v, want auth enabled, redirect to provider, write actions off", settings)
	}

	b := newUIBrowser(t, s.UIURL())
	resp, err := b.client.Get(s.UIURL() + "/auth/sso")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("GET /auth/sso: %s, Location %q, want 302 to the issuer", resp.Status, resp.Header.Get("Location"))
	}
	if got, want := loc.Scheme+"://"+loc.Host+loc.Path, issuer.URL+"/authorize"; got != want {
		t.Errorf("login redirects to %s, want %s", got, want)
	}
	q := loc.Query()
	got := map[string]string{"client_id": q.Get("client_id"), "redirect_uri": q.Get("redirect_uri"),
		"response_type": q.Get("response_type"), "scope": q.Get("scope")}
	want := map[string]string{"client_id": "a2aflow-ui", "redirect_uri": callback, "response_type": "code", "scope": "openid profile email"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("authorize URL parameters (-want +got):\n%s", diff)
	}
	if q.Get("state") == "" || q.Get("nonce") == "" {
		t.Errorf("authorize URL %s has no state or nonce", loc)
	}

	// Without the issuer's token the UI's API answers 401, not data.
	resp, err = b.client.Get(s.UIURL() + "/api/v1/namespaces/" + s.Namespace() + "/workflows")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET the workflow list without a token: %s, want 401", resp.Status)
	}

	t.Run("browser", func(t *testing.T) {
		browserPath := ""
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				browserPath = p
				break
			}
		}
		if browserPath == "" {
			t.Skip("no Chromium: the redirect is not tested in a browser")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(browserPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))...)
		defer cancelAlloc()
		browser, cancelBrowser := chromedp.NewContext(allocCtx)
		defer cancelBrowser()
		before := len(issuer.authorizeRequests())
		if err := chromedp.Do(browser, chromedp.Navigate(s.UIURL()+"/namespaces/default/workflows")); err != nil {
			t.Fatalf("browser: %v", err)
		}
		var location string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			location, _ = chromedp.Run(browser, chromedp.Location())
			if len(issuer.authorizeRequests()) > before && strings.HasPrefix(location, issuer.URL+"/authorize") {
				return
			}
		}
		t.Errorf("the browser is at %q; want it sent to %s/authorize", location, issuer.URL)
	})
}

// TestUIOIDCErrors: a bad OIDC configuration fails Start with an error
// naming it (the UI library would end the process instead).
func TestUIOIDCErrors(t *testing.T) {
	issuer := newFakeIssuer(t)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	const callback = "http://localhost:8233/auth/sso/callback"
	tests := []struct {
		name string
		oidc UIOIDC
		want string
	}{
		{"no client ID", UIOIDC{IssuerURL: issuer.URL, CallbackURL: callback}, "the client ID is required"},
		{"no callback", UIOIDC{IssuerURL: issuer.URL, ClientID: "ui"}, "the callback URL is required"},
		{"callback elsewhere", UIOIDC{IssuerURL: issuer.URL, ClientID: "ui", CallbackURL: "http://localhost:8233/login"}, "must end with /auth/sso/callback"},
		{"issuer not a URL", UIOIDC{IssuerURL: "issuer.example", ClientID: "ui", CallbackURL: callback}, "is not an http or https URL"},
		{"issuer unreachable", UIOIDC{IssuerURL: gone.URL, ClientID: "ui", CallbackURL: callback}, "temporal UI OIDC issuer " + gone.URL},
		{"issuer differs", UIOIDC{IssuerURL: issuer.URL + "/", ClientID: "ui", CallbackURL: callback}, "issuer did not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oidc := tt.oidc
			s, err := Start(context.Background(), Options{DataDir: t.TempDir(), FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0",
				UIOIDC: &oidc, Logger: testLogger(t)})
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start error = %q, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestDefaultAddressesAreLoopback: the zero Options listen on loopback only.
func TestDefaultAddressesAreLoopback(t *testing.T) {
	o, err := Options{DataDir: t.TempDir()}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for what, addr := range map[string]string{"frontend": o.FrontendAddr, "UI": o.UIAddr} {
		e, err := parseEndpoint(what, addr)
		if err != nil {
			t.Fatal(err)
		}
		if e.bindHost != "127.0.0.1" {
			t.Errorf("default %s address %s binds %q, want 127.0.0.1", what, addr, e.bindHost)
		}
	}
	if o.UIWriteActions {
		t.Error("UI write actions are on by default")
	}
}
