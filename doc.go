// Package a2aflow serves your own A2A agents from your own binary, every A2A
// task a durable Temporal workflow.
//
// A program is its agents and one line:
//
//	func main() { a2aflow.Main(purchaseOrder()) }
//
// The binary is the whole a2aflow command line serving exactly those agents,
// the first being the default one (the root agent card):
//
//	po serve                  embedded Temporal + Web UI, worker and A2A API in one process
//	po api / po worker        the API and the worker apart, against any Temporal frontend
//	po temporal               the embedded Temporal server and Web UI alone
//	po send / get / list ...  the A2A client verbs; po approvals, po repl
//	po version                the program's version, the a2aflow module's, Go's
//
// # Writing an agent
//
// An agent is a [workflows.Agent]: the fields of its A2A agent card, a
// handler written as ordinary Temporal workflow code on a [workflows.Task]
// (Ask the user, Approve by a group, CallAgent on a remote A2A agent, add
// artifacts), and the activities the handler calls:
//
//	func purchaseOrder() *workflows.Agent {
//		return &workflows.Agent{
//			Name:        "purchase-order",
//			Description: "Raises purchase orders with a manager's approval.",
//			Activities:  []any{&Supplier{BaseURL: os.Getenv("SUPPLIER_URL")}},
//			Handle: func(ctx workflow.Context, t *workflows.Task) error {
//				item, err := t.Ask(ctx, "item", "What should we order?")
//				...
//				err = workflow.ExecuteActivity(ctx, "Quote", item).Get(ctx, &quote)
//				...
//			},
//		}
//	}
//
// Activities listed in Agent.Activities are registered by the worker with no
// other step: a function under its Go name, every exported method of a
// struct pointer under the method's name, and [workflows.Activity] under a
// name of your choice that survives renaming the Go code. The names are in
// the history of every task that called them: renaming one breaks the tasks
// parked on it, as changing the order of a handler's steps does (see
// workflow.GetVersion).
//
// # What else is set in code
//
// [New] takes the agents and options: [WithLLM] for the provider of LLM
// calls (package llm), [WithTools] for Go tools the config file's LLM agents
// may use, [WithMCPServer] for MCP servers in code, [WithRoutes] for the
// program's own HTTP routes behind the API's authentication, [WithLogger],
// [WithVersion]. The [App] it returns runs as the command line ([App.Main])
// or inside a program or a test ([App.Run], [App.Serve]). [Principal] names
// the caller in a route of WithRoutes.
//
// # The public packages
//
// This package, and:
//
//   - workflows: the author's API; a task IS its workflow ([workflows.Task]:
//     Ask, Approve, WaitFor, CallAgent, RequireCredential, artifacts).
//   - workflows/workflowstest: an agent's tasks in Temporal's test
//     environment, with scripted answers, decisions, remote agents and models.
//   - llm: LLM providers, tools (gated by approvals, MCP servers' tools) and
//     the tool loop (llm.Worker).
//   - pushverify: for a push receiver (any Go program), the check that a
//     push notification comes from an a2aflow server, played once.
//
// Everything else is internal: the A2A HTTP API (internal/api), the
// activities, the command line (internal/cli), the embedded Temporal server.
// docs/architecture.md maps the packages; cmd/a2aflow serves the demo agents
// (cmd/a2aflow/internal/demo), which are built on this API like any program.
package a2aflow
