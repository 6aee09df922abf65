package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/hints/pghints"
	"github.com/a2aflow/a2aflow/internal/hints/unixhints"
	"github.com/a2aflow/a2aflow/internal/models"
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
// before anything slow has started:
//
//  1. check what needs nothing started: the agents and the flags;
//  2. claim the ports: the API's (HTTP, gRPC), the worker's health port,
//     temporal's metrics port;
//  3. build what the flags describe: authentication, the secrets key (serve
//     generates one under the data dir), the credential store it seals, the
//     push and approval webhooks, the card key signing push notifications;
//  4. start the embedded Temporal server;
//  5. dial Temporal (and register the search attributes of a namespace this
//     process does not serve);
//  6. hints of new task events: in the process when it runs the API and the
//     worker, else through the worker's database (hintTransport);
//  7. start the worker;
//  8. put the peers into the agent directory;
//  9. say what serves where;
//  10. serve the API, or wait.
func start(ctx context.Context, cfg *config, r roles) error {
	logger := cfg.logger()

	// 1. Checks.
	peers, err := parsePeers(cfg.Peers) // serve's --peer
	if err != nil {
		return err
	}
	if r.worker {
		if _, err := cfg.workerAgents(); err != nil {
			return err
		}
		// Before the embedded server, whose system workers would size the
		// SDK's one workflow cache first.
		if err := cfg.setWorkflowCache(); err != nil {
			return err
		}
	}
	if r.api {
		if err := cfg.HTTP.check(cfg.WaitTimeout); err != nil {
			return err
		}
	}
	if !r.embedded {
		if err := cfg.resolveTemporal(); err != nil { // sets the namespace the steps below use
			return err
		}
	}

	// 2. Ports.
	var ln, grpcLn net.Listener
	apiURL := ""
	if r.api {
		if ln, err = listen(cfg.HTTPAddr, "the A2A API"); err != nil {
			return err
		}
		defer ln.Close()
		if grpcLn, err = cfg.GRPC.listen(); err != nil {
			return err
		}
		if grpcLn != nil {
			defer grpcLn.Close()
		}
		if apiURL = cfg.PublicURL; apiURL == "" {
			apiURL = httpURL(ln)
		}
	}
	var health *healthServer
	if r.worker && !r.api {
		// The health port answers liveness while Temporal is dialled.
		if health, err = cfg.Lifecycle.serveHealth(cfg.Namespace, logger); err != nil {
			return err
		}
		defer health.close()
	}
	if r.embedded && !r.api {
		stopMetrics, err := cfg.Metrics.serve(ctx, logger) // temporal's --metrics-addr
		if err != nil {
			return err
		}
		defer stopMetrics()
	}

	// 3. What the flags describe.
	if r.api {
		if err := cfg.Auth.build(ctx, logger); err != nil {
			return err
		}
	}
	if r.api || r.worker {
		keyDir := ""
		if r.embedded {
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
	if r.worker {
		if err := cfg.ApprovalWebhooks.build(cfg.Push.policy, apiURL, logger); err != nil {
			return err
		}
		signer, err := cfg.CardKey.signer() // keys.go
		if err != nil {
			return err
		}
		issuer := apiURL // serve: its own API
		if !r.api {
			issuer = cfg.PublicURL
		}
		if err := cfg.Push.sign(signer, issuer, logger); err != nil {
			return err
		}
	}

	// 4. The embedded Temporal server.
	frontendListen := cfg.TemporalAddr // startEmbedded sets the address to dial
	var srv *temporalserver.Server
	if r.embedded {
		if srv, err = startEmbedded(ctx, cfg, logger); err != nil {
			return err
		}
		defer srv.Stop()
		defer cfg.Metrics.include(srv)() // metrics.go: the server's series on /metrics
		if cfg.TemporalUIURL == "" {
			cfg.TemporalUIURL = srv.UIURL()
		}
	}

	// 5. Temporal.
	var c client.Client
	if r.api || r.worker {
		if c, err = dialTemporal(ctx, cfg, logger); err != nil {
			return err
		}
		defer c.Close()
		health.connected(c)
		if !r.embedded {
			if err := namespaces.Ensure(ctx, c, cfg.Namespace, namespaces.Options{SearchAttributes: wire.SearchAttributes(), Logger: logger}); err != nil {
				logger.Warn("could not register search attributes; ask the Temporal operator to add them", "error", err)
			}
		}
	}

	// 6. Hints of new task events.
	var broker *hints.Broker // what the API's streams hear; nil: they poll
	hintsFrom := ""          // where an api alone hears them, for the printout
	if r.api && r.worker {
		broker = hints.New() // the worker hints the API straight
	} else if r.api && cfg.DatabaseDSN != "" {
		if broker, hintsFrom, err = hintTransportOf(cfg.DatabaseDSN).listen(ctx, logger); err != nil {
			return err
		}
	}

	// 7. The worker.
	if r.worker {
		// It hints the API processes of other processes too, through its
		// database.
		sender, err := hintTransportOf(cmdutil.DatabaseDSN(cfg.DataDir, cfg.DatabaseDSN)).sender(logger)
		if err != nil {
			return err
		}
		defer sender.Close()
		var notifier wire.Notifier = sender
		if broker != nil {
			notifier = hintFanout{broker, sender}
		}
		stopWorker, err := startWorker(c, cfg, notifier, logger)
		if err != nil {
			return err
		}
		defer stopWorker()
	}

	// 8. Peers go into the directory before the API serves, so the first
	// delegation finds them; their cards are fetched in the background, as
	// they may be starting at the same time.
	if len(peers) > 0 {
		store, err := registerPeers(cfg, peers, logger)
		if err != nil {
			return err
		}
		defer store.Close()
		checkCtx, cancelChecks := context.WithCancel(ctx)
		waitChecks := checkPeers(checkCtx, store, cfg.keyring, peers, logger)
		defer waitChecks()
		defer cancelChecks()
	}

	// 9. What serves where.
	printout{cfg: cfg, r: r, ln: ln, grpcLn: grpcLn, srv: srv, frontendListen: frontendListen, hintsFrom: hintsFrom, peers: peers}.write(os.Stdout)

	// 10. Serve, or wait.
	switch {
	case r.api:
		return serveAPI(ctx, ln, grpcLn, c, cfg, broker, logger)
	case r.worker:
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

// hintTransport is how the workflow's hints of new task events travel from
// a worker to the API processes of other processes, chosen here once from
// the worker's database (--database, which an api is given too): PostgreSQL's
// LISTEN/NOTIFY (package pghints), else Unix sockets in a folder beside the
// SQLite file (package unixhints: processes of the same host). An api
// without the database hears nothing: its streams poll.
type hintTransport struct{ dsn string }

func hintTransportOf(dsn string) hintTransport { return hintTransport{dsn: dsn} }

// hintSender is a worker's end of the transport.
type hintSender interface {
	wire.Notifier
	Close()
}

// sender returns the worker's end.
func (t hintTransport) sender(logger *slog.Logger) (hintSender, error) {
	if models.IsPostgresDSN(t.dsn) {
		return pghints.NewSender(t.dsn, logger)
	}
	return unixhints.NewSender(unixhints.Dir(t.dsn), logger)
}

// listen starts an api's end, hinting the broker it returns until ctx ends,
// and says where it listens. On Unix sockets a failure is only a warning:
// the streams poll (nil broker).
func (t hintTransport) listen(ctx context.Context, logger *slog.Logger) (*hints.Broker, string, error) {
	b := hints.New()
	if models.IsPostgresDSN(t.dsn) {
		if err := pghints.Listen(ctx, t.dsn, b, logger); err != nil {
			return nil, "", err
		}
		return b, "PostgreSQL LISTEN " + pghints.Channel, nil
	}
	dir := unixhints.Dir(t.dsn)
	if err := unixhints.Listen(ctx, dir, b, logger); err != nil {
		logger.Warn("no task event hints from the workers: streams poll", "error", err)
		return nil, "", nil
	}
	return b, "Unix sockets in " + dir, nil
}

// hintFanout hints each of its notifiers: serve's worker hints its own API
// and the API processes of other processes.
type hintFanout []wire.Notifier

func (ns hintFanout) Notify(taskID string, seq int64) {
	for _, n := range ns {
		n.Notify(taskID, seq)
	}
}

// Live sends the deltas of the answers being written to each notifier that
// takes them (hints.LiveNotifier).
func (ns hintFanout) Live(d hints.Delta) {
	for _, n := range ns {
		if l, ok := n.(hints.LiveNotifier); ok {
			l.Live(d)
		}
	}
}

// liveOf is where a worker whose hints go to n sends the deltas of the
// answers being written: n itself when it takes them.
func liveOf(n wire.Notifier) hints.LiveNotifier {
	if l, ok := n.(hints.LiveNotifier); ok {
		return l
	}
	return nil
}

// printout is what a process says on standard output once it serves: what
// serves where.
type printout struct {
	cfg            *config
	r              roles
	ln, grpcLn     net.Listener
	srv            *temporalserver.Server
	frontendListen string
	hintsFrom      string
	peers          []peer
}

func (p printout) write(w io.Writer) {
	cfg, srv := p.cfg, p.srv
	switch {
	case p.r.api && p.r.worker: // serve
		base := httpURL(p.ln)
		fmt.Fprintf(w, "a2aflow is serving\n")
		fmt.Fprintf(w, "  A2A API      %s  (agents: %v; default card %s/.well-known/agent-card.json)\n", base, cfg.agentNames(), base)
		if p.grpcLn != nil {
			fmt.Fprintf(w, "  A2A gRPC     %s  (A2A 1.0 and 0.3; an agent is the tenant of its requests)\n", p.grpcLn.Addr())
		}
		if srv.UIURL() != "" {
			fmt.Fprintf(w, "  Temporal UI  %s/namespaces/%s/workflows%s\n", srv.UIURL(), srv.Namespace(), cfg.UI.notes(cfg.UIAddr))
		}
		fmt.Fprintf(w, "  Temporal     %s  (namespace %s%s)\n", srv.FrontendAddr(), srv.Namespace(), cfg.Conn.frontendNote(p.frontendListen, srv))
		fmt.Fprintf(w, "  Data dir     %s\n", cmdutil.AbsPath(cfg.DataDir))
		for _, peer := range p.peers {
			fmt.Fprintf(w, "  Peer         %s = %s\n", peer.Name, peer.URL)
		}
	case p.r.api:
		fmt.Fprintf(w, "a2aflow API is serving\n  A2A API      %s\n", httpURL(p.ln))
		if p.grpcLn != nil {
			fmt.Fprintf(w, "  A2A gRPC     %s\n", p.grpcLn.Addr())
		}
		fmt.Fprintf(w, "  Temporal     %s  (namespace %s)\n", cfg.TemporalAddr, cfg.Namespace)
		if p.hintsFrom != "" {
			fmt.Fprintf(w, "  Hints        %s\n", p.hintsFrom)
		}
	case p.r.worker:
		fmt.Fprintf(w, "a2aflow worker is running\n  Temporal     %s  (namespace %s, task queue %s)\n", cfg.TemporalAddr, cfg.Namespace, cfg.TaskQueue)
	default: // temporal
		fmt.Fprintf(w, "Temporal is serving\n  Temporal     %s  (namespace %s%s)\n", srv.FrontendAddr(), srv.Namespace(), cfg.Conn.frontendNote(p.frontendListen, srv))
		if srv.UIURL() != "" {
			fmt.Fprintf(w, "  Temporal UI  %s%s\n", srv.UIURL(), cfg.UI.notes(cfg.UIAddr))
		}
		fmt.Fprintf(w, "  Data dir     %s\n", cmdutil.AbsPath(cfg.DataDir))
	}
}
