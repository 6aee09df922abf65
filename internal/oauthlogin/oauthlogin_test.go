package oauthlogin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/oauthlogin"
	"github.com/a2aflow/a2aflow/internal/oauthlogin/oauthtest"
	"github.com/a2aflow/a2aflow/internal/pgtest"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/secrets"
)

// cardServer serves an agent card whose oauth2 scheme names the provider's
// authorization code flow.
func cardServer(t *testing.T, op *oauthtest.Server) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		card := a2a.AgentCard{
			Name: "protected", Description: "needs a user's login", Version: "1",
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL, a2a.TransportProtocolJSONRPC)},
			SecuritySchemes: a2a.NamedSecuritySchemes{
				"user": a2a.OAuth2SecurityScheme{Flows: a2a.AuthorizationCodeOAuthFlow{
					AuthorizationURL: op.Issuer + "/auth", TokenURL: op.Issuer + "/oauth/token", PKCERequired: true,
					Scopes: map[string]string{"openid": "who you are", "offline_access": "stay logged in"},
				}},
				"service": a2a.OAuth2SecurityScheme{Flows: a2a.ClientCredentialsOAuthFlow{TokenURL: op.Issuer + "/oauth/token"}},
			},
			SecurityRequirements: a2a.SecurityRequirementsOptions{{"user": {"openid", "offline_access"}}},
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type env struct {
	op     *oauthtest.Server
	agent  *httptest.Server
	dir    string
	sealer *secrets.Sealer
	db     *models.Store
	store  *oauthlogin.Store
}

func newEnv(t *testing.T, ttl time.Duration) *env {
	t.Helper()
	e := &env{op: oauthtest.Start(t, ttl), dir: t.TempDir()}
	e.agent = cardServer(t, e.op)
	var err error
	if e.sealer, err = secrets.NewSealer(secrets.NewKey()); err != nil {
		t.Fatal(err)
	}
	e.db = openDB(t, e.dir)
	e.store = &oauthlogin.Store{DB: e.db.DB(), Sealer: e.sealer, ExpiryDelta: 200 * time.Millisecond}
	return e
}

func openDB(t *testing.T, dir string) *models.Store {
	t.Helper()
	db, err := models.Open(filepath.Join(dir, "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// login runs `agents login` the way the command does: the card's
// provider, the authorization code flow with PKCE, the tokens saved.
func (e *env) login(t *testing.T, name string) *oauth2.Token {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	card, err := remote.ResolveCard(ctx, http.DefaultClient, e.agent.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := oauthlogin.FromCard(ctx, http.DefaultClient, card)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scheme != "user" || p.AuthURL != e.op.Issuer+"/auth" || strings.Join(p.Scopes, " ") != "openid offline_access" {
		t.Fatalf("provider from the card = %+v", p)
	}
	var out bytes.Buffer
	f := &oauthlogin.Flow{Provider: p, Client: oauthlogin.Client{ID: oauthtest.ClientID}, Out: &out, OpenBrowser: e.op.Browser()}
	tok, err := f.AuthorizationCode(ctx)
	if err != nil {
		t.Fatalf("login: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "code_challenge_method=S256") || !strings.Contains(out.String(), "http://127.0.0.1:") {
		t.Errorf("the printed URL asks for no S256 challenge or no loopback redirect:\n%s", out.String())
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("login gave access %t refresh %t", tok.AccessToken != "", tok.RefreshToken != "")
	}
	if err := e.store.Save(ctx, oauthlogin.Login{Name: name, AgentURL: e.agent.URL, Provider: p, Client: f.Client, Token: tok}); err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestLoginWithPKCE(t *testing.T) {
	e := newEnv(t, time.Minute)
	e.login(t, "protected")
	if got := e.op.Grants("authorization_code"); got != 1 {
		t.Errorf("authorization_code grants = %d, want 1", got)
	}
	infos, err := e.store.List(context.Background())
	if err != nil || len(infos) != 1 || !infos[0].HasRefreshToken || infos[0].Hosts[0] != strings.TrimPrefix(e.agent.URL, "http://") {
		t.Fatalf("List = %+v, %v", infos, err)
	}
}

// The server refuses a code redeemed with a verifier other than the one
// whose challenge the authorization request carried, or with none.
func TestWrongVerifierRefused(t *testing.T) {
	e := newEnv(t, time.Minute)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	codes := make(chan string, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query().Get("code")
		_, _ = w.Write([]byte("logged in"))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfg := &oauth2.Config{ClientID: oauthtest.ClientID, RedirectURL: "http://" + ln.Addr().String() + "/callback",
		Endpoint: oauth2.Endpoint{AuthURL: e.op.Issuer + "/auth", TokenURL: e.op.Issuer + "/oauth/token"},
		Scopes:   []string{"openid", "offline_access"}}
	verifier := oauth2.GenerateVerifier()
	if err := e.op.Browser()(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier))); err != nil {
		t.Fatal(err)
	}
	code := <-codes
	ctx := context.Background()
	for name, opts := range map[string][]oauth2.AuthCodeOption{
		"wrong verifier": {oauth2.VerifierOption(oauth2.GenerateVerifier())},
		"no verifier":    nil,
	} {
		_, err := cfg.Exchange(ctx, code, opts...)
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || (re.ErrorCode != "invalid_grant" && re.ErrorCode != "invalid_request") {
			t.Errorf("%s: exchange = %v, want invalid_grant or invalid_request", name, err)
		}
	}
	if got := e.op.Grants("authorization_code"); got != 0 {
		t.Errorf("authorization_code grants = %d, want 0", got)
	}
}

// The database holds the tokens sealed only: neither token, nor any part
// of them, is in the SQLite files.
func TestStoreHoldsNoClearToken(t *testing.T) {
	e := newEnv(t, time.Minute)
	tok := e.login(t, "protected")
	// And a refreshed pair too.
	// (zitadel rounds expires_in down to whole seconds: 2 s gives 1.)
	e.op.SetAccessTTL(2 * time.Second)
	e.login(t, "short")
	time.Sleep(1200 * time.Millisecond)
	fresh, err := e.store.TokenSource("short", nil).Token()
	if err != nil {
		t.Fatal(err)
	}
	if got := e.op.Grants("refresh_token"); got != 1 {
		t.Fatalf("refreshes = %d, want 1", got)
	}
	var row models.OAuthLogin
	if err := e.db.DB().Where("name = ?", "short").Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	if !secrets.IsSealed(row.AccessToken) || !secrets.IsSealed(row.RefreshToken) {
		t.Fatalf("tokens not sealed in the row")
	}
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, fresh.AccessToken, fresh.RefreshToken} {
		files, _ := filepath.Glob(filepath.Join(e.dir, "*"))
		for _, f := range files {
			raw, _ := os.ReadFile(f)
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s holds a token in clear", filepath.Base(f))
			}
			// A JWT's signature part alone would be as bad.
			if parts := strings.Split(secret, "."); len(parts) == 3 && bytes.Contains(raw, []byte(parts[2])) {
				t.Errorf("%s holds a token's signature in clear", filepath.Base(f))
			}
		}
	}
	// A sealed token copied to another login does not open there.
	if err := e.db.DB().Model(&models.OAuthLogin{}).Where("name = ?", "protected").Update("access_token", row.AccessToken).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.TokenSource("protected", nil).Token(); err == nil {
		t.Error("a token sealed for login short opened as login protected's")
	}
}

// The access token is refreshed when it expires, once per expiry however
// many callers in two processes (two stores on the same database) want it,
// and the rotated refresh token is stored back sealed.
func TestRefreshAcrossWorkers(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		e := newEnv(t, 2*time.Second) // expires_in 1 (whole seconds, rounded down)
		refreshAcrossWorkers(t, e, openDB(t, e.dir))
	})
	t.Run("postgres", func(t *testing.T) {
		srv, err := pgtest.Start()
		var missing *pgtest.MissingError
		switch {
		case errors.As(err, &missing) && os.Getenv("CI") != "true":
			t.Skipf("PostgreSQL tests skipped: %v", err)
		case err != nil:
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		dsn, err := srv.NewDatabase("oauthlogin")
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, 2*time.Second)
		e.db = openDSN(t, dsn)
		e.store = &oauthlogin.Store{DB: e.db.DB(), Sealer: e.sealer, ExpiryDelta: 200 * time.Millisecond}
		refreshAcrossWorkers(t, e, openDSN(t, dsn))
	})
}

func openDSN(t *testing.T, dsn string) *models.Store {
	t.Helper()
	db, err := models.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// refreshAcrossWorkers: e's store is one worker, a store over db (the same
// database) the other.
func refreshAcrossWorkers(t *testing.T, e *env, db *models.Store) {
	first := e.login(t, "protected")
	other := &oauthlogin.Store{DB: db.DB(), Sealer: e.sealer, ExpiryDelta: 200 * time.Millisecond}
	sources := []oauth2.TokenSource{e.store.TokenSource("protected", nil), other.TokenSource("protected", nil)}
	tok, err := sources[0].Token()
	if err != nil || tok.AccessToken != first.AccessToken {
		t.Fatalf("before expiry: %v (same token %t)", err, tok != nil && tok.AccessToken == first.AccessToken)
	}
	if got := e.op.Grants("refresh_token"); got != 0 {
		t.Fatalf("refreshes before expiry = %d", got)
	}
	seen := map[string]bool{first.AccessToken: true}
	for round := 1; round <= 3; round++ {
		time.Sleep(1100 * time.Millisecond)
		var wg sync.WaitGroup
		tokens := make(chan string, 16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func(src oauth2.TokenSource) {
				defer wg.Done()
				tok, err := src.Token()
				if err != nil {
					t.Errorf("round %d: %v", round, err)
					return
				}
				tokens <- tok.AccessToken
			}(sources[i%2])
		}
		wg.Wait()
		close(tokens)
		distinct := map[string]bool{}
		for tk := range tokens {
			distinct[tk] = true
		}
		if len(distinct) != 1 {
			t.Errorf("round %d: %d different access tokens, want 1", round, len(distinct))
		}
		for tk := range distinct {
			if seen[tk] {
				t.Errorf("round %d: an expired access token was handed out", round)
			}
			seen[tk] = true
		}
		if got := e.op.Grants("refresh_token"); got != round {
			t.Errorf("round %d: refreshes at the server = %d, want %d", round, got, round)
		}
	}
	if got := e.op.Refused("refresh_token"); got != 0 {
		t.Errorf("refused refreshes = %d (a rotated refresh token was redeemed twice)", got)
	}
	infos, _ := e.store.List(context.Background())
	if infos[0].Refreshes != 3 {
		t.Errorf("stored refreshes = %d, want 3", infos[0].Refreshes)
	}
}

// A revoked refresh token ends the login with an error telling the user to
// log in again.
func TestRevokedRefreshToken(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	e.login(t, "protected")
	if err := e.op.RevokeAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	_, err := e.store.TokenSource("protected", nil).Token()
	if !errors.Is(err, remote.ErrLoginRequired) {
		t.Fatalf("after revocation: %v, want ErrLoginRequired", err)
	}
	if want := "run `a2aflow agents login protected` again"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if got := e.op.Refused("refresh_token"); got != 1 {
		t.Errorf("refused refreshes = %d, want 1", got)
	}
	// Through the keyring and an HTTP client, the call fails with it too.
	k := (*remote.Keyring)(nil).WithLogins(e.store)
	c, err := k.Credentials("protected")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.HTTPClient().Get(e.agent.URL + "/.well-known/agent-card.json")
	if !errors.Is(err, remote.ErrLoginRequired) || !strings.Contains(remote.Reason(err), "agents login protected") {
		t.Errorf("call after revocation: %v (reason %q)", err, remote.Reason(err))
	}
}

func TestFromCardOpenIDConnect(t *testing.T) {
	op := oauthtest.Start(t, time.Minute)
	card := &a2a.AgentCard{SecuritySchemes: a2a.NamedSecuritySchemes{
		"oidc": a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: op.Issuer + "/.well-known/openid-configuration"}}}
	p, err := oauthlogin.FromCard(context.Background(), http.DefaultClient, card)
	if err != nil {
		t.Fatal(err)
	}
	if p.AuthURL != op.Issuer+"/auth" || p.TokenURL != op.Issuer+"/oauth/token" || p.DeviceURL == "" || p.RevocationURL == "" {
		t.Errorf("discovered %+v", p)
	}
	if _, err := oauthlogin.FromCard(context.Background(), http.DefaultClient, &a2a.AgentCard{SecuritySchemes: a2a.NamedSecuritySchemes{
		"svc": a2a.OAuth2SecurityScheme{Flows: a2a.ClientCredentialsOAuthFlow{TokenURL: op.Issuer + "/oauth/token"}}}}); !errors.Is(err, oauthlogin.ErrNoOAuth) {
		t.Errorf("client credentials only: %v, want ErrNoOAuth", err)
	}
}

// The device code flow: the user allows the device on the provider's page;
// a2aflow polls and gets the token.
func TestDeviceCode(t *testing.T) {
	op := oauthtest.Start(t, time.Minute)
	p, err := oauthlogin.Discover(context.Background(), http.DefaultClient, op.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	p.Scopes = nil // no ID token: the example storage looks the device user up by name where it keeps IDs
	var out bytes.Buffer
	f := &oauthlogin.Flow{Provider: p, Client: oauthlogin.Client{ID: oauthtest.DeviceClientID, Secret: oauthtest.DeviceClientSecret},
		Out: &out, OpenBrowser: op.DeviceBrowser()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := f.DeviceCode(ctx)
	if err != nil {
		t.Fatalf("device login: %v\n%s", err, out.String())
	}
	if tok.AccessToken == "" || !strings.Contains(out.String(), "enter the code") {
		t.Errorf("token %t, printed %q", tok.AccessToken != "", out.String())
	}
	if got := op.Grants("urn:ietf:params:oauth:grant-type:device_code"); got != 1 {
		t.Errorf("device code grants = %d, want 1", got)
	}
	// Without a device endpoint the flow says to use the browser.
	p.DeviceURL = ""
	if _, err := (&oauthlogin.Flow{Provider: p}).DeviceCode(ctx); err == nil || !strings.Contains(err.Error(), "without --device") {
		t.Errorf("no device endpoint: %v", err)
	}
}

// A process that took the lease and died holds the others up for the
// lease only: then one of them refreshes.
func TestDeadLeaseHolder(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	e.login(t, "protected")
	e.store.Lease = 500 * time.Millisecond
	time.Sleep(1100 * time.Millisecond) // expired
	until := time.Now().Add(500 * time.Millisecond)
	if err := e.db.DB().Model(&models.OAuthLogin{}).Where("name = ?", "protected").
		Updates(map[string]any{"lease_holder": "dead", "lease_until": until.UTC(), "version": gorm.Expr("version + 1")}).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.TokenSource("protected", nil).Token(); err != nil {
		t.Fatal(err)
	}
	// Measured against the lease's end, not from after the update: a
	// pause between the two would count as time the refresh waited.
	if early := time.Until(until); early > 0 {
		t.Errorf("refreshed %s before the lease another process held ended", early)
	}
	if got := e.op.Grants("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
}

// Logout revokes the refresh token at the provider (RFC 7009) and deletes
// the login.
func TestLogout(t *testing.T) {
	e := newEnv(t, time.Minute)
	ctx := context.Background()
	p, err := oauthlogin.Discover(ctx, http.DefaultClient, e.op.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	f := &oauthlogin.Flow{Provider: p, Client: oauthlogin.Client{ID: oauthtest.ClientID}, Out: &out, OpenBrowser: e.op.Browser()}
	tok, err := f.AuthorizationCode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Save(ctx, oauthlogin.Login{Name: "oidc", AgentURL: e.agent.URL, Provider: p, Client: f.Client, Token: tok}); err != nil {
		t.Fatal(err)
	}
	found, revoked, err := e.store.Logout(ctx, "oidc", nil)
	if !found || !revoked || err != nil {
		t.Fatalf("Logout = %t %t %v", found, revoked, err)
	}
	cfg := &oauth2.Config{ClientID: oauthtest.ClientID, Endpoint: oauth2.Endpoint{TokenURL: p.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token(); err == nil {
		t.Error("the refresh token still works after the logout")
	}
	if infos, _ := e.store.List(ctx); len(infos) != 0 {
		t.Errorf("logins after the logout: %+v", infos)
	}
	if found, _, err := e.store.Logout(ctx, "oidc", nil); found || err != nil {
		t.Errorf("second Logout = %t %v", found, err)
	}
}
