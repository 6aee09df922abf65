// Package cli is the a2aflow command line: the server commands (serve,
// temporal, api, worker), the client verbs (card, send, get, list, cancel,
// subscribe), approvals, the agent directory and the REPL. The public entry
// points are a2aflow.Main and a2aflow.New in the root package; cmd/a2aflow
// is a2aflow.Main with the built-in agents.
package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// App is what a program built on a2aflow serves: its agents and what else it
// sets in code rather than with flags.
type App struct {
	// Agents are the agents served, the first being the default one (the
	// root agent card and the API's own endpoint).
	Agents []*workflows.Agent
	// LLM, when set, is the provider of the LLM calls of the worker instead
	// of the one the A2AFLOW_LLM_* environment configures.
	LLM llm.Provider
	// Routes, when set, adds the program's own routes to the A2A API (see
	// api.Config.Routes).
	Routes func(gin.IRouter)
	// Logger, when set, is the logger of the server commands instead of the
	// one on standard error at --log-level in --log-format (logging.go).
	Logger *slog.Logger
	// Version names the program in `version` (default: the module's).
	Version string
}

// Check reports what is wrong with the app's agents: none, a duplicate or
// invalid name, an agent without a handler, an activity that cannot be
// registered.
func (a *App) Check() error {
	if len(a.Agents) == 0 {
		return errors.New("a2aflow: no agents to serve")
	}
	if _, err := a.registry(); err != nil {
		return err
	}
	return engine.CheckActivities(append([]*workflows.Agent{llmagents.BuiltinTools(nil)}, a.Agents...)...)
}

// registry returns a fresh registry of copies of the app's agents, so that
// flags such as --idle-timeout change the copies and never the caller's.
func (a *App) registry() (*engine.Registry, error) {
	copies := make([]*workflows.Agent, len(a.Agents))
	for i, ag := range a.Agents {
		if ag == nil {
			return nil, fmt.Errorf("a2aflow: agent %d is nil", i)
		}
		c := *ag
		copies[i] = &c
	}
	return engine.NewRegistry(copies...)
}

// Run runs the command line args (without the program name) until ctx is
// done or the command ends.
func Run(ctx context.Context, app *App, args []string) error {
	if err := app.Check(); err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx) // tracing.go: off without OTEL_*
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
		os.Exit(reportError(os.Stderr, err))
	}
}
