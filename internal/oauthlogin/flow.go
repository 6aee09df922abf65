package oauthlogin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// Client is the OAuth client a2aflow logs in as: registered with the
// authorization server as a native (public) client with a loopback
// redirect URI http://127.0.0.1/callback (any port, RFC 8252 §7.3), or
// with a secret.
type Client struct {
	ID     string
	Secret string
}

// Flow runs one login.
type Flow struct {
	Provider Provider
	Client   Client
	// HTTPClient reaches the token and device endpoints; default
	// http.DefaultClient.
	HTTPClient *http.Client
	// Out is where the user reads what to do (the URL to open, the user
	// code); never a token.
	Out io.Writer
	// OpenBrowser, when set, is called with the authorization URL (after it
	// is printed); its failure is only reported.
	OpenBrowser func(url string) error
	// CallbackHost is the loopback address the redirect listener binds;
	// default 127.0.0.1.
	CallbackHost string
	// extraAuthParams are added to the authorization URL (tests).
	extraAuthParams []oauth2.AuthCodeOption
}

func (f *Flow) config(redirect string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     f.Client.ID,
		ClientSecret: f.Client.Secret,
		Endpoint: oauth2.Endpoint{
			AuthURL:       f.Provider.AuthURL,
			TokenURL:      f.Provider.TokenURL,
			DeviceAuthURL: f.Provider.DeviceURL,
			AuthStyle:     authStyle(f.Client.Secret),
		},
		RedirectURL: redirect,
		Scopes:      append([]string(nil), f.Provider.Scopes...),
	}
}

func (f *Flow) ctx(ctx context.Context) context.Context {
	if f.HTTPClient != nil {
		return context.WithValue(ctx, oauth2.HTTPClient, f.HTTPClient)
	}
	return ctx
}

func (f *Flow) out() io.Writer {
	if f.Out == nil {
		return io.Discard
	}
	return f.Out
}

// CallbackPath is the path of the loopback redirect URI.
const CallbackPath = "/callback"

// AuthorizationCode runs the authorization code flow with PKCE (S256): it
// listens on a random port of the loopback address, prints the
// authorization URL (and opens it when OpenBrowser is set), waits for the
// browser to come back with the code (the state checked), and exchanges it
// with the code verifier. ctx bounds the wait.
func (f *Flow) AuthorizationCode(ctx context.Context) (*oauth2.Token, error) {
	if f.Provider.AuthURL == "" {
		return nil, errors.New("the authorization server has no authorization endpoint: use the device code flow (--device)")
	}
	host := f.CallbackHost
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + CallbackPath
	cfg := f.config(redirect)
	verifier := oauth2.GenerateVerifier()
	state := randomHex(16)
	opts := append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}, f.extraAuthParams...)
	authURL := cfg.AuthCodeURL(state, opts...)

	type result struct {
		code string
		err  error
	}
	done := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != CallbackPath {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		var res result
		switch {
		case q.Get("state") != state:
			http.Error(w, "This is not the answer to a2aflow's login (the state does not match).", http.StatusBadRequest)
			return // not ours: keep waiting
		case q.Get("error") != "":
			res.err = fmt.Errorf("the authorization server refused the login: %s %s", q.Get("error"), q.Get("error_description"))
		case q.Get("code") == "":
			res.err = errors.New("the authorization server came back without a code")
		default:
			res.code = q.Get("code")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if res.err != nil {
			fmt.Fprintf(w, "<p>a2aflow login failed: %s</p>", html.EscapeString(res.err.Error()))
		} else {
			fmt.Fprint(w, "<p>a2aflow is logged in. You can close this window.</p>")
		}
		select {
		case done <- res:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	fmt.Fprintf(f.out(), "Open this URL in a browser to log in (a2aflow waits for it on %s):\n\n  %s\n\n", redirect, authURL)
	if f.OpenBrowser != nil {
		if err := f.OpenBrowser(authURL); err != nil {
			fmt.Fprintf(f.out(), "(could not open a browser: %v)\n", err)
		}
	}
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the browser to come back: %w", ctx.Err())
	}
	if res.err != nil {
		return nil, res.err
	}
	tok, err := cfg.Exchange(f.ctx(ctx), res.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("exchange the code at %s: %w", f.Provider.TokenURL, tokenError(err))
	}
	return tok, nil
}

// DeviceCode runs the device code flow (RFC 8628): it prints where to go
// and the code to enter, then polls the token endpoint until the user
// approves, refuses, or the code expires. ctx bounds the wait.
func (f *Flow) DeviceCode(ctx context.Context) (*oauth2.Token, error) {
	if f.Provider.DeviceURL == "" {
		return nil, errors.New("the authorization server offers no device code flow (no device authorization endpoint): log in with the browser (without --device)")
	}
	cfg := f.config("")
	ctx = f.ctx(ctx)
	resp, err := cfg.DeviceAuth(ctx)
	if err != nil {
		return nil, fmt.Errorf("device authorization at %s: %w", f.Provider.DeviceURL, tokenError(err))
	}
	if resp.VerificationURIComplete != "" {
		fmt.Fprintf(f.out(), "Open %s to log in (or go to %s and enter the code %s).\n", resp.VerificationURIComplete, resp.VerificationURI, resp.UserCode)
	} else {
		fmt.Fprintf(f.out(), "Go to %s and enter the code %s to log in.\n", resp.VerificationURI, resp.UserCode)
	}
	if f.OpenBrowser != nil {
		u := resp.VerificationURIComplete
		if u == "" {
			u = resp.VerificationURI
		}
		if err := f.OpenBrowser(u); err != nil {
			fmt.Fprintf(f.out(), "(could not open a browser: %v)\n", err)
		}
	}
	tok, err := cfg.DeviceAccessToken(ctx, resp)
	if err != nil {
		return nil, fmt.Errorf("device code login at %s: %w", f.Provider.TokenURL, tokenError(err))
	}
	return tok, nil
}

// authStyle: a public client names itself in the form (oauth2's
// autodetection would send every refused request twice); a confidential
// one is left to autodetection (basic, else the form).
func authStyle(secret string) oauth2.AuthStyle {
	if secret == "" {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// tokenError keeps what an OAuth error says (its code and description)
// without the response body oauth2.RetrieveError prints.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		if re.ErrorDescription != "" {
			return fmt.Errorf("%s: %s", re.ErrorCode, re.ErrorDescription)
		}
		return errors.New(re.ErrorCode)
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
