package cli

import (
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/client"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/operator"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// NewRoot returns the a2aflow command serving app's agents.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:           cmdutil.ProgName(),
		Short:         "Serve A2A agents whose tasks run as durable Temporal workflows",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Before any command runs: the deprecated names of its settings
		// are reported, a wrong --log-format refused.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			cmdutil.WarnDeprecatedEnv(cmd, cmd.ErrOrStderr())
			return server.CheckLogFlags(cmd, args)
		},
	}
	root.AddCommand(server.Commands(app)...) // serve, temporal, api, worker, config
	root.AddCommand(client.Commands()...)    // card, send, get, list, cancel, subscribe, push, repl
	root.AddCommand(operator.Commands(app)...)
	root.AddCommand(newVersionCmd(app))
	return root
}
