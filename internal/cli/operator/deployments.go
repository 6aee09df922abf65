package operator

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

func newDeploymentsCmd() *cobra.Command {
	d := &deployments{}
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
	server.BindDeploymentName(pf, &d.name, "the Worker Deployment")
	d.temporal = server.BindTemporalClient(pf, "warn") // TLS and API key; TEMPORAL_* and temporal.toml as api and worker read them
	cmd.AddCommand(
		&cobra.Command{
			Use: "list", Short: "List the namespace's Worker Deployments and their current versions", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return d.withClient(cmd, false, d.list) },
		},
		&cobra.Command{
			Use: "describe", Short: "Show a deployment's versions: current, ramping, draining or drained", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return d.withClient(cmd, true, d.describe) },
		},
		&cobra.Command{
			Use: "set-current BUILD_ID", Short: "Make a build the deployment's current version: new tasks (and auto-upgrade agents' tasks) run it", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return d.withClient(cmd, true, func(cmd *cobra.Command, c client.Client) error { return d.setCurrent(cmd, c, args[0]) })
			},
		})
	return cmd
}

// deployments are the deployments commands' flags: the deployment and how
// to reach Temporal.
type deployments struct {
	name     string
	temporal *server.TemporalClient
}

// withClient runs fn with a client of Temporal, closed when fn returns;
// with needName, once it checked that --deployment names the deployment.
func (d *deployments) withClient(cmd *cobra.Command, needName bool, fn func(*cobra.Command, client.Client) error) error {
	if needName && d.name == "" {
		return fmt.Errorf("give the deployment with --deployment or %s", cmdutil.Env(cmd.Flags().Lookup("deployment")))
	}
	c, err := d.temporal.Dial(cmd.Context())
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(cmd, c)
}

// list lists the namespace's Worker Deployments.
func (d *deployments) list(cmd *cobra.Command, c client.Client) error {
	it, err := c.WorkerDeploymentClient().List(cmd.Context(), client.WorkerDeploymentListOptions{})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DEPLOYMENT\tCURRENT\tRAMPING\tCREATED")
	for it.HasNext() {
		dep, err := it.Next()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", dep.Name, buildOf(dep.RoutingConfig.CurrentVersion), ramping(dep.RoutingConfig), dep.CreateTime.Format(time.RFC3339))
	}
	return w.Flush()
}

// describe shows the deployment's versions.
func (d *deployments) describe(cmd *cobra.Command, c client.Client) error {
	desc, err := c.WorkerDeploymentClient().GetHandle(d.name).Describe(cmd.Context(), client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return fmt.Errorf("describe worker deployment %s: %w", d.name, err)
	}
	rc := desc.Info.RoutingConfig
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BUILD ID\tSTATUS\tCREATED")
	for _, v := range desc.Info.VersionSummaries {
		fmt.Fprintf(w, "%s\t%s\t%s\n", v.Version.BuildID, versionStatus(v, rc), v.CreateTime.Format(time.RFC3339))
	}
	return w.Flush()
}

// setCurrent makes build the deployment's current version. It reads the
// version it replaces first and passes the read's conflict token, as the
// SDK asks (SetCurrentVersion's PreviousVersion is deprecated): a change
// made by someone else in between fails the call instead of being
// reported wrongly.
func (d *deployments) setCurrent(cmd *cobra.Command, c client.Client, build string) error {
	h := c.WorkerDeploymentClient().GetHandle(d.name)
	desc, err := h.Describe(cmd.Context(), client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return fmt.Errorf("set-current %s: describe worker deployment %s: %w", build, d.name, err)
	}
	_, err = h.SetCurrentVersion(cmd.Context(), client.WorkerDeploymentSetCurrentVersionOptions{
		BuildID: build, ConflictToken: desc.ConflictToken})
	if err != nil {
		return fmt.Errorf("set-current %s: %w", build, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s is the current version of %s (was %s)\n", build, d.name, buildOf(desc.Info.RoutingConfig.CurrentVersion))
	return nil
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
