package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/oauthlogin"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/policies"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// dialTemporal connects to the frontend (temporal_conn.go: address, TLS,
// credentials), retrying for up to a minute so that api and worker
// processes may start before the Temporal server; a TLS or credentials
// failure ends it at once.
// The client, and the workers built on it, keep payloads of 256 KiB or more
// in the payload store (cfg.payloadStore) and only references in history.
func dialTemporal(ctx context.Context, cfg *config, logger *slog.Logger) (client.Client, error) {
	payloads, err := cfg.payloadStore()
	if err != nil {
		return nil, err
	}
	logger.Info("large payloads kept outside Temporal history", "payload_store", payloads.Describe())
	opts := client.Options{
		HostPort:        cfg.TemporalAddr,
		Namespace:       cfg.Namespace,
		Logger:          sdkLogger(logger), // the SDK's own lines at warn unless debug (logging.go)
		ExternalStorage: blobstore.ExternalStorage(payloads),
	}
	if opts, err = cfg.temporalClientOptions(opts); err != nil {
		return nil, err
	}
	if args := tracingLogArgs(); args != nil {
		logger.Info("exporting traces", args...) // tracing.go
	}
	logger.Info("connecting to Temporal", append([]any{"addr", opts.HostPort, "namespace", opts.Namespace}, cfg.Conn.describe...)...)
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			return c, nil
		}
		if failure := dialFailure(ctx, opts, err); failure != nil {
			return nil, failure
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", cfg.TemporalAddr, cfg.Namespace, err)
		}
		logger.Warn("Temporal not reachable yet, retrying", "addr", cfg.TemporalAddr, "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

// setWorkflowCache sizes the worker's sticky workflow cache
// (--workflow-cache-size). The SDK keeps one per process, shared by every
// worker in it and sized when the first one is created; in serve the
// embedded Temporal server's own system workers are created first, so
// this runs before the server starts.
func (cfg *config) setWorkflowCache() error {
	if cfg.WorkflowCacheSize < 0 {
		return fmt.Errorf("--workflow-cache-size %d: want 0 (no cache: every turn replays the task's history) or more", cfg.WorkflowCacheSize)
	}
	worker.SetStickyWorkflowCacheSize(cfg.WorkflowCacheSize)
	return nil
}

// startWorker registers the task workflow and the activities and starts
// polling; the workflow hints notifier of new task events. The returned
// function stops the worker and closes its database.
func startWorker(c client.Client, cfg *config, notifier wire.Notifier, logger *slog.Logger) (stop func(), err error) {
	policy, err := cfg.outboundPolicy(logger)
	if err != nil {
		return nil, err
	}
	store, err := models.Open(cmdutil.DatabaseDSN(cfg.DataDir, cfg.DatabaseDSN))
	if err != nil {
		return nil, err
	}
	deps := workerDeps{client: c, store: store, notifier: notifier}
	closeAll := func() {
		if deps.mcp != nil {
			deps.mcp.Close() // its MCP sessions end with the worker
		}
		_ = store.Close()
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	if deps.keyring, err = cfg.workerKeyring(store); err != nil {
		return nil, err
	}
	wopts, err := cfg.workerOptions(store)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, cfg.TaskQueue, wopts)
	opts := engine.Options{Push: cfg.Push.workflowOptions(), RetryBudget: cfg.RetryBudget, Notifier: notifier}
	reg, err := cfg.workerAgents()
	if err != nil {
		return nil, err
	}
	w.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, opts), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	w.RegisterWorkflowWithOptions(engine.EndedPushConfigsWorkflow, workflow.RegisterOptions{Name: wire.EndedPushConfigsWorkflowName})
	if deps.provider, deps.providers, err = cfg.llmProviders(logger); err != nil {
		return nil, err
	}
	if deps.payloads, err = cfg.payloadStore(); err != nil {
		return nil, err
	}
	// Every outbound request of the activities goes through the guarded
	// outbound client.
	deps.out = outbound.New(outbound.Options{Policy: policy})
	if deps.mcp, err = cfg.mcpClient(deps.keyring, deps.out, logger); err != nil {
		return nil, err
	}
	if err := cfg.registerActivities(w, reg, deps); err != nil {
		return nil, err
	}
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker on task queue %s: %w", cfg.TaskQueue, err)
	}
	logger.Debug("worker started", "task_queue", cfg.TaskQueue)
	cfg.Lifecycle.workerStarted()
	if v := wopts.DeploymentOptions.Version; wopts.DeploymentOptions.UseVersioning {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := makeCurrentIfNone(ctx, c, v, logger)
		cancel()
		if err != nil {
			w.Stop()
			return nil, err
		}
		logger.Info("worker runs as a worker deployment version", "deployment", v.DeploymentName, "build_id", v.BuildID)
	}
	return func() {
		cfg.Lifecycle.stopWorker(w.Stop, logger)
		closeAll()
	}, nil
}

// workerDeps is what the worker's activities are built from.
type workerDeps struct {
	client    client.Client
	store     *models.Store // a2aflow's database
	notifier  wire.Notifier // the workflow's hints of new task events
	keyring   *remote.Keyring
	provider  llm.Provider            // the default LLM; nil without one
	providers map[string]llm.Provider // by name, for agents that name theirs
	payloads  blobstore.Store
	out       *outbound.Client
	mcp       *activities.MCP
}

// outboundPolicy loads the outbound credentials (--outbound-credentials)
// and returns the hosts outbound requests may reach beyond those of the
// operator's agents (--outbound-allow-hosts).
func (cfg *config) outboundPolicy(logger *slog.Logger) (*outbound.Policy, error) {
	var err error
	if cfg.OutboundCredentialsFile != "" && cfg.keyring == nil {
		if cfg.keyring, err = remote.LoadKeyring(cfg.OutboundCredentialsFile); err != nil {
			return nil, fmt.Errorf("--outbound-credentials: %w", err)
		}
	}
	policy, err := outbound.ParsePolicy(cfg.OutboundAllowHosts)
	if err != nil {
		return nil, fmt.Errorf("--outbound-allow-hosts: %w", err)
	}
	logger.Debug("outbound requests", "may reach", policy.String(), "and", "the hosts of the operator's agents")
	return policy, nil
}

// workerKeyring is the outbound credentials' keyring, with the OAuth logins
// of a2aflow agents login answering the auth references the credentials
// file lacks, their tokens sealed with the secrets key.
func (cfg *config) workerKeyring(store *models.Store) (*remote.Keyring, error) {
	keyring := cfg.keyring
	if len(cfg.Secrets.keys) > 0 {
		sealer, err := secrets.NewSealer(cfg.Secrets.keys...)
		if err != nil {
			return nil, fmt.Errorf("--secrets-key: %w", err)
		}
		keyring = keyring.WithLogins(&oauthlogin.Store{DB: store.DB(), Sealer: sealer})
		cfg.keyring = keyring // serve's peer checks too
	}
	return keyring, nil
}

// workerOptions returns the worker's options: its deployment, lifecycle,
// interceptors, and what the agents' own activities reach from their
// context.
func (cfg *config) workerOptions(store *models.Store) (worker.Options, error) {
	wopts, err := cfg.Deployment.workerOptions(engine.WorkerOptions())
	if err != nil {
		return wopts, err
	}
	wopts = cfg.Lifecycle.workerOptions(wopts)
	wopts.DisableEagerActivities = !cfg.EagerActivities
	wopts.Interceptors = append(wopts.Interceptors,
		engine.NewLoggingInterceptor(), // task keys on workflow and activity logs
		engine.NewOwnerInterceptor(),   // the task's owner for its activities
		engine.NewForkInterceptor())    // a fork's recorded activity results
	wopts.Interceptors = append(wopts.Interceptors, tracingWorkerInterceptors()...) // GenAI spans, with tracing on
	// What the agents' own activities reach from their context: the
	// database and the credentials users gave their tasks (workerenv).
	// The approval policies in force judge the policy gates (DecidePolicy).
	env := &workerenv.Env{DB: store.DB(), Policies: policies.NewEngine(store)}
	if cfg.Secrets.credentials != nil {
		env.Credentials = cfg.Secrets.credentials
	}
	wopts.BackgroundActivityContext = workerenv.With(context.Background(), env)
	return wopts, nil
}

// llmProviders returns the default LLM (the program's, else the
// environment's) and every provider the environment configures, for agents
// that name theirs (config file agents' provider key), the program's own
// winning. Without an LLM the worker runs on; LLM agents answer how to
// configure one.
func (cfg *config) llmProviders(logger *slog.Logger) (llm.Provider, map[string]llm.Provider, error) {
	provider, err := cfg.app.LLM, error(nil)
	if provider == nil {
		provider, err = llm.FromEnv()
	}
	if err != nil && !errors.Is(err, llm.ErrNotConfigured) {
		logger.Warn("LLM configuration not used", "error", err)
	} else if err == nil {
		logger.Info("LLM configured", "provider", provider.Name(), "model", provider.Model())
	}
	providers := llm.ConfiguredProviders()
	if cfg.app.LLM != nil {
		providers[cfg.app.LLM.Name()] = cfg.app.LLM
	}
	if err := cfg.checkAgentProviders(provider, providers); err != nil { // configagents.go
		return nil, nil, err
	}
	return provider, providers, nil
}

// mcpClient is the client of the MCP servers of the program and the config
// file, whose tools LLM agents call.
func (cfg *config) mcpClient(keyring *remote.Keyring, out *outbound.Client, logger *slog.Logger) (*activities.MCP, error) {
	servers, err := cfg.mcpServers()
	if err != nil {
		return nil, err
	}
	for _, srv := range servers {
		if srv.Credentials == "" {
			continue
		}
		if _, err := keyring.Credentials(srv.Credentials); err != nil {
			return nil, fmt.Errorf("MCP server %q: %w", srv.Name, err)
		}
	}
	return &activities.MCP{Servers: servers, Keyring: keyring, Outbound: out, Logger: logger}, nil
}

// registerActivities registers the activities of the task workflow, then
// the agents' own activities and tools, under the names Agent.Activities
// gives them, after the built-in tools of LLM agents (llmagents), which an
// agent may list too.
func (cfg *config) registerActivities(w worker.Worker, reg *engine.Registry, d workerDeps) error {
	// Delegation to remote A2A agents and the directory tools, the directory
	// seen as the task's owner sees it.
	owners := &activities.WorkflowOwners{Client: d.client}
	directory := &activities.Directory{Store: d.store, Keyring: d.keyring, Outbound: d.out, Owners: owners}
	// Credentials users gave for remote agents' auth-required questions,
	// which the send activity opens for the agent's task that asked.
	remoteAgents := &activities.Remote{Directory: d.store, Keyring: d.keyring, Outbound: d.out, Owners: owners,
		RequireSignedPeers: cfg.RequireSignedPeers, Live: liveOf(d.notifier), Heartbeats: d.client}
	if cfg.Secrets.credentials != nil {
		remoteAgents.Credentials = cfg.Secrets.credentials
	}
	activities.Set{
		Webhooks:         cfg.Push.activity(cfg.Secrets.sealer),
		ApprovalWebhooks: cfg.ApprovalWebhooks.activity(cfg.Push.policy),
		LLM: &activities.LLM{Provider: d.provider, Providers: d.providers, Prices: cfg.filePrices, Usage: d.store, Live: liveOf(d.notifier),
			Limits: cfg.fileLimits, Leases: d.store, Budgets: cfg.fileBudgets, Spend: d.store},
		Tasks:        &activities.Tasks{Client: d.client},
		HistoryPages: &activities.HistoryPages{Store: d.payloads},
		Remote:       remoteAgents,
		// File parts given by URI, fetched for the model through the guard.
		Files: &activities.Files{Client: d.out.HTTPClient(activities.FileUse(0))},
		// The skills of remote agents, for the tools of LLM agents from
		// the config file (configagents.go).
		Directory: directory,
		MCP:       d.mcp,
	}.Register(w)
	return engine.RegisterActivities(w, append([]*workflows.Agent{llmagents.BuiltinTools(directory), cfg.app.toolsAgent()}, reg.Agents()...)...)
}

// listen opens addr for the HTTP API, turning "address already in use" into
// one clear line.
func listen(addr, what string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s cannot listen on %s: %w (is another a2aflow running? choose another address with the flag or environment variable)", what, addr, err)
	}
	return ln, nil
}

// serveAPI serves the A2A HTTP API on ln, and its gRPC binding on grpcLn
// when not nil, until ctx is done.
func serveAPI(ctx context.Context, ln, grpcLn net.Listener, c client.Client, cfg *config, hints *hints.Broker, logger *slog.Logger) error {
	approvers, err := guard.ParseApproverGroups(cfg.ApproverGroups)
	if err != nil {
		return fmt.Errorf("--approver-groups: %w", err)
	}
	policyAdmins, err := guard.ParseApproverGroups(cfg.PolicyAdmins) // the same "name:a,b;name2:c" form
	if err != nil {
		return fmt.Errorf("--policy-admins: %w", err)
	}
	if cfg.Auth.authenticator.Enabled() && approvers == nil {
		logger.Warn("authentication is on and --approver-groups is empty: nobody may decide approvals but requesters whose requests allow them (the requester group)")
	}
	payloads, err := cfg.payloadStore()
	if err != nil {
		return err
	}
	reg, err := cfg.registry()
	if err != nil {
		return err
	}
	if err := cfg.Auth.authenticator.CheckAgents(reg.Names()); err != nil {
		return fmt.Errorf("--api-key-agents: %w", err)
	}
	cardSigner, err := cfg.CardKey.signer() // keys.go
	if err != nil {
		return err
	}
	stores, closeStores, err := openAPIStores(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeStores()
	draining := make(chan struct{}) // closed on shutdown: streams end
	apiURL := cfg.PublicURL
	if apiURL == "" {
		apiURL = httpURL(ln)
	}
	disk, err := newDiskGuard(cfg.DataDir, cfg.DiskReserve)
	if err != nil {
		return err
	}
	server := api.New(c, reg, api.Config{
		Limits:            cfg.HTTP.limits(),
		ApproverGroups:    approvers,
		TemporalUIURL:     cfg.TemporalUIURL,
		Namespace:         cfg.Namespace,
		PublicURL:         cfg.PublicURL,
		TaskQueue:         cfg.TaskQueue,
		Logger:            logger,
		Notifier:          hints,
		Auth:              cfg.Auth.authenticator,
		Push:              cfg.Push.apiOptions(cfg.Secrets.sealer),
		Payloads:          payloads,
		WaitTimeout:       cfg.WaitTimeout,
		NoLeanWrites:      !cfg.LeanWrites,
		NoLocalModelCalls: !cfg.LocalModelCalls,
		UICodecOrigins:    cfg.UICodecOrigins,
		Credentials:       cfg.Secrets.credentials,
		Usage:             stores.usage,
		Policies:          stores.policies,
		Delegations:       stores.delegations,
		PolicyAdmins:      policyAdmins,
		Waitpoints:        wire.NewWaitpointTokens(cfg.Secrets.keys...),
		Routes:            cfg.app.Routes,
		AccessLog:         cfg.AccessLog,
		DefaultHistoryLength: func() int {
			if cfg.DefaultHistoryLength <= 0 {
				return -1 // all
			}
			return cfg.DefaultHistoryLength
		}(),
		ShuttingDown:    draining,
		ReadinessChecks: append(cfg.Lifecycle.readinessChecks(), disk.checks()...),
		StorageCheck:    disk.check,
		CardSigner:      cardSigner,
		GRPC:            cfg.GRPC.apiConfig(grpcLn, apiURL, cfg.HTTP.WriteTimeout),
	})
	srv := &http.Server{
		Handler:           server.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if err := cfg.HTTP.apply(srv, cfg.WaitTimeout); err != nil {
		return err
	}
	var grpcSrv *grpc.Server
	if grpcLn != nil {
		grpcSrv = server.GRPCServer()
	}
	return serveBindings(ctx, cfg, srv, ln, grpcSrv, grpcLn, draining, logger)
}

// serveBindings serves srv on ln, and grpcSrv on grpcLn when not nil, until
// ctx is done or either fails; on shutdown both stop together, draining
// closed when the streams must end.
func serveBindings(ctx context.Context, cfg *config, srv *http.Server, ln net.Listener, grpcSrv *grpc.Server, grpcLn net.Listener, draining chan struct{}, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	grpcErrc := make(<-chan error)
	stopGRPC := func(time.Time) {}
	if grpcLn != nil {
		grpcErrc, stopGRPC = serveGRPC(grpcSrv, grpcLn, logger)
	}
	select {
	case err := <-errc:
		stopGRPC(time.Now())
		return err
	case err := <-grpcErrc:
		_ = srv.Close()
		return fmt.Errorf("gRPC binding: %w", err)
	case <-ctx.Done():
		// Both stop together: the HTTP shutdown closes draining, which
		// ends the streams of both.
		deadline := cfg.Lifecycle.begin()
		grpcStopped := make(chan struct{})
		go func() { stopGRPC(deadline); close(grpcStopped) }()
		err := cfg.Lifecycle.shutdownHTTP(srv, errc, draining, logger)
		<-grpcStopped
		return err
	}
}

// httpURL turns a listen address such as ":8080" into a URL a person can open.
func httpURL(ln net.Listener) string {
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "localhost"
	}
	return fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(addr.Port)))
}

// levelAtLeast drops records below min, whatever the wrapped handler allows.
type levelAtLeast struct {
	slog.Handler
	min slog.Level
}

func (h levelAtLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelAtLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelAtLeast{h.Handler.WithAttrs(attrs), h.min}
}

func (h levelAtLeast) WithGroup(name string) slog.Handler {
	return levelAtLeast{h.Handler.WithGroup(name), h.min}
}

// apiStores are what the API reads in a2aflow's database, the one the
// workers share: the usage totals (GET /usage) the workers recorded, the
// approval policies (/policies) and the delegations (/delegations).
type apiStores struct {
	usage       resources.UsageReader
	policies    resources.PolicyStore
	delegations resources.DelegationStore
}

// openAPIStores opens the database when the server has one (none: every
// store nil), pruning the old judged requests in the background until ctx
// is done; the function returned closes it.
func openAPIStores(ctx context.Context, cfg *config, logger *slog.Logger) (apiStores, func(), error) {
	if cfg.DataDir == "" && cfg.DatabaseDSN == "" {
		return apiStores{}, func() {}, nil
	}
	store, err := models.Open(cmdutil.DatabaseDSN(cfg.DataDir, cfg.DatabaseDSN))
	if err != nil {
		return apiStores{}, nil, err
	}
	if cfg.PolicyRequestsRetention > 0 {
		go prunePolicyRequests(ctx, store, cfg.PolicyRequestsRetention, logger)
	}
	return apiStores{usage: store, policies: store, delegations: store}, func() { _ = store.Close() }, nil
}

// policyRequestsPruneEvery is how often the API deletes the judged
// requests older than --policy-requests-retention.
const policyRequestsPruneEvery = time.Hour

// prunePolicyRequests deletes the judged requests older than retention at
// once and every policyRequestsPruneEvery until ctx is done.
func prunePolicyRequests(ctx context.Context, store *models.Store, retention time.Duration, logger *slog.Logger) {
	tick := time.NewTicker(policyRequestsPruneEvery)
	defer tick.Stop()
	for {
		n, err := store.PrunePolicyRequests(ctx, time.Now().Add(-retention))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("policy requests not pruned", "error", err)
		case n > 0:
			logger.Info("policy requests pruned", "deleted", n, "older than", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
