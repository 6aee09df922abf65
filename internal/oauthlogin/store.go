package oauthlogin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/secrets"
)

// Store keeps the logins in the oauth_logins table of a2aflow's database,
// every secret sealed. It is safe for concurrent use, and several processes
// may share the database.
type Store struct {
	// DB is a2aflow's database (models.Store.DB), its schema migrated.
	DB *gorm.DB
	// Sealer seals and opens the secrets; without a key the store keeps
	// nothing.
	Sealer *secrets.Sealer
	// Lease bounds how long a process refreshing a login keeps the others
	// waiting (a process that dies while refreshing holds it that long);
	// default DefaultLease.
	Lease time.Duration
	// Wait bounds how long a process waits for another's refresh before it
	// gives up; default twice the lease.
	Wait time.Duration
	// ExpiryDelta: an access token this close to its expiry is refreshed
	// before use; default DefaultExpiryDelta.
	ExpiryDelta time.Duration
}

// DefaultLease is Store.Lease's default: longer than a token fetch may take
// (remote.TokenFetchTimeout).
const DefaultLease = time.Minute

// DefaultExpiryDelta is Store.ExpiryDelta's default, oauth2's.
const DefaultExpiryDelta = 10 * time.Second

func (s *Store) expiryDelta() time.Duration {
	if s.ExpiryDelta > 0 {
		return s.ExpiryDelta
	}
	return DefaultExpiryDelta
}

// Login is a login as Save takes it: everything in clear; Save seals.
type Login struct {
	Name     string
	AgentURL string
	// Hosts are where the access token goes ("host" or "host:port"); empty:
	// the agent's host and port.
	Hosts    []string
	Provider Provider
	Client   Client
	Token    *oauth2.Token
}

// Info describes a stored login, without its secrets.
type Info struct {
	Name, AgentURL, TokenURL, ClientID string
	Hosts, Scopes                      []string
	Expiry                             time.Time
	HasRefreshToken                    bool
	Refreshes                          int64
	UpdatedAt                          time.Time
}

func (s *Store) enabled() error {
	if !s.Sealer.Enabled() {
		return errors.New("no secrets key: OAuth logins are kept sealed with it (--secrets-key, A2AFLOW_SECRETS_KEY, or <data-dir>/secrets.key that serve creates)")
	}
	return nil
}

// seal and open bind each value to the login's name and field.
func (s *Store) seal(name, field, v string) string { return s.Sealer.Seal(v, sealContext(name, field)) }

func (s *Store) open(name, field, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if !secrets.IsSealed(v) {
		return "", fmt.Errorf("OAuth login %s: its %s is not sealed", name, field)
	}
	out, err := s.Sealer.Open(v, sealContext(name, field))
	if err != nil {
		return "", fmt.Errorf("OAuth login %s: its %s: %w", name, field, err)
	}
	return out, nil
}

func sealContext(name, field string) string { return "oauth-login:" + name + ":" + field }

// Save stores l (replacing a login of the same name), sealed.
func (s *Store) Save(ctx context.Context, l Login) error {
	if err := s.enabled(); err != nil {
		return err
	}
	if l.Name == "" || strings.ContainsAny(l.Name, " \t\r\n/") {
		return fmt.Errorf("%q is not a login name (no spaces or slashes)", l.Name)
	}
	if l.Token == nil || l.Token.AccessToken == "" {
		return errors.New("the login gave no access token")
	}
	hosts := l.Hosts
	if len(hosts) == 0 {
		h, err := agentHost(l.AgentURL)
		if err != nil {
			return err
		}
		hosts = []string{h}
	}
	row := models.OAuthLogin{
		Name:          l.Name,
		AgentURL:      l.AgentURL,
		Hosts:         strings.Join(hosts, ","),
		AuthURL:       l.Provider.AuthURL,
		TokenURL:      l.Provider.TokenURL,
		DeviceURL:     l.Provider.DeviceURL,
		RevocationURL: l.Provider.RevocationURL,
		ClientID:      l.Client.ID,
		ClientSecret:  s.seal(l.Name, "clientSecret", l.Client.Secret),
		Scopes:        strings.Join(l.Provider.Scopes, " "),
		AccessToken:   s.seal(l.Name, "accessToken", l.Token.AccessToken),
		RefreshToken:  s.seal(l.Name, "refreshToken", l.Token.RefreshToken),
		TokenType:     l.Token.TokenType,
		Expiry:        l.Token.Expiry.UTC(),
	}
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old models.OAuthLogin
		err := tx.Where("name = ?", l.Name).Take(&old).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			return tx.Create(&row).Error
		case err != nil:
			return err
		}
		row.Version = old.Version + 1
		row.CreatedAt = old.CreatedAt
		return tx.Select("*").Where("name = ?", l.Name).Updates(&row).Error
	})
}

// agentHost is the host:port of an agent URL (the port its scheme's
// default when it names none).
func agentHost(agentURL string) (string, error) {
	u, err := url.Parse(agentURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("agent URL %q has no host", agentURL)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// List describes every login, by name.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	var rows []models.OAuthLogin
	if err := s.DB.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(rows))
	for _, r := range rows {
		out = append(out, info(r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func info(r models.OAuthLogin) Info {
	return Info{Name: r.Name, AgentURL: r.AgentURL, TokenURL: r.TokenURL, ClientID: r.ClientID,
		Hosts: splitList(r.Hosts, ","), Scopes: strings.Fields(r.Scopes), Expiry: r.Expiry,
		HasRefreshToken: r.RefreshToken != "", Refreshes: r.Refreshes, UpdatedAt: r.UpdatedAt}
}

// Delete removes the login name; it reports whether there was one.
func (s *Store) Delete(ctx context.Context, name string) (bool, error) {
	res := s.DB.WithContext(ctx).Where("name = ?", name).Delete(&models.OAuthLogin{})
	return res.RowsAffected > 0, res.Error
}

func splitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (s *Store) get(ctx context.Context, name string) (models.OAuthLogin, bool, error) {
	var row models.OAuthLogin
	err := s.DB.WithContext(ctx).Where("name = ?", name).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return row, false, nil
	}
	return row, err == nil, err
}

// LoginCredentials returns the credentials of the login name: its access
// token as a bearer token, refreshed as it expires, sent only to the
// login's hosts (remote.LoginSource).
func (s *Store) LoginCredentials(name string) (*remote.Credentials, bool, error) {
	row, ok, err := s.get(context.Background(), name)
	if err != nil || !ok {
		return nil, ok, err
	}
	if err := s.enabled(); err != nil {
		return nil, false, err
	}
	return &remote.Credentials{Login: &loginTokens{store: s, name: name, tokenURL: row.TokenURL}, Hosts: splitList(row.Hosts, ",")}, true, nil
}

var _ remote.LoginSource = (*Store)(nil)

// loginTokens is one login as remote.Credentials uses it.
type loginTokens struct {
	store    *Store
	name     string
	tokenURL string
}

func (l *loginTokens) TokenURL() string { return l.tokenURL }
func (l *loginTokens) String() string   { return "oauth login(" + l.name + ")" }

// TokenSource caches the access token in this process (oauth2's
// ReuseTokenSource) and reads, or refreshes, it through the store when it
// expires.
func (l *loginTokens) TokenSource(tokenClient *http.Client) oauth2.TokenSource {
	return oauth2.ReuseTokenSourceWithExpiry(nil, &storeSource{store: l.store, name: l.name, client: tokenClient, holder: randomHex(8)}, l.store.expiryDelta())
}

// TokenSource returns the access tokens of the login name, refreshed
// through tokenClient (nil: http.DefaultClient) as they expire, for callers
// outside the keyring (tests, the CLI).
func (s *Store) TokenSource(name string, tokenClient *http.Client) oauth2.TokenSource {
	return (&loginTokens{store: s, name: name}).TokenSource(tokenClient)
}

// storeSource reads the login's token from the store, refreshing it under
// the lease when it has expired.
type storeSource struct {
	store  *Store
	name   string
	client *http.Client
	holder string
}

func (s *storeSource) Token() (*oauth2.Token, error) {
	ctx := context.Background()
	if s.client != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.client)
	}
	lease, wait := s.store.Lease, s.store.Wait
	if lease <= 0 {
		lease = DefaultLease
	}
	if wait <= 0 {
		wait = 2 * lease
	}
	deadline := time.Now().Add(wait)
	for {
		row, ok, err := s.store.get(ctx, s.name)
		if err != nil {
			return nil, fmt.Errorf("OAuth login %s: %w", s.name, err)
		}
		if !ok {
			return nil, &remote.LoginRequiredError{Name: s.name, Why: "there is no such login (removed?)"}
		}
		tok, err := s.token(row)
		if err != nil {
			return nil, err
		}
		if tok.AccessToken != "" && (tok.Expiry.IsZero() || time.Until(tok.Expiry) > s.store.expiryDelta()) {
			return tok, nil
		}
		if tok.RefreshToken == "" {
			return nil, &remote.LoginRequiredError{Name: s.name, Why: "its access token expired and the authorization server gave no refresh token"}
		}
		now := time.Now().UTC()
		if row.LeaseHolder == "" || row.LeaseUntil.Before(now) {
			// Take the lease: only if nobody changed the row since it was read.
			res := s.store.DB.WithContext(ctx).Model(&models.OAuthLogin{}).
				Where("name = ? AND version = ?", s.name, row.Version).
				Updates(map[string]any{"lease_holder": s.holder, "lease_until": now.Add(lease), "version": row.Version + 1})
			if res.Error != nil {
				return nil, fmt.Errorf("OAuth login %s: %w", s.name, res.Error)
			}
			if res.RowsAffected == 1 {
				return s.refresh(ctx, row, tok)
			}
		}
		// Another process refreshes: wait for the row to change.
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("OAuth login %s: another process has been refreshing its token for %s", s.name, wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// token opens row's tokens.
func (s *storeSource) token(row models.OAuthLogin) (*oauth2.Token, error) {
	access, err := s.store.open(row.Name, "accessToken", row.AccessToken)
	if err != nil {
		return nil, err
	}
	refresh, err := s.store.open(row.Name, "refreshToken", row.RefreshToken)
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: access, RefreshToken: refresh, TokenType: row.TokenType, Expiry: row.Expiry}, nil
}

// refresh redeems the refresh token (the lease held, at version
// row.Version+1) and stores what the server gave back, the lease released.
func (s *storeSource) refresh(ctx context.Context, row models.OAuthLogin, old *oauth2.Token) (*oauth2.Token, error) {
	held := row.Version + 1
	secret, err := s.store.open(row.Name, "clientSecret", row.ClientSecret)
	if err != nil {
		s.release(ctx, held)
		return nil, err
	}
	cfg := &oauth2.Config{ClientID: row.ClientID, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: row.TokenURL, AuthStyle: authStyle(secret)}, Scopes: strings.Fields(row.Scopes)}
	fctx, cancel := context.WithTimeout(ctx, remote.TokenFetchTimeout)
	defer cancel()
	// An expired token with only the refresh token: oauth2 redeems it (and
	// keeps it when the server rotates none).
	tok, err := cfg.TokenSource(fctx, &oauth2.Token{RefreshToken: old.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		s.release(ctx, held)
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "unauthorized_client" || re.ErrorCode == "invalid_client") {
			return nil, &remote.LoginRequiredError{Name: s.name, Why: "the authorization server refused its refresh token (" + tokenError(err).Error() + ")"}
		}
		return nil, fmt.Errorf("OAuth login %s: refresh at %s: %w", s.name, row.TokenURL, tokenError(err))
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = old.RefreshToken
	}
	updates := map[string]any{
		"access_token":  s.store.seal(row.Name, "accessToken", tok.AccessToken),
		"refresh_token": s.store.seal(row.Name, "refreshToken", tok.RefreshToken),
		"token_type":    tok.TokenType,
		"expiry":        tok.Expiry.UTC(),
		"version":       held + 1,
		"lease_holder":  "",
		"lease_until":   time.Time{},
		"refreshes":     gorm.Expr("refreshes + 1"),
	}
	// The server may have rotated the refresh token: storing it back must
	// not fail on a passing database error, or the login is lost.
	var werr error
	for attempt := 0; attempt < 5; attempt++ {
		res := s.store.DB.WithContext(ctx).Model(&models.OAuthLogin{}).
			Where("name = ? AND version = ? AND lease_holder = ?", s.name, held, s.holder).Updates(updates)
		if werr = res.Error; werr == nil {
			// RowsAffected 0: our lease was taken over (the refresh took
			// longer than the lease) or the login was made again meanwhile;
			// what is there stays.
			return tok, nil
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	return nil, fmt.Errorf("OAuth login %s: the refreshed tokens could not be stored: %w", s.name, werr)
}

// release gives the lease back after a failed refresh.
func (s *storeSource) release(ctx context.Context, held int64) {
	s.store.DB.WithContext(ctx).Model(&models.OAuthLogin{}).
		Where("name = ? AND version = ? AND lease_holder = ?", s.name, held, s.holder).
		Updates(map[string]any{"lease_holder": "", "lease_until": time.Time{}, "version": held + 1})
}

// Logout revokes the login's refresh token (and access token) at the
// authorization server's revocation endpoint (RFC 7009), when it has one,
// through hc, then deletes the login. It reports whether there was a login
// and whether the server revoked its tokens; a failed revocation is
// returned after the login is deleted all the same.
func (s *Store) Logout(ctx context.Context, name string, hc *http.Client) (found, revoked bool, err error) {
	row, ok, err := s.get(ctx, name)
	if err != nil || !ok {
		return false, false, err
	}
	var rerr error
	if row.RevocationURL != "" {
		rerr = s.revoke(ctx, row, hc)
		revoked = rerr == nil
	}
	if _, err := s.Delete(ctx, name); err != nil {
		return true, false, err
	}
	return true, revoked, rerr
}

// revoke posts each token of row to its revocation endpoint: the refresh
// token first (which ends the grant at most servers), then the access
// token.
func (s *Store) revoke(ctx context.Context, row models.OAuthLogin, hc *http.Client) error {
	if hc == nil {
		hc = http.DefaultClient
	}
	secret, err := s.open(row.Name, "clientSecret", row.ClientSecret)
	if err != nil {
		return err
	}
	for _, t := range []struct{ field, hint string }{{"refreshToken", "refresh_token"}, {"accessToken", "access_token"}} {
		enc := row.RefreshToken
		if t.field == "accessToken" {
			enc = row.AccessToken
		}
		tok, err := s.open(row.Name, t.field, enc)
		if err != nil {
			return err
		}
		if tok == "" {
			continue
		}
		form := url.Values{"token": {tok}, "token_type_hint": {t.hint}}
		if secret == "" {
			form.Set("client_id", row.ClientID)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, row.RevocationURL, strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if secret != "" {
			req.SetBasicAuth(url.QueryEscape(row.ClientID), url.QueryEscape(secret))
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("revoke at %s: %w", row.RevocationURL, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("revoke at %s: HTTP %d", row.RevocationURL, resp.StatusCode)
		}
	}
	return nil
}
