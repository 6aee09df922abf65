package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/namespaces"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// roles are what a process command runs: serve all three, temporal, api and
// worker one each.
type roles struct {
	// embedded: the embedded Temporal server and its Web UI (serve,
	// temporal), which the process's client then dials.
	embedded bool
	// api: the A2A API, HTTP and gRPC (serve, api).
	api bool
	// worker: the worker of the task workflows and activities (serve,
	// worker).
	worker bool
}

// start runs the process of roles r with cfg until ctx is done (or the API
// or the worker fails). Every process command starts here, in this order,
// each step for the roles that have it, so that a mistake is reported
// before anything slow has started. What a step starts is stopped when
// start returns, in the reverse order.
func start(ctx context.Context, cfg *config, r roles) error {
	s := &startup{cfg: cfg, r: r, logger: cfg.logger()}
	defer s.stop()
	for _, step := range []func(context.Context) error{
		s.check,          // 1
		s.claimPorts,     // 2
		s.buildFromFlags, // 3
		s.startTemporal,  // 4
		s.dialTemporal,   // 5
		s.hearHints,      // 6
		s.runWorker,      // 7
		s.addPeers,       // 8
		s.announce,       // 9
		s.serve,          // 10
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// startup is a process command's start-up: what each step of start made for
// the steps after it, and what to stop when it returns.
type startup struct {
	cfg    *config
	r      roles
	logger *slog.Logger
	stops  []func() // stop runs them last first

	peers          []peer        // serve's --peer
	ln, grpcLn     net.Listener  // the API's; grpcLn nil without --grpc-addr
	apiURL         string        // where the API is reached
	health         *healthServer // a worker's alone
	srv            *temporalserver.Server
	frontendListen string // --temporal-addr as given, before the embedded server sets it
	client         client.Client
	broker         *hints.Broker // what the API's streams hear; nil: they poll
	hintsFrom      string        // where an api alone hears them, for the printout
}

// deferStop has stop run f.
func (s *startup) deferStop(f func()) { s.stops = append(s.stops, f) }

// stop stops what the steps started, last first.
func (s *startup) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// check (1) checks what needs nothing started: the agents and the flags.
func (s *startup) check(context.Context) error {
	cfg := s.cfg
	var err error
	if s.peers, err = parsePeers(cfg.Peers); err != nil {
		return err
	}
	if s.r.worker {
		if _, err := cfg.workerAgents(); err != nil {
			return err
		}
		// Before the embedded server, whose system workers would size the
		// SDK's one workflow cache first.
		if err := cfg.setWorkflowCache(); err != nil {
			return err
		}
	}
	if s.r.api {
		if err := cfg.HTTP.check(cfg.WaitTimeout); err != nil {
			return err
		}
	}
	if !s.r.embedded {
		return cfg.resolveTemporal() // sets the namespace the steps below use
	}
	return nil
}

// claimPorts (2) listens on the API's ports (HTTP, gRPC), a worker's health
// port and temporal's metrics port.
func (s *startup) claimPorts(ctx context.Context) error {
	cfg := s.cfg
	var err error
	if s.r.api {
		if s.ln, err = listen(cfg.HTTPAddr, "the A2A API"); err != nil {
			return err
		}
		s.deferStop(func() { s.ln.Close() })
		if s.grpcLn, err = cfg.GRPC.listen(); err != nil {
			return err
		}
		if s.grpcLn != nil {
			s.deferStop(func() { s.grpcLn.Close() })
		}
		if s.apiURL = cfg.PublicURL; s.apiURL == "" {
			s.apiURL = httpURL(s.ln)
		}
	}
	if s.r.worker && !s.r.api {
		// The health port answers liveness while Temporal is dialled.
		if s.health, err = cfg.Lifecycle.serveHealth(cfg.Namespace, s.logger); err != nil {
			return err
		}
		s.deferStop(s.health.close)
	}
	if s.r.embedded && !s.r.api {
		stopMetrics, err := cfg.Metrics.serve(ctx, s.logger) // temporal's --metrics-addr
		if err != nil {
			return err
		}
		s.deferStop(stopMetrics)
	}
	return nil
}

// buildFromFlags (3) builds what the flags describe: authentication, the
// secrets key (serve generates one under the data dir), the credential
// store it seals, the push and approval webhooks, the card key signing push
// notifications.
func (s *startup) buildFromFlags(ctx context.Context) error {
	cfg, logger := s.cfg, s.logger
	if s.r.api {
		if err := cfg.Auth.build(ctx, logger); err != nil {
			return err
		}
	}
	if s.r.api || s.r.worker {
		keyDir := ""
		if s.r.embedded {
			keyDir = cfg.DataDir // serve keeps a generated key
		}
		if err := cfg.Secrets.build(keyDir, logger); err != nil {
			return err
		}
		if err := cfg.Push.build(cfg.Secrets.sealer != nil, logger); err != nil {
			return err
		}
		if err := cfg.buildCredentials(logger); err != nil {
			return err
		}
	}
	if !s.r.worker {
		return nil
	}
	if err := cfg.ApprovalWebhooks.build(cfg.Push.policy, s.apiURL, logger); err != nil {
		return err
	}
	signer, err := cfg.CardKey.signer() // keys.go
	if err != nil {
		return err
	}
	issuer := s.apiURL // serve: its own API
	if !s.r.api {
		issuer = cfg.PublicURL
	}
	return cfg.Push.sign(signer, issuer, logger)
}

// startTemporal (4) starts the embedded Temporal server.
func (s *startup) startTemporal(ctx context.Context) error {
	cfg := s.cfg
	s.frontendListen = cfg.TemporalAddr // startEmbedded sets the address to dial
	if !s.r.embedded {
		return nil
	}
	var err error
	if s.srv, err = startEmbedded(ctx, cfg, s.logger); err != nil {
		return err
	}
	s.deferStop(func() { s.srv.Stop() })
	s.deferStop(cfg.Metrics.include(s.srv)) // metrics.go: the server's series on /metrics
	if cfg.TemporalUIURL == "" {
		cfg.TemporalUIURL = s.srv.UIURL()
	}
	return nil
}

// dialTemporal (5) dials Temporal, and registers the search attributes of a
// namespace this process does not serve.
func (s *startup) dialTemporal(ctx context.Context) error {
	if !s.r.api && !s.r.worker {
		return nil
	}
	cfg := s.cfg
	c, err := dialTemporal(ctx, cfg, s.logger)
	if err != nil {
		return err
	}
	s.client = c
	s.deferStop(c.Close)
	s.health.connected(c)
	if !s.r.embedded {
		if err := namespaces.Ensure(ctx, c, cfg.Namespace, namespaces.Options{SearchAttributes: wire.SearchAttributes(), Logger: s.logger}); err != nil {
			s.logger.Warn("could not register search attributes; ask the Temporal operator to add them", "error", err)
		}
	}
	return nil
}

// hearHints (6) sets up the hints of new task events the API's streams
// hear: in the process when it runs the API and the worker, else through
// the worker's database (hintTransport).
func (s *startup) hearHints(ctx context.Context) error {
	var err error
	if s.r.api && s.r.worker {
		s.broker = hints.New() // the worker hints the API straight
	} else if s.r.api && s.cfg.DatabaseDSN != "" {
		s.broker, s.hintsFrom, err = hintTransportOf(s.cfg.DatabaseDSN).listen(ctx, s.logger)
	}
	return err
}

// runWorker (7) starts the worker, which hints the API processes of other
// processes too, through its database.
func (s *startup) runWorker(context.Context) error {
	if !s.r.worker {
		return nil
	}
	cfg := s.cfg
	sender, err := hintTransportOf(cmdutil.DatabaseDSN(cfg.DataDir, cfg.DatabaseDSN)).sender(s.logger)
	if err != nil {
		return err
	}
	s.deferStop(sender.Close)
	var notifier wire.Notifier = sender
	if s.broker != nil {
		notifier = hintFanout{s.broker, sender}
	}
	stopWorker, err := startWorker(s.client, cfg, notifier, s.logger)
	if err != nil {
		return err
	}
	s.deferStop(stopWorker)
	return nil
}

// addPeers (8) puts the peers into the agent directory before the API
// serves, so the first delegation finds them; their cards are fetched in
// the background, as they may be starting at the same time.
func (s *startup) addPeers(ctx context.Context) error {
	if len(s.peers) == 0 {
		return nil
	}
	store, err := registerPeers(s.cfg, s.peers, s.logger)
	if err != nil {
		return err
	}
	s.deferStop(func() { store.Close() })
	checkCtx, cancelChecks := context.WithCancel(ctx)
	s.deferStop(checkPeers(checkCtx, store, s.cfg.keyring, s.peers, s.logger))
	s.deferStop(cancelChecks)
	return nil
}

// announce (9) says what serves where.
func (s *startup) announce(context.Context) error {
	printout{cfg: s.cfg, r: s.r, ln: s.ln, grpcLn: s.grpcLn, srv: s.srv, frontendListen: s.frontendListen, hintsFrom: s.hintsFrom, peers: s.peers}.write(os.Stdout)
	return nil
}

// serve (10) serves the API, or waits until ctx is done or the worker
// stops.
func (s *startup) serve(ctx context.Context) error {
	cfg := s.cfg
	go releaseMemoryWhenQuiet(ctx) // memory.go
	switch {
	case s.r.api:
		return serveAPI(ctx, s.ln, s.grpcLn, s.client, cfg, s.broker, s.logger)
	case s.r.worker:
		select {
		case <-ctx.Done():
			return nil
		case <-cfg.Lifecycle.workerFailed():
			// The SDK stopped the worker (the namespace is gone, the
			// server refuses this client...): exit, for a restart.
			return fmt.Errorf("the worker stopped: %w", cfg.Lifecycle.worker.fatal())
		}
	default:
		<-ctx.Done()
		return nil
	}
}
