package temporalserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/a2aflow/a2aflow/blobstore"
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
// as reachable as the UI, which already shows every payload in history.
//
// The front serves on its reserved listener; the backend port is released
// right before the library binds it, because the library ends the process
// when it cannot.
func (s *Server) startUI(res *portReservations, p uiPorts, namespace string, codecStore blobstore.Store) error {
	front := res.take(p.front)
	if front == nil {
		return errors.New("temporal UI: listener not reserved")
	}
	res.release()
	backendHost := p.backend.bindHost
	if strings.Contains(backendHost, ":") {
		// The UI joins host and port with a plain colon.
		backendHost = "[" + backendHost + "]"
	}
	s.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                backendHost,
		Port:                p.backend.port,
		TemporalGRPCAddress: s.frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		// Plain HTTP on a local address: a secure cookie would never be
		// sent back, breaking the CSRF check.
		CORS:             uiconfig.CORS{CookieInsecure: true},
		HideLogs:         true,
		DisableNewsFetch: true,
		// Relative: the browser calls it on the origin it opened the UI on.
		Codec: uiconfig.Codec{Endpoint: CodecPath},
	}))
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
	mux.Handle(CodecPath+"/", blobstore.CodecHandler(codecStore, blobstore.CodecOptions{Logger: s.logger}))
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
