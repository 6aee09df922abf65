package server

import (
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// The process commands: what each runs (its roles, start.go), and the flags
// that come with each role.

func newServeCmd(app *App) *cobra.Command {
	return newProcessCmd(app, roles{embedded: true, api: true, worker: true}, &cobra.Command{
		Use:   "serve",
		Short: "Run everything in one process: embedded Temporal + Web UI, worker and the A2A HTTP API",
		Long: `serve runs a2aflow with nothing else to install: an embedded Temporal
server persisted to a SQLite file under the data dir, the Temporal Web UI, the
worker that runs every A2A task as a workflow, and the A2A HTTP API serving
this program's agents.`,
	})
}

func newTemporalCmd(app *App) *cobra.Command {
	return newProcessCmd(app, roles{embedded: true}, &cobra.Command{
		Use:   "temporal",
		Short: "Run the embedded Temporal server and Web UI alone, for separate api and worker processes",
	})
}

func newAPICmd(app *App) *cobra.Command {
	return newProcessCmd(app, roles{api: true}, &cobra.Command{
		Use:   "api",
		Short: "Run the stateless A2A HTTP API against a Temporal frontend (scale out: run many)",
	})
}

func newWorkerCmd(app *App) *cobra.Command {
	return newProcessCmd(app, roles{worker: true}, &cobra.Command{
		Use:   "worker",
		Short: "Run the task workflow and activity worker against a Temporal frontend (scale out: run many)",
	})
}

// newProcessCmd completes cmd into the process command of roles r serving
// app: its flags, its config file, and start.
func newProcessCmd(app *App, r roles, cmd *cobra.Command) *cobra.Command {
	cfg := &config{app: app, Metrics: metricsConfig{Embedded: r.embedded && r.api}}
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return start(cmd.Context(), cfg, r) }
	r.bind(cmd, cfg)
	cfg.bindConfigFile(cmd) // configfile.go
	return cmd
}

// bind binds the flags of the roles r on cmd.
func (r roles) bind(cmd *cobra.Command, cfg *config) {
	fs := cmd.Flags()
	if r.embedded || r.worker {
		cfg.bindData(fs)
	}
	cfg.bindTemporal(fs, r.embedded) // the frontend to serve, or to dial
	if r.embedded {
		cfg.bindUI(fs)
	}
	if r.api {
		cfg.bindHTTP(fs)
		cfg.Auth.bind(fs)
	}
	if r.worker {
		cfg.bindWorker(fs) // --task-queue, --database...
		cfg.ApprovalWebhooks.bind(fs)
	}
	if r.worker && !r.api {
		// The worker signs push notifications with the API's card key,
		// naming the API's public URL as their issuer.
		cfg.CardKey.bind(fs)
		cfg.bindPublicURL(fs)
	}
	if r.api && !r.worker {
		// The API alone: the workers' task queue and database.
		cfg.bindTaskQueue(fs)
		cmdutil.BindWorkersDatabase(fs, &cfg.DatabaseDSN)
		cmdutil.Bind(fs).StringSlice(&cfg.UICodecOrigins, "ui-codec-origin", "A2AFLOW_UI_CODEC_ORIGINS", nil,
			"serve the Temporal Web UI's codec endpoint at /a2aflow/codec for a UI at this origin (e.g. http://localhost:8233), so it shows payloads kept in the payload store; repeatable")
	}
	if r.api || r.worker {
		cfg.Secrets.bind(fs)
		cfg.Push.bind(fs, r.worker) // the worker delivers
		cfg.Lifecycle.bind(fs)
	}
	switch {
	case r.embedded && r.api && r.worker: // serve
		cfg.bindPeers(fs)
		bindDiskReserve(fs, &cfg.DiskReserve)
	case r.embedded: // temporal
		cfg.Metrics.bind(fs)
	case r.worker: // worker
		cfg.Lifecycle.bindHealth(fs)
	}
}
