// Package oauthtest runs an OpenID Connect provider for tests: zitadel's
// OpenID provider (github.com/zitadel/oidc/v3's op package) with the
// module's example in-memory storage and login UI, on a loopback port. It
// issues JWT access tokens (verifiable with its /keys JWKS) that expire
// after AccessTTL, refresh tokens that rotate on every use, and supports
// PKCE (S256), the device code flow and revocation. It counts the token
// requests by grant type.
package oauthtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ClientID is the public (native) client the provider knows, registered
// with the loopback redirect http://127.0.0.1/callback (any port).
const ClientID = "a2aflow-cli"

// DeviceClientID and DeviceClientSecret are the confidential client of
// the device code flow.
const (
	DeviceClientID     = "a2aflow-device"
	DeviceClientSecret = "device-secret"
)

// UserID is the subject of the test user.
const UserID = "id1"

// Server is a running provider.
type Server struct {
	// Issuer is its base URL (http://127.0.0.1:PORT).
	Issuer string
	// Storage is the example storage it keeps its state in.
	Storage *storage.Storage

	ttl atomic.Int64 // access token lifetime, ns

	mu     sync.Mutex
	grants map[string]int // successful token requests by grant_type
	failed map[string]int // refused ones
	user   string
}

// Start starts a provider whose access tokens live ttl; it stops with t.
func Start(t testing.TB, ttl time.Duration) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	users := storage.NewUserStore(issuer)
	clients := map[string]*storage.Client{
		ClientID:       storage.NativeClient(ClientID, "http://127.0.0.1/callback"),
		DeviceClientID: storage.DeviceClient(DeviceClientID, DeviceClientSecret),
	}
	s := &Server{Issuer: issuer, Storage: storage.NewStorageWithClients(users, clients),
		grants: map[string]int{}, failed: map[string]int{}, user: "test-user@127.0.0.1"}
	s.ttl.Store(int64(ttl))
	router := exampleop.SetupServer(issuer, &shortTokens{Storage: s.Storage, s: s}, nil, false)
	srv := &http.Server{Handler: s.count(router), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// SetAccessTTL changes the lifetime of access tokens issued from now on.
func (s *Server) SetAccessTTL(d time.Duration) { s.ttl.Store(int64(d)) }

// Grants returns how many token requests of grant type g succeeded
// ("authorization_code", "refresh_token", device code's
// "urn:ietf:params:oauth:grant-type:device_code").
func (s *Server) Grants(g string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[g]
}

// Refused returns how many token requests of grant type g were refused.
func (s *Server) Refused(g string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[g]
}

// JWKSURL is where its signing keys are.
func (s *Server) JWKSURL() string { return s.Issuer + "/keys" }

// RevokeAll revokes every token of the test user for the client, refresh
// tokens included (the storage's end of session).
func (s *Server) RevokeAll(ctx context.Context) error {
	return s.Storage.TerminateSession(ctx, UserID, ClientID)
}

// count records the outcome of every token request.
func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/oauth/token") {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		rec := &status{ResponseWriter: w, code: 200}
		next.ServeHTTP(rec, r)
		s.mu.Lock()
		if rec.code == 200 {
			s.grants[form.Get("grant_type")]++
		} else {
			s.failed[form.Get("grant_type")]++
		}
		s.mu.Unlock()
	})
}

type status struct {
	http.ResponseWriter
	code int
}

func (s *status) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// shortTokens is the example storage with JWT access tokens that live the
// server's TTL.
type shortTokens struct {
	*storage.Storage
	s *Server
}

func (st *shortTokens) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := st.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

func (st *shortTokens) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := st.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	if short := time.Now().Add(time.Duration(st.s.ttl.Load())); err == nil && short.Before(exp) {
		exp = short
	}
	return id, refresh, exp, err
}

func (st *shortTokens) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := st.Storage.CreateAccessToken(ctx, req)
	if short := time.Now().Add(time.Duration(st.s.ttl.Load())); err == nil && short.Before(exp) {
		exp = short
	}
	return id, exp, err
}

// jwtClient issues JWT access tokens.
type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// Browser returns what a user's browser does with an authorization URL:
// it follows it to the provider's login page, logs the test user in, and
// follows the redirects back to the loopback listener. It returns the
// first failure.
func (s *Server) Browser() func(authURL string) error {
	return func(authURL string) error {
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
		resp, err := hc.Get(authURL)
		if err != nil {
			return err
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := resp.Request.URL.Query().Get("authRequestID")
		if id == "" {
			return fmt.Errorf("the provider did not show its login page (at %s: %d %s)", resp.Request.URL, resp.StatusCode, bytes.TrimSpace(page))
		}
		resp, err = hc.PostForm(s.Issuer+"/login/username", url.Values{"id": {id}, "username": {s.user}, "password": {"verysecure"}})
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("after the login: %d %s", resp.StatusCode, bytes.TrimSpace(body))
		}
		if !bytes.Contains(body, []byte("logged in")) {
			return errors.New("the loopback listener did not confirm the login: " + string(body))
		}
		return nil
	}
}

// DeviceBrowser returns what a user does with the verification URL of the
// device code flow (with its user_code): logs in on the provider's device
// page and allows the device.
func (s *Server) DeviceBrowser() func(verificationURL string) error {
	return func(verificationURL string) error {
		u, err := url.Parse(verificationURL)
		if err != nil {
			return err
		}
		code := u.Query().Get("user_code")
		if code == "" {
			return fmt.Errorf("no user_code in %s", verificationURL)
		}
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
		resp, err := hc.PostForm(s.Issuer+"/device/login", url.Values{"user_code": {code}, "username": {s.user}, "password": {"verysecure"}})
		if err != nil {
			return err
		}
		resp.Body.Close()
		resp, err = hc.PostForm(s.Issuer+"/device/confirm", url.Values{"action": {"allowed"}})
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte("authorization allowed")) {
			return errors.New("the device was not allowed: " + string(body))
		}
		return nil
	}
}
