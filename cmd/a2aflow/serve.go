package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/agents"
	"github.com/a2aflow/a2aflow/notify"
	"github.com/a2aflow/a2aflow/temporalserver"
	"github.com/a2aflow/a2aflow/workflows"
)

func newServeCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run everything in one process: embedded Temporal + Web UI, worker and the A2A HTTP API",
		Long: `serve runs a2aflow with nothing else to install: an embedded Temporal
server persisted to a SQLite file under the data dir, the Temporal Web UI, the
worker that runs every A2A task as a workflow, and the A2A HTTP API with the
built-in agents.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), cfg) },
	}
	cfg.bindHTTP(cmd.Flags())
	cfg.bindData(cmd.Flags())
	cfg.bindTemporal(cmd.Flags(), true)
	cfg.bindUI(cmd.Flags())
	cfg.bindWorker(cmd.Flags())
	cfg.Auth.bind(cmd.Flags())
	cfg.Push.bind(cmd.Flags(), true)
	cfg.ApprovalWebhooks.bind(cmd.Flags())
	cfg.bindPeers(cmd.Flags())
	cfg.Credentials.bind(cmd.Flags())
	return cmd
}

func runServe(ctx context.Context, cfg *config) error {
	logger := newLogger(cfg.LogLevel)
	peers, err := parsePeers(cfg.Peers)
	if err != nil {
		return err
	}
	if _, err := cfg.workerAgents(); err != nil {
		return err
	}
	// Claim the API port first: failing after Temporal started would be slower
	// and noisier for the same mistake.
	ln, err := listen(cfg.HTTPAddr, "the A2A API")
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := cfg.Auth.build(ctx, logger); err != nil {
		return err
	}
	if err := cfg.Push.build(cfg.DataDir, logger); err != nil {
		return err
	}
	if err := cfg.buildCredentials(cfg.DataDir, logger); err != nil {
		return err
	}
	apiURL := cfg.PublicURL
	if apiURL == "" {
		apiURL = httpURL(ln)
	}
	if err := cfg.ApprovalWebhooks.build(cfg.Push.policy, apiURL, logger); err != nil {
		return err
	}

	srv, err := startEmbedded(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer srv.Stop()

	c, err := dialTemporal(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer c.Close()
	// Worker and API share a process: the workflow hints new task events
	// straight to the API's streams.
	hints := notify.New()
	stopWorker, err := startWorker(c, cfg, hints, logger)
	if err != nil {
		return err
	}
	defer stopWorker()

	// Peers go into the directory before the API serves, so the first
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

	if cfg.TemporalUIURL == "" {
		cfg.TemporalUIURL = srv.UIURL()
	}
	base := httpURL(ln)
	fmt.Fprintf(os.Stdout, "a2aflow is serving\n")
	fmt.Fprintf(os.Stdout, "  A2A API      %s  (agents: %v; default card %s/.well-known/agent-card.json)\n", base, agents.Builtin().Names(), base)
	if srv.UIURL() != "" {
		fmt.Fprintf(os.Stdout, "  Temporal UI  %s/namespaces/%s/workflows\n", srv.UIURL(), srv.Namespace())
	}
	fmt.Fprintf(os.Stdout, "  Temporal     %s  (namespace %s)\n", srv.FrontendAddr(), srv.Namespace())
	fmt.Fprintf(os.Stdout, "  Data dir     %s\n", absPath(cfg.DataDir))
	for _, p := range peers {
		fmt.Fprintf(os.Stdout, "  Peer         %s = %s\n", p.Name, p.URL)
	}
	return serveAPI(ctx, ln, c, cfg, hints, logger)
}

// startEmbedded starts the embedded Temporal server (and UI) from cfg and
// points cfg.TemporalAddr at it.
func startEmbedded(ctx context.Context, cfg *config, logger interface {
	Info(string, ...any)
}) (*temporalserver.Server, error) {
	// The Web UI's codec reads the payloads kept outside history.
	payloads, err := cfg.payloadStore()
	if err != nil {
		return nil, err
	}
	srv, err := temporalserver.Start(ctx, temporalserver.Options{
		CodecStore:       payloads,
		DataDir:          cfg.DataDir,
		FrontendAddr:     cfg.TemporalAddr,
		UIAddr:           cfg.UIAddr,
		DisableUI:        cfg.UIAddr == "",
		Namespace:        cfg.Namespace,
		SearchAttributes: workflows.SearchAttributes(),
		DynamicConfig:    cfg.dynamicConfigValues(),
		Retention:        cfg.Retention,
	})
	if err != nil {
		return nil, fmt.Errorf("start embedded Temporal: %w", err)
	}
	cfg.TemporalAddr = srv.FrontendAddr()
	return srv, nil
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func newTemporalCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "temporal",
		Short: "Run the embedded Temporal server and Web UI alone, for separate api and worker processes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := newLogger(cfg.LogLevel)
			srv, err := startEmbedded(cmd.Context(), cfg, logger)
			if err != nil {
				return err
			}
			defer srv.Stop()
			fmt.Fprintf(os.Stdout, "Temporal is serving\n  Temporal     %s  (namespace %s)\n", srv.FrontendAddr(), srv.Namespace())
			if srv.UIURL() != "" {
				fmt.Fprintf(os.Stdout, "  Temporal UI  %s\n", srv.UIURL())
			}
			fmt.Fprintf(os.Stdout, "  Data dir     %s\n", absPath(cfg.DataDir))
			<-cmd.Context().Done()
			return nil
		},
	}
	cfg.bindData(cmd.Flags())
	cfg.bindTemporal(cmd.Flags(), true)
	cfg.bindUI(cmd.Flags())
	return cmd
}
