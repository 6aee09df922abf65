package temporalserver

import (
	"github.com/a2aflow/a2aflow/internal/namespaces"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	uiserver "github.com/temporalio/ui-server/v2/server"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

const (
	dbFileName = "temporal.db"
	// visFileName holds the visibility store (the workflow list and its
	// search attributes) of a data dir created by this version on.
	visFileName  = "temporal-visibility.db"
	lockFileName = "temporal.lock"
	// readyTimeout bounds the wait for the frontend and the UI to answer
	// after the services started.
	readyTimeout = 30 * time.Second
	// uiStopTimeout bounds the wait for the UI goroutine after closing it.
	uiStopTimeout = 5 * time.Second
)

// Server is a running embedded Temporal server with its Web UI. Create it
// with Start and end it with Stop.
type Server struct {
	logger       *slog.Logger
	serverLog    serverLogger
	temporal     temporal.Server
	ui           *uiserver.Server
	uiDone       chan struct{} // closed when the UI goroutine returns
	uiFront      *http.Server  // the UI's listener: codec, else proxy to ui
	uiFrontDone  chan struct{} // closed when uiFront's goroutine returns
	uiBackend    string        // host:port of ui, on the loopback interface
	lock         *dirLock
	frontendAddr string
	uiURL        string
	namespace    string
	dbPath       string
	visPath      string               // "" when temporal.db holds the visibility store too
	tls          *frontendTLS         // nil: the frontend serves plain gRPC
	metrics      *prometheus.Registry // the server's own metrics; nil unless Options.Metrics (metrics.go)
	metricsStop  io.Closer

	stopOnce sync.Once
	stopErr  error
}

// Start starts the Temporal services and the Web UI, as configured by opts,
// and returns once the frontend answers calls and the namespace with its
// search attributes is ready. On error nothing is left running. ctx bounds
// the wait for readiness, not the lifetime of the server.
func Start(ctx context.Context, opts Options) (*Server, error) {
	begin := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dataDir, lock, err := openDataDir(o.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		logger:    o.Logger,
		serverLog: newServerLogger(o.LogLevel),
		lock:      lock,
		namespace: o.Namespace,
		dbPath:    filepath.Join(dataDir, dbFileName),
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop()
		}
	}()

	// Check every port before anything binds one: the server and UI
	// libraries exit the process when they cannot listen.
	var res, uiRes portReservations
	defer res.release()
	defer uiRes.release()
	ports, uiPorts, err := reservePorts(&res, &uiRes, o)
	if err != nil {
		return nil, err
	}
	s.frontendAddr = ports.frontend.dialAddr()
	if o.FrontendTLS != nil {
		if s.tls, err = loadFrontendTLS(o.FrontendTLS); err != nil {
			return nil, err
		}
	}
	if o.UIOIDC != nil && !o.DisableUI {
		if err := checkIssuer(ctx, o.UIOIDC); err != nil {
			return nil, err
		}
	}
	if err := s.prepareDatabases(ctx, o); err != nil {
		return nil, err
	}
	if err := s.startServices(&res, ports, o); err != nil {
		return nil, err
	}
	if !o.DisableUI {
		if err := s.startUI(&uiRes, uiPorts, o); err != nil {
			return nil, err
		}
	}
	c, err := s.waitReady(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := namespaces.Ensure(ctx, c, o.Namespace, namespaces.Options{
		SearchAttributes: o.SearchAttributes, Retention: o.Retention, Logger: o.Logger,
	}); err != nil {
		return nil, err
	}

	ok = true
	o.Logger.Info("Temporal server started",
		"frontend", s.frontendAddr, "ui", s.uiURL, "namespace", s.namespace,
		"db", s.dbPath, "took", time.Since(begin).Round(time.Millisecond))
	return s, nil
}

// openDataDir makes the data dir, returns its absolute path, and locks it
// for this process.
func openDataDir(dir string) (string, *dirLock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("temporal data dir %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", nil, fmt.Errorf("create temporal data dir: %w", err)
	}
	lock, err := lockDataDir(filepath.Join(abs, lockFileName))
	if err != nil {
		return "", nil, fmt.Errorf("temporal data dir %s: %w", abs, err)
	}
	return abs, lock, nil
}

// prepareDatabases creates the SQLite files' schemas where they are new,
// applies the visibility indexes asked for, and registers the namespace
// with its search attributes, before the services open the files.
func (s *Server) prepareDatabases(ctx context.Context, o Options) error {
	// A data dir whose temporal.db predates the visibility file keeps its
	// workflow list in temporal.db: moving it would lose the closed
	// workflows' records. (A start that died between creating the two files
	// leaves that shape too; temporal.db holds the visibility schema.)
	s.visPath = filepath.Join(filepath.Dir(s.dbPath), visFileName)
	if exists(s.dbPath) && !exists(s.visPath) {
		s.visPath = ""
	}
	created, err := ensureSchema(s.dbPath)
	if err != nil {
		return err
	}
	if created {
		o.Logger.Info("created Temporal database", "path", s.dbPath)
	}
	if s.visPath != "" {
		if created, err := ensureSchema(s.visPath); err != nil {
			return err
		} else if created {
			o.Logger.Info("created Temporal visibility database", "path", s.visPath)
		}
	}
	if n, err := applyVisibilityIndexes(ctx, s.VisibilityDBPath(), o.VisibilityIndexes); err != nil {
		return err
	} else if n > 0 {
		o.Logger.Info("changed the visibility store's indexes", "set", o.VisibilityIndexes, "indexes", n)
	}
	return ensureNamespace(s.dbPath, o.Namespace, o.SearchAttributes, o.Retention)
}

// startServices starts the Temporal services on ports, whose reservations
// in res it releases first.
func (s *Server) startServices(res *portReservations, ports serverPorts, o Options) error {
	// Hand the ports over as late as possible, to keep the window in which
	// another process could grab them small. NewServer already binds the
	// gRPC listeners while it builds the services.
	res.release()
	cfg := serverConfig(s.dbPath, s.visPath, ports)
	if s.tls != nil {
		cfg.Global.TLS = s.tls.rootTLS()
	}
	serverOpts := []temporal.ServerOption{}
	if o.Metrics {
		s.metrics = prometheus.NewRegistry()
		handler, closer := newServerMetrics(s.metrics)
		s.metricsStop = closer
		serverOpts = append(serverOpts, temporal.WithCustomMetricsHandler(handler))
	}
	srv, err := temporal.NewServer(append(serverOpts,
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: static.SingleLocalHost(ports.frontend.dialAddr()),
			primitives.HistoryService:  static.SingleLocalHost(ports.history.dialAddr()),
			primitives.MatchingService: static.SingleLocalHost(ports.matching.dialAddr()),
			primitives.WorkerService:   static.SingleLocalHost(ports.worker.dialAddr()),
		}),
		temporal.WithLogger(s.serverLog),
		temporal.WithDynamicConfigClient(dynamicConfig(o.DynamicConfig)),
	)...)
	if err != nil {
		return fmt.Errorf("create temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		_ = srv.Stop()
		return fmt.Errorf("start temporal server: %w", err)
	}
	s.temporal = srv
	return nil
}

// reservePorts checks all listen addresses, picking free ports for port 0,
// and returns the server's endpoints, reserved in res, and the UI's, reserved
// in uiRes: the UI binds later than the server.
func reservePorts(res, uiRes *portReservations, o Options) (serverPorts, uiPorts, error) {
	var p serverPorts
	var ui uiPorts
	frontend, err := parseEndpoint("temporal frontend", o.FrontendAddr)
	if err != nil {
		return p, ui, err
	}
	if p.frontend, err = res.reserve("temporal frontend", frontend); err != nil {
		return p, ui, err
	}
	// The frontend's HTTP API shares the frontend's interface.
	if p.frontendHTTP, err = res.reserve("temporal frontend HTTP", endpoint{bindHost: frontend.bindHost}); err != nil {
		return p, ui, err
	}
	internal := []struct {
		name string
		dst  *endpoint
	}{
		{"temporal history", &p.history},
		{"temporal matching", &p.matching},
		{"temporal worker", &p.worker},
	}
	for _, svc := range internal {
		if *svc.dst, err = res.reserve(svc.name, endpoint{bindHost: internalHost}); err != nil {
			return p, ui, err
		}
	}
	if o.DisableUI {
		return p, ui, nil
	}
	if ui.front, err = parseEndpoint("temporal UI", o.UIAddr); err != nil {
		return p, ui, err
	}
	if ui.front, err = uiRes.reserve("temporal UI", ui.front); err != nil {
		return p, ui, err
	}
	if ui.backend, err = uiRes.reserve("temporal UI backend", endpoint{bindHost: internalHost}); err != nil {
		return p, ui, err
	}
	return p, ui, nil
}

// waitReady waits until the frontend serves the namespace and the UI port
// accepts connections, and returns a client of the frontend.
func (s *Server) waitReady(ctx context.Context) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var lastErr error
	for {
		c, err := s.tryFrontend(ctx)
		if err == nil {
			if err = s.tryUI(ctx); err == nil {
				return c, nil
			}
			c.Close()
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("temporal server not ready: %w (last error: %v)", ctx.Err(), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tryFrontend dials the frontend and checks health and the namespace once.
func (s *Server) tryFrontend(ctx context.Context) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:          s.frontendAddr,
		Namespace:         s.namespace,
		Logger:            sdklog.NewStructuredLogger(s.logger),
		ConnectionOptions: client.ConnectionOptions{TLS: s.ClientTLS()},
	})
	if err != nil {
		return nil, fmt.Errorf("dial frontend: %w", err)
	}
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		c.Close()
		return nil, fmt.Errorf("frontend health: %w", err)
	}
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace}); err != nil {
		c.Close()
		return nil, fmt.Errorf("describe namespace %q: %w", s.namespace, err)
	}
	return c, nil
}

// tryUI checks once that the UI, behind and in front of the proxy, accepts
// connections, if it runs.
func (s *Server) tryUI(ctx context.Context) error {
	if s.ui == nil {
		return nil
	}
	for _, addr := range []string{s.uiBackend, strings.TrimPrefix(s.uiURL, "http://")} {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("UI %s: %w", addr, err)
		}
		_ = conn.Close()
	}
	return nil
}

// FrontendAddr returns the host:port the frontend listens on, with the port
// actually chosen. For a wildcard listen address it returns the loopback
// address, so the result can always be dialed locally.
func (s *Server) FrontendAddr() string { return s.frontendAddr }

// ClientTLS returns the TLS config with which a client in this process
// reaches the frontend, or nil when the frontend serves plain gRPC: it
// trusts the frontend's certificate and, when the frontend requires client
// certificates, presents the server's internal one. Dial FrontendAddr with
// it (client.ConnectionOptions.TLS).
func (s *Server) ClientTLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.clientConfig()
}

// TLS reports whether the frontend serves TLS, and whether it requires
// client certificates (mutual TLS).
func (s *Server) TLS() (on, mutual bool) {
	if s.tls == nil {
		return false, false
	}
	return true, s.tls.mutual()
}

// UIURL returns the Web UI's base URL, "http://host:port", or "" when the UI
// is disabled.
func (s *Server) UIURL() string { return s.uiURL }

// Namespace returns the namespace the server was started with.
func (s *Server) Namespace() string { return s.namespace }

// DBPath returns the absolute path of the SQLite database file.
func (s *Server) DBPath() string { return s.dbPath }

// VisibilityDBPath returns the path of the SQLite file holding the
// visibility store: DBPath for a data dir made before it had a file of its
// own.
func (s *Server) VisibilityDBPath() string {
	if s.visPath == "" {
		return s.dbPath
	}
	return s.visPath
}

// Stop stops the Web UI and the Temporal services and releases the data
// folder. Calling it again returns the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.uiFront != nil {
			_ = s.uiFront.Close()
			<-s.uiFrontDone
		}
		if s.ui != nil {
			s.ui.Stop()
			select {
			case <-s.uiDone:
			case <-time.After(uiStopTimeout):
				errs = append(errs, errors.New("temporal UI did not stop in time"))
			}
		}
		if s.temporal != nil {
			s.serverLog.quiet.Store(true)
			if err := s.temporal.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop temporal server: %w", err))
			}
		}
		if s.metricsStop != nil {
			_ = s.metricsStop.Close()
		}
		s.lock.unlock()
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}
