package temporalserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/a2aflow/a2aflow/internal/blobstore"
)

// CodecPath is where the Web UI's address serves the codec endpoint that
// resolves payloads kept outside history (blobstore.CodecHandler): the UI
// posts to CodecPath+"/decode" and CodecPath+"/download".
const CodecPath = "/a2aflow/codec"

// uiPorts are the UI's endpoints: front is the address users open, backend
// the loopback port of the UI library behind it.
type uiPorts struct {
	front   endpoint
	backend endpoint
}

// startUI runs the Web UI in the background: the UI library on the loopback
// backend port, and in front of it, on the UI's address, a server that
// answers CodecPath itself and passes everything else to the library.
//
// The front exists because the UI library (temporalio/ui-server) accepts no
// extra handlers and the browser, not the UI server, calls the codec: served
// on the UI's own origin, under a relative endpoint, the codec works under
// whatever host name the user opens the UI by, needs no CORS, and is exactly
// as reachable as the UI, which already shows every payload in history. It
// asks for no login even when the UI does (UIOIDC): its keys are SHA-256
// sums of the payloads, so it only returns a payload to whoever already
// holds it, and the UI could not send it a token on a relative endpoint.
//
// The front serves on its reserved listener; the backend port is released
// right before the library binds it, because the library ends the process
// when it cannot.
func (s *Server) startUI(res *portReservations, p uiPorts, o Options) error {
	front := res.take(p.front)
	if front == nil {
		return errors.New("temporal UI: listener not reserved")
	}
	res.release()
	cfg := uiConfig(o, p.backend, s.frontendAddr)
	if s.tls != nil {
		cfg.TLS = s.tls.uiTLS()
	}
	s.ui = uiserver.NewServer(uioptions.WithConfigProvider(cfg))
	s.uiBackend = p.backend.dialAddr()
	s.uiURL = "http://" + p.front.dialAddr()
	s.uiDone = make(chan struct{})
	go func() {
		defer close(s.uiDone)
		// Start returns nil once Stop closes the server.
		if err := s.ui.Start(); err != nil {
			s.logger.Error("Temporal UI stopped", "error", err)
		}
	}()

	backend := &url.URL{Scheme: "http", Host: s.uiBackend}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(backend)
			// The UI sees the host the browser used, as if it served it.
			r.Out.Host = r.In.Host
		},
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
	}
	mux := http.NewServeMux()
	mux.Handle(CodecPath+"/", blobstore.CodecHandler(o.CodecStore, blobstore.CodecOptions{Logger: s.logger}))
	mux.Handle("/", proxy)
	s.uiFront = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.uiFrontDone = make(chan struct{})
	go func() {
		defer close(s.uiFrontDone)
		if err := s.uiFront.Serve(front); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("Temporal UI stopped", "error", fmt.Errorf("serve %s: %w", p.front.listenAddr(), err))
		}
	}()
	return nil
}

// uiConfig is the UI library's configuration: it listens on backend, calls
// the frontend at frontendAddr and shows o.Namespace first; write actions
// and login follow o.UIWriteActions and o.UIOIDC.
func uiConfig(o Options, backend endpoint, frontendAddr string) *uiconfig.Config {
	host := backend.bindHost
	if strings.Contains(host, ":") {
		// The UI joins host and port with a plain colon.
		host = "[" + host + "]"
	}
	cfg := &uiconfig.Config{
		Host:                host,
		Port:                backend.port,
		TemporalGRPCAddress: frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    o.Namespace,
		// Plain HTTP on a local address: a secure cookie would never be
		// sent back, breaking the CSRF check.
		CORS:             uiconfig.CORS{CookieInsecure: true},
		HideLogs:         true,
		DisableNewsFetch: true,
		// Relative: the browser calls it on the origin it opened the UI on.
		Codec: uiconfig.Codec{Endpoint: CodecPath},
		// The UI hides the buttons, and the UI server refuses every
		// non-GET API call but queries.
		DisableWriteActions: !o.UIWriteActions,
	}
	if u := o.UIOIDC; u != nil {
		cfg.Auth = uiconfig.Auth{
			Enabled: true,
			// One provider: no login page to choose it on.
			RedirectToProvider: true,
			Providers: []uiconfig.AuthProvider{{
				Label:        "sso",
				Type:         "oidc",
				ProviderURL:  u.IssuerURL,
				ClientID:     u.ClientID,
				ClientSecret: u.ClientSecret,
				Scopes:       u.Scopes,
				CallbackURL:  u.CallbackURL,
			}},
		}
		// Reached over https (the callback says how browsers reach the
		// UI), the CSRF cookie can be Secure like the session cookies.
		cfg.CORS.CookieInsecure = !strings.HasPrefix(u.CallbackURL, "https://")
	}
	return cfg
}

// issuerTimeout bounds the read of the OIDC issuer's discovery document.
const issuerTimeout = 10 * time.Second

// checkIssuer reads u's discovery document as the UI library will, so that
// an unreachable or misconfigured issuer is an error of Start: the library
// ends the process (log.Fatal) when its own read fails.
func checkIssuer(ctx context.Context, u *UIOIDC) error {
	ctx, cancel := context.WithTimeout(ctx, issuerTimeout)
	defer cancel()
	provider, err := oidc.NewProvider(ctx, u.IssuerURL)
	if err != nil {
		return fmt.Errorf("temporal UI OIDC issuer %s: %w", u.IssuerURL, err)
	}
	if provider.Endpoint().AuthURL == "" {
		return fmt.Errorf("temporal UI OIDC issuer %s: the discovery document has no authorization_endpoint", u.IssuerURL)
	}
	return nil
}
