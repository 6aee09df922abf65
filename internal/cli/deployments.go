package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// deploymentConfig is Worker Versioning for serve and worker: with a
// deployment name the worker registers as one version (build) of a Temporal
// Worker Deployment, and tasks are pinned to the build that started them
// (workflows.Agent.Versioning).
type deploymentConfig struct {
	Name    string
	BuildID string
}

func (d *deploymentConfig) bind(fs *pflag.FlagSet) {
	d.bindName(fs, "run the worker as a version of this Temporal Worker Deployment: each task stays on the build that started it (agents may choose auto-upgrade); "+
		"the first build of a deployment becomes its current version, later ones with 'a2aflow deployments set-current'; default none: unversioned")
	cmdutil.Bind(fs).String(&d.BuildID, "build-id", "A2AFLOW_BUILD_ID", "",
		"this build's ID in the deployment; default from the binary: its VCS revision, or a hash of the executable when built from a modified tree or without VCS information")
}

// bindName binds --deployment, of the worker and of the deployments
// commands.
func (d *deploymentConfig) bindName(fs *pflag.FlagSet, usage string) {
	cmdutil.Bind(fs).String(&d.Name, "deployment", "A2AFLOW_DEPLOYMENT", "", usage)
}

// version returns the deployment version this worker runs as, the build ID
// defaulting to the binary's.
func (d *deploymentConfig) version() (worker.WorkerDeploymentVersion, error) {
	id := d.BuildID
	if id == "" {
		var err error
		if id, err = binaryBuildID(); err != nil {
			return worker.WorkerDeploymentVersion{}, fmt.Errorf("--build-id: none given and %w", err)
		}
	}
	return worker.WorkerDeploymentVersion{DeploymentName: d.Name, BuildID: id}, nil
}

// workerOptions adds the deployment to opts: tasks pinned by default.
func (d *deploymentConfig) workerOptions(opts worker.Options) (worker.Options, error) {
	if d.Name == "" {
		return opts, nil
	}
	v, err := d.version()
	if err != nil {
		return opts, err
	}
	opts.DeploymentOptions = worker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   v,
		DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
	}
	return opts, nil
}

// binaryBuildID is the build ID of this binary: the VCS revision it was
// built from when the tree was clean, else the SHA-256 of the executable
// (two builds of different code never share an ID; pinned tasks must never
// meet code other than theirs).
func binaryBuildID() (string, error) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var revision string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if len(revision) >= 12 && !modified {
			return revision[:12], nil
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the executable cannot be found: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("the executable cannot be read: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("the executable cannot be read: %w", err)
	}
	return "sha256-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// makeCurrentIfNone makes this worker's version the deployment's current
// one when it has none yet: the first build of a deployment serves new tasks
// without an operator step. A deployment that has a current version keeps
// it; the operator moves it with `a2aflow deployments set-current`. The
// version exists once the server has seen the worker poll, which takes a
// moment after the worker starts.
func makeCurrentIfNone(ctx context.Context, c client.Client, v worker.WorkerDeploymentVersion, logger *slog.Logger) error {
	h := c.WorkerDeploymentClient().GetHandle(v.DeploymentName)
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err == nil && d.Info.RoutingConfig.CurrentVersion != nil {
			cur := d.Info.RoutingConfig.CurrentVersion
			if cur.BuildID != v.BuildID {
				logger.Info("worker deployment has another current version: new tasks go there until `a2aflow deployments set-current "+v.BuildID+"`",
					"deployment", v.DeploymentName, "current", cur.BuildID, "this", v.BuildID)
			}
			return nil
		}
		if err == nil {
			_, err = h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: v.BuildID, ConflictToken: d.ConflictToken})
			if err == nil {
				logger.Info("worker deployment version is current", "deployment", v.DeploymentName, "build_id", v.BuildID)
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("make build %s the current version of worker deployment %s: %w", v.BuildID, v.DeploymentName, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func newDeploymentsCmd(app *App) *cobra.Command {
	cfg := &config{app: app}
	cmd := &cobra.Command{
		Use:   "deployments",
		Short: "List and describe Temporal Worker Deployments and move their current version (Worker Versioning)",
		Long: `With --deployment, workers register as a version (build) of a Temporal Worker
Deployment, and each task stays on the build that started it. Deploy new agent
code by starting workers of the new build next to the old ones, then make it
current: new tasks run it, parked tasks finish on their own build, whose
version drains; stop its workers once it is drained.

  a2aflow deployments list
  a2aflow deployments describe [--deployment NAME]
  a2aflow deployments set-current BUILD_ID [--deployment NAME]`,
	}
	pf := cmd.PersistentFlags()
	cfg.Deployment.bindName(pf, "the Worker Deployment")
	cfg.bindTemporalClient(pf) // TLS and API key; TEMPORAL_* and temporal.toml as api and worker read them
	cfg.bindLogLevel(pf, "warn")
	cfg.bindLogFormat(pf)
	dial := func(cmd *cobra.Command) (client.Client, error) {
		logger := newLogger(cfg.LogLevel, cfg.LogFormat)
		opts, err := cfg.temporalClientOptions(client.Options{Logger: sdklog.NewStructuredLogger(slog.New(levelAtLeast{logger.Handler(), slog.LevelWarn}))})
		if err != nil {
			return nil, err
		}
		c, err := client.DialContext(cmd.Context(), opts)
		if err != nil {
			if failure := dialFailure(cmd.Context(), opts, err); failure != nil {
				return nil, failure
			}
			return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", opts.HostPort, opts.Namespace, err)
		}
		return c, nil
	}
	needName := func(cmd *cobra.Command) error {
		if cfg.Deployment.Name == "" {
			return fmt.Errorf("give the deployment with --deployment or %s", cmdutil.Env(cmd.Flags().Lookup("deployment")))
		}
		return nil
	}
	list := &cobra.Command{
		Use: "list", Short: "List the namespace's Worker Deployments and their current versions", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			it, err := c.WorkerDeploymentClient().List(cmd.Context(), client.WorkerDeploymentListOptions{})
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "DEPLOYMENT\tCURRENT\tRAMPING\tCREATED")
			for it.HasNext() {
				d, err := it.Next()
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", d.Name, buildOf(d.RoutingConfig.CurrentVersion), ramping(d.RoutingConfig), d.CreateTime.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	describe := &cobra.Command{
		Use: "describe", Short: "Show a deployment's versions: current, ramping, draining or drained", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needName(cmd); err != nil {
				return err
			}
			c, err := dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			d, err := c.WorkerDeploymentClient().GetHandle(cfg.Deployment.Name).Describe(cmd.Context(), client.WorkerDeploymentDescribeOptions{})
			if err != nil {
				return fmt.Errorf("describe worker deployment %s: %w", cfg.Deployment.Name, err)
			}
			rc := d.Info.RoutingConfig
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "BUILD ID\tSTATUS\tCREATED")
			for _, v := range d.Info.VersionSummaries {
				fmt.Fprintf(w, "%s\t%s\t%s\n", v.Version.BuildID, versionStatus(v, rc), v.CreateTime.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	setCurrent := &cobra.Command{
		Use: "set-current BUILD_ID", Short: "Make a build the deployment's current version: new tasks (and auto-upgrade agents' tasks) run it", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needName(cmd); err != nil {
				return err
			}
			c, err := dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.WorkerDeploymentClient().GetHandle(cfg.Deployment.Name).SetCurrentVersion(cmd.Context(),
				client.WorkerDeploymentSetCurrentVersionOptions{BuildID: args[0]})
			if err != nil {
				return fmt.Errorf("set-current %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is the current version of %s (was %s)\n", args[0], cfg.Deployment.Name, buildOf(resp.PreviousVersion))
			return nil
		},
	}
	cmd.AddCommand(list, describe, setCurrent)
	return cmd
}

func buildOf(v *worker.WorkerDeploymentVersion) string {
	if v == nil {
		return "-"
	}
	return v.BuildID
}

func ramping(rc client.WorkerDeploymentRoutingConfig) string {
	if rc.RampingVersion == nil {
		return "-"
	}
	return fmt.Sprintf("%s %.0f%%", rc.RampingVersion.BuildID, rc.RampingVersionPercentage)
}

// versionStatus names what a version does now: current, ramping, draining
// (not current, tasks still pinned to it), drained (none left: its workers
// may stop), or inactive (never current).
func versionStatus(v client.WorkerDeploymentVersionSummary, rc client.WorkerDeploymentRoutingConfig) string {
	switch {
	case rc.CurrentVersion != nil && rc.CurrentVersion.BuildID == v.Version.BuildID:
		return "current"
	case rc.RampingVersion != nil && rc.RampingVersion.BuildID == v.Version.BuildID:
		return "ramping"
	case v.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDraining:
		return "draining"
	case v.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDrained:
		return "drained"
	}
	return "inactive"
}
