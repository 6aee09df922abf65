package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/engine"
)

// What the operator's tools (package operator) take of the server's
// settings, declared here once: how to dial Temporal, the worker's
// deployment, and what a task's replay depends on.

// TemporalClient is the connection to Temporal of a command that only
// talks to it (deployments): --temporal-addr, --namespace, TLS and API
// key, as api and worker read them (TEMPORAL_* and temporal.toml too),
// with --log-level and --log-format.
type TemporalClient struct{ cfg config }

// BindTemporalClient binds the connection flags on fs; logLevel is
// --log-level's default.
func BindTemporalClient(fs *pflag.FlagSet, logLevel string) *TemporalClient {
	t := &TemporalClient{}
	t.cfg.bindTemporalClient(fs)
	t.cfg.bindLogLevel(fs, logLevel)
	t.cfg.bindLogFormat(fs)
	return t
}

// Dial connects to Temporal once, without the servers' retries: the SDK's
// own lines at warn.
func (t *TemporalClient) Dial(ctx context.Context) (client.Client, error) {
	logger := newLogger(t.cfg.LogLevel, t.cfg.LogFormat)
	opts, err := t.cfg.temporalClientOptions(client.Options{Logger: sdklog.NewStructuredLogger(slog.New(levelAtLeast{logger.Handler(), slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		if failure := dialFailure(ctx, opts, err); failure != nil {
			return nil, failure
		}
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", opts.HostPort, opts.Namespace, err)
	}
	return c, nil
}

// BindDeploymentName binds --deployment, the Temporal Worker Deployment
// (the worker's, which the deployments commands manage).
func BindDeploymentName(fs *pflag.FlagSet, p *string, usage string) {
	cmdutil.Bind(fs).String(p, "deployment", "A2AFLOW_DEPLOYMENT", "", usage)
}

// WorkerSettings are the worker's settings a task's run depends on, for
// replay: the agents (with the config file's and --idle-timeout), the
// workflow's options (--delegation-retry-budget), the payload store and the
// connection to Temporal.
type WorkerSettings struct{ cfg config }

// BindWorkerSettings binds them on cmd, with the config file.
func BindWorkerSettings(cmd *cobra.Command, app *App) *WorkerSettings {
	w := &WorkerSettings{cfg: config{app: app}}
	fs := cmd.Flags()
	w.cfg.bindTemporal(fs, false)
	w.cfg.bindData(fs)
	w.cfg.bindIdleTimeout(fs)
	w.cfg.bindRetryBudget(fs)
	w.cfg.bindConfigFile(cmd) // the file's agents replay too
	return w
}

// Registry returns the agents the worker runs.
func (w *WorkerSettings) Registry() (*engine.Registry, error) { return w.cfg.workerAgents() }

// WorkflowOptions are the options the worker runs task workflows with.
func (w *WorkerSettings) WorkflowOptions() engine.Options {
	return engine.Options{RetryBudget: w.cfg.RetryBudget}
}

// PayloadStore returns the payload store; unless needed, nil when none is
// configured nor exists in the data dir (files then replay without one).
func (w *WorkerSettings) PayloadStore(needed bool) (blobstore.Store, error) {
	if !needed && w.cfg.PayloadStore == "" && !dirExists(filepath.Join(w.cfg.DataDir, defaultPayloadDir)) {
		return nil, nil
	}
	return w.cfg.payloadStore()
}

// Dial connects to Temporal as the worker does, and returns the namespace.
func (w *WorkerSettings) Dial(ctx context.Context) (client.Client, string, error) {
	c, err := dialTemporal(ctx, &w.cfg, w.cfg.logger())
	if err != nil {
		return nil, "", err
	}
	return c, w.cfg.Namespace, nil
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
