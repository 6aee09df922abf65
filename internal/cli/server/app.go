package server

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/activities"
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
	// Tools are the program's own LLM tools that config-file LLM agents may
	// name in their tools; the worker registers their activities.
	Tools []llm.Tool
	// MCPServers are MCP servers the program configures in code, beside the
	// config file's [[mcp-servers]].
	MCPServers []activities.MCPServer
}

// toolsAgent is the pseudo-agent whose activities are the program's own
// tools (App.Tools), registered with the agents' own.
func (a *App) toolsAgent() *workflows.Agent {
	t := &workflows.Agent{Name: "(the program's tools)"}
	for _, tool := range a.Tools {
		t.Activities = append(t.Activities, tool)
	}
	return t
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
	seen := map[string]bool{}
	for _, srv := range a.MCPServers {
		if err := srv.Validate(); err != nil {
			return fmt.Errorf("a2aflow: %w", err)
		}
		if seen[srv.Name] {
			return fmt.Errorf("a2aflow: two MCP servers are named %q", srv.Name)
		}
		seen[srv.Name] = true
	}
	return engine.CheckActivities(append([]*workflows.Agent{llmagents.BuiltinTools(nil), a.toolsAgent()}, a.Agents...)...)
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
