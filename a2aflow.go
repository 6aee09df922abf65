package a2aflow

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/cli"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// Main runs the whole a2aflow command line (serve, temporal, api, worker,
// the client verbs, approvals, repl...) serving exactly agents, the first
// being the default one, and exits with the command's status. Invalid agents
// (none, a duplicate or invalid name, an activity that cannot be registered)
// end the program with the reason and status 2.
//
//	func main() { a2aflow.Main(purchaseOrder(), quotes()) }
func Main(agents ...*workflows.Agent) {
	app, err := New(agents)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	app.Main()
}

// App is a2aflow serving a program's agents, with what else the program sets
// in code: New builds it, Main runs it as the program's command line, Run
// and Serve run it inside a program or a test.
type App struct {
	app cli.App
}

// Option sets what a program gives a2aflow in code rather than with flags.
type Option func(*options)

// options is what the Options of New set: the program's parts of the
// command line's App.
type options struct{ app *cli.App }

// WithLLM makes p the provider of the worker's LLM calls instead of the one
// the A2AFLOW_LLM_* environment configures.
func WithLLM(p llm.Provider) Option { return func(o *options) { o.app.LLM = p } }

// WithRoutes adds the program's own routes to the A2A HTTP API, behind its
// host check, limits and authentication; [Principal] names the caller.
func WithRoutes(routes func(gin.IRouter)) Option {
	return func(o *options) { o.app.Routes = routes }
}

// Principal returns the authenticated caller of a request the API serves
// (the request's context, e.g. c.Request.Context() in a route of
// [WithRoutes]), or "" when authentication is off. Tasks record it as their
// owner.
func Principal(ctx context.Context) string { return api.PrincipalFrom(ctx) }

// WithTools offers the program's own LLM tools (llm.NewTool, llm.WorkflowTool)
// to the LLM agents of the config file, which name them in their tools, and
// registers their activities on the worker. An agent written in Go brings
// its tools itself, in Agent.Activities.
func WithTools(tools ...llm.Tool) Option {
	return func(o *options) { o.app.Tools = append(o.app.Tools, tools...) }
}

// MCPServer is an MCP server whose tools LLM agents may call (llm.MCP, or a
// config-file agent's mcp-servers): over streamable HTTP at URL, or started
// as a subprocess speaking MCP on stdio (Command). The config file's
// [[mcp-servers]] sections are the same.
type MCPServer struct {
	// Name is how agents and task histories name the server.
	Name string
	// URL is its streamable HTTP endpoint. Requests go through a2aflow's
	// guarded outbound client; the URL's host is trusted.
	URL string
	// Credentials names an entry of the outbound credentials file
	// (--outbound-credentials) whose credentials the requests carry.
	Credentials string
	// Command, Args and Env (KEY=VALUE, added to the worker's environment)
	// start a stdio server; the worker restarts it when it exits.
	Command string
	Args    []string
	Env     []string
}

// WithMCPServer adds an MCP server to the worker's.
func WithMCPServer(s MCPServer) Option {
	return func(o *options) {
		o.app.MCPServers = append(o.app.MCPServers, activities.MCPServer{Name: s.Name, URL: s.URL, Credentials: s.Credentials,
			Command: s.Command, Args: s.Args, Env: s.Env})
	}
}

// WithLogger makes l the logger of the server commands instead of the one on
// standard error at --log-level in --log-format.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.app.Logger = l } }

// WithVersion names the program's version in `version` (default: the main
// module's version from the binary's build info).
func WithVersion(v string) Option { return func(o *options) { o.app.Version = v } }

// New returns a2aflow serving agents, the first being the default one, or
// the reason they cannot be served: none, a nil agent, a duplicate or invalid
// name, an agent without a handler, an activity that cannot be registered.
func New(agents []*workflows.Agent, opts ...Option) (*App, error) {
	a := &App{app: cli.App{Agents: append([]*workflows.Agent(nil), agents...)}}
	for _, o := range opts {
		o(&options{app: &a.app})
	}
	if err := a.app.Check(); err != nil {
		return nil, err
	}
	return a, nil
}

// Main runs the command line of os.Args until the command ends, SIGINT or
// SIGTERM, and exits with its status.
func (a *App) Main() { cli.Main(&a.app) }

// Run runs the command line args (without the program name), for example
// "worker", "--temporal-address", "temporal:7233", until ctx is done or the
// command ends.
func (a *App) Run(ctx context.Context, args ...string) error {
	return cli.Run(ctx, &a.app, args)
}

// Serve runs `serve` with the flags args until ctx is done: the embedded
// Temporal server and Web UI, the worker and the A2A HTTP API in this
// process.
func (a *App) Serve(ctx context.Context, args ...string) error {
	return a.Run(ctx, append([]string{"serve"}, args...)...)
}
