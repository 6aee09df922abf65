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

// MCPServerKeys returns the keys of the config file's [[mcp-servers]]
// sections, with what each does, for the reference.
func MCPServerKeys() []AgentKey {
	return []AgentKey{
		{"name", "how agents (their mcp-servers) and task histories name the server"},
		{"url", "its streamable HTTP endpoint (https://host/mcp), reached through the guarded outbound client; its host is trusted"},
		{"credentials", "an entry of --outbound-credentials whose credentials (API key, bearer, OAuth2 client credentials) the requests carry"},
		{"command", "instead of url: a program speaking MCP on stdio, which the worker starts and restarts"},
		{"args", "the command's arguments"},
		{"env", "the command's environment, added to the worker's: a table (KEY = \"value\") or a list of KEY=VALUE"},
	}
}

// ToolApprovalKeys returns the keys of an agent's [[agents.tool-approvals]]
// tables, for the reference.
func ToolApprovalKeys() []AgentKey {
	return []AgentKey{
		{"tool", "the gated tool's name, as the model sees it (built-in, the program's, an MCP server's, a remote agent's skill)"},
		{"when", "an expression over the call's arguments (expr-lang), e.g. amount > 1000 && currency == \"EUR\"; absent: every call"},
		{"groups", "the approver groups that decide (required)"},
		{"required", "how many approvals are needed (N of M; default 1)"},
		{"timeout", "how long the approvers have, e.g. 48h; default forever"},
		{"on-timeout", "reject (default: the model reads the rejection), approve or escalate"},
		{"escalate-to", "the groups an escalation hands the call to"},
		{"escalate-timeout", "how long they have"},
		{"grantable", "true lets an approver approve the tool for the rest of the task"},
		{"title", "the approval's title; default the tool and its arguments"},
	}
}

// CheckLogFlags refuses a wrong --log-format (flag or environment) of the
// command about to run.
func CheckLogFlags(cmd *cobra.Command, args []string) error { return checkLogFlags(cmd, args) }

// StartTracing installs OpenTelemetry tracing when the OTEL_* environment
// asks for it (tracing.go) and returns the function that flushes and stops
// it.
func StartTracing(ctx context.Context) (func(), error) { return startTracing(ctx) }
