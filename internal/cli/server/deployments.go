package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
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
	BindDeploymentName(fs, &d.Name, usage)
}

// version returns the deployment version this worker runs as, the build ID
// defaulting to the binary's.
func (d *deploymentConfig) version() (worker.WorkerDeploymentVersion, error) {
	id := d.BuildID
	if id == "" {
		var err error
		if id, err = cmdutil.BuildID(); err != nil {
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
