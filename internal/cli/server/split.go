package server

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/hints/pghints"
	"github.com/a2aflow/a2aflow/internal/hints/unixhints"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/namespaces"
	"github.com/a2aflow/a2aflow/internal/wire"
)

func newAPICmd(app *App) *cobra.Command {
	cfg := &config{app: app}
	cmd := &cobra.Command{
		Use:   "api",
		Short: "Run the stateless A2A HTTP API against a Temporal frontend (scale out: run many)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			logger := cfg.logger()
			if err := cfg.resolveTemporal(); err != nil { // sets the namespace the steps below use
				return err
			}
			ln, err := listen(cfg.HTTPAddr, "the A2A API")
			if err != nil {
				return err
			}
			defer ln.Close()
			grpcLn, err := cfg.GRPC.listen()
			if err != nil {
				return err
			}
			if grpcLn != nil {
				defer grpcLn.Close()
			}
			if err := cfg.Auth.build(ctx, logger); err != nil {
				return err
			}
			if err := cfg.Push.build("", logger); err != nil {
				return err
			}
			if err := cfg.buildCredentials(logger); err != nil {
				return err
			}
			c, err := dialTemporal(ctx, cfg, logger)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := namespaces.Ensure(ctx, c, cfg.Namespace, namespaces.Options{SearchAttributes: wire.SearchAttributes(), Logger: logger}); err != nil {
				logger.Warn("could not register search attributes; ask the Temporal operator to add them", "error", err)
			}
			fmt.Fprintf(os.Stdout, "a2aflow API is serving\n  A2A API      %s\n", httpURL(ln))
			if grpcLn != nil {
				fmt.Fprintf(os.Stdout, "  A2A gRPC     %s\n", grpcLn.Addr())
			}
			fmt.Fprintf(os.Stdout, "  Temporal     %s  (namespace %s)\n", cfg.TemporalAddr, cfg.Namespace)
			// With the workers' database, their hints of new events wake
			// this API's streams: through PostgreSQL (package pghints), or
			// Unix sockets beside their SQLite file (package unixhints, on
			// the same host); without, streams poll.
			var broker *hints.Broker
			switch {
			case models.IsPostgresDSN(cfg.DatabaseDSN):
				broker = hints.New()
				if err := pghints.Listen(ctx, cfg.DatabaseDSN, broker, logger); err != nil {
					return err
				}
				fmt.Fprintf(os.Stdout, "  Hints        PostgreSQL LISTEN %s\n", pghints.Channel)
			case cfg.DatabaseDSN != "":
				dir := unixhints.Dir(cfg.DatabaseDSN)
				broker = hints.New()
				if err := unixhints.Listen(ctx, dir, broker, logger); err != nil {
					logger.Warn("no task event hints from the workers: streams poll", "error", err)
					broker = nil
				} else {
					fmt.Fprintf(os.Stdout, "  Hints        Unix sockets in %s\n", dir)
				}
			}
			return serveAPI(ctx, ln, grpcLn, c, cfg, broker, logger)
		},
	}
	cfg.bindHTTP(cmd.Flags())
	cfg.bindTemporal(cmd.Flags(), false)
	cfg.Auth.bind(cmd.Flags())
	cfg.Push.bind(cmd.Flags(), false)
	cfg.bindTaskQueue(cmd.Flags())
	cmdutil.BindWorkersDatabase(cmd.Flags(), &cfg.DatabaseDSN)
	cmdutil.Bind(cmd.Flags()).StringSlice(&cfg.UICodecOrigins, "ui-codec-origin", "A2AFLOW_UI_CODEC_ORIGINS", nil,
		"serve the Temporal Web UI's codec endpoint at /a2aflow/codec for a UI at this origin (e.g. http://localhost:8233), so it shows payloads kept in the payload store; repeatable")
	cfg.Lifecycle.bind(cmd.Flags())
	cfg.bindConfigFile(cmd) // configfile.go
	return cmd
}

func newWorkerCmd(app *App) *cobra.Command {
	cfg := &config{app: app}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the task workflow and activity worker against a Temporal frontend (scale out: run many)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			logger := cfg.logger()
			if err := cfg.resolveTemporal(); err != nil { // sets the namespace the steps below use
				return err
			}
			if err := cfg.Push.build("", logger); err != nil {
				return err
			}
			if err := cfg.buildCredentials(logger); err != nil {
				return err
			}
			if err := cfg.ApprovalWebhooks.build(cfg.Push.policy, "", logger); err != nil {
				return err
			}
			if _, err := cfg.workerAgents(); err != nil {
				return err
			}
			if err := cfg.setWorkflowCache(); err != nil {
				return err
			}
			// The health port answers liveness while Temporal is dialled.
			health, err := cfg.Lifecycle.serveHealth(cfg.Namespace, logger)
			if err != nil {
				return err
			}
			defer health.close()
			c, err := dialTemporal(ctx, cfg, logger)
			if err != nil {
				return err
			}
			defer c.Close()
			health.connected(c)
			if err := namespaces.Ensure(ctx, c, cfg.Namespace, namespaces.Options{SearchAttributes: wire.SearchAttributes(), Logger: logger}); err != nil {
				logger.Warn("could not register search attributes; ask the Temporal operator to add them", "error", err)
			}
			stop, err := startWorker(c, cfg, nil, logger)
			if err != nil {
				return err
			}
			defer stop()
			fmt.Fprintf(os.Stdout, "a2aflow worker is running\n  Temporal     %s  (namespace %s, task queue %s)\n", cfg.TemporalAddr, cfg.Namespace, cfg.TaskQueue)
			select {
			case <-ctx.Done():
				return nil
			case <-cfg.Lifecycle.workerFailed():
				// The SDK stopped the worker (the namespace is gone, the
				// server refuses this client...): exit, for a restart.
				return fmt.Errorf("the worker stopped: %w", cfg.Lifecycle.worker.fatal())
			}
		},
	}
	cfg.bindData(cmd.Flags())
	cfg.bindTemporal(cmd.Flags(), false)
	cfg.bindWorker(cmd.Flags())
	cfg.Push.bind(cmd.Flags(), true)
	cfg.ApprovalWebhooks.bind(cmd.Flags())
	cfg.Lifecycle.bind(cmd.Flags())
	cfg.Lifecycle.bindHealth(cmd.Flags())
	cfg.bindConfigFile(cmd) // configfile.go
	return cmd
}
