// Package operator holds the tools of the person who runs a2aflow, beside
// the servers: human approvals (approvals, approve, reject) and waitpoints
// (waitpoint) and the approval policies (policies) through an a2aflow
// server's REST API; the directory of remote
// agents (agents) in a2aflow's own database; the keys that sign agent cards
// (keys); and, through Temporal, Worker Versioning (deployments) and the
// replay of recorded tasks against this binary's agents (replay).
package operator

import (
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// Commands returns the operator's commands; replay runs app's agents.
func Commands(app *server.App) []*cobra.Command {
	return []*cobra.Command{
		newApprovalsCmd(), newDecideCmd(true), newDecideCmd(false), newWaitpointCmd(), newUsageCmd(), newSchedulesCmd(), newPoliciesCmd(), newDelegationsCmd(),
		newAgentsCmd(), newKeysCmd(), newDeploymentsCmd(), newReplayCmd(app),
	}
}
