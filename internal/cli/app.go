package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// App is what a program built on a2aflow serves: its agents and what else it
// sets in code rather than with flags (server.App).
type App = server.App

// Run runs the command line args (without the program name) until ctx is
// done or the command ends.
func Run(ctx context.Context, app *App, args []string) error {
	if err := app.Check(); err != nil {
		return err
	}
	stopTracing, err := server.StartTracing(ctx) // off without OTEL_*
	if err != nil {
		return err
	}
	defer stopTracing()
	root := NewRoot(app)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// Main runs the command line of os.Args until the command ends, SIGINT or
// SIGTERM, and exits with its status.
func Main(app *App) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, app, os.Args[1:])
	stop()
	if err != nil {
		os.Exit(cmdutil.Report(os.Stderr, err))
	}
}

// ExitCode returns the process exit status Main gives err (0 for nil).
func ExitCode(err error) int { return cmdutil.ExitCode(err) }
