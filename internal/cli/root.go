package cli

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewRoot returns the a2aflow command serving app's agents.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:           progName(),
		Short:         "Serve A2A agents whose tasks run as durable Temporal workflows",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Before any command runs: the deprecated names of its settings
		// are reported, a wrong --log-format refused.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			cmdutil.WarnDeprecatedEnv(cmd, cmd.ErrOrStderr())
			return checkLogFlags(cmd, args)
		},
	}
	root.AddCommand(newServeCmd(app), newTemporalCmd(app), newAPICmd(app), newWorkerCmd(app), newVersionCmd(app), newReplayCmd(app), newDeploymentsCmd(app),
		newApprovalsCmd(), newDecideCmd(true), newDecideCmd(false), newWaitpointCmd())
	root.AddCommand(newClientCmds()...)
	root.AddCommand(newAgentsCmd(), newREPLCmd())
	root.AddCommand(newKeysCmd())      // keys.go
	root.AddCommand(newConfigCmd(app)) // configprint.go
	return root
}

// progName is the program's name as run: a2aflow, or the name of a program
// built on a2aflow.Main, for the commands it tells the user to run.
func progName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "a2aflow"
	}
	return filepath.Base(os.Args[0])
}

// newLogger returns the process logger: to stderr at level (debug, info,
// warn, error) in format (text or json, see logging.go). It becomes slog's
// default too, so that what logs there (the embedded Temporal's start-up,
// a2a-go) logs in the same format.
func newLogger(level, format string) *slog.Logger {
	l := slog.New(newLogHandler(os.Stderr, level, format))
	slog.SetDefault(l)
	return l
}
