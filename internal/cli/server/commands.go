package server

import (
	"context"

	"github.com/spf13/cobra"
)

// Commands returns the server's commands serving app: serve, temporal, api,
// worker, and config (print the settings they would run with).
func Commands(app *App) []*cobra.Command {
	return append(processCommands(app), newConfigCmd(app))
}

// ProcessCommands returns fresh process commands serving app (serve, api,
// worker, temporal), the ones that take a config file, in the order the
// reference (docs/config.md) lists them.
func ProcessCommands(app *App) []*cobra.Command { return processCommands(app) }

// EnvConfigFile names the config file when --config is not given.
const EnvConfigFile = envConfigFile

// AgentKey is a key of the config file's [[agents]] sections.
type AgentKey struct{ Key, Doc string }

// AgentKeys returns the keys of the config file's [[agents]] sections, with
// what each does, for the reference.
func AgentKeys() []AgentKey {
	out := make([]AgentKey, len(agentKeys))
	for i, k := range agentKeys {
		out[i] = AgentKey(k)
	}
	return out
}

// CheckLogFlags refuses a wrong --log-format (flag or environment) of the
// command about to run.
func CheckLogFlags(cmd *cobra.Command, args []string) error { return checkLogFlags(cmd, args) }

// StartTracing installs OpenTelemetry tracing when the OTEL_* environment
// asks for it (tracing.go) and returns the function that flushes and stops
// it.
func StartTracing(ctx context.Context) (func(), error) { return startTracing(ctx) }
