// Package api serves a2aflow's agents over A2A 1.0 with Gin: agent cards, the
// JSON-RPC 2.0 and HTTP+JSON bindings (and the 0.3 forms for older clients)
// and health; and, on a listener of its own, the gRPC binding
// (Server.GRPCServer, grpc.go). It maps each A2A request onto a Temporal call on the task's
// workflow — Update-with-Start for a new task, Update for a message or a
// cancel, Query for a read — and holds no task state of its own, so any
// number of API replicas can serve the same tasks.
//
// The transports themselves come from a2a-go (a2asrv.NewJSONRPCHandler,
// a2asrv.NewRESTHandler and their a2av0 counterparts); this package
// implements a2asrv.RequestHandler on top of Temporal ([TaskService]) and
// maps Temporal errors to A2A errors in one place (errors.go).
//
// Routes:
//
//	GET  /.well-known/agent-card.json            the default agent's card
//	POST /                                       the default agent's JSON-RPC endpoint
//	*    /message:send, /tasks/...               the default agent's HTTP+JSON binding
//	GET  /agents/{name}/.well-known/agent-card.json
//	POST /agents/{name}                          that agent's JSON-RPC endpoint
//	*    /agents/{name}/message:send, ...        that agent's HTTP+JSON binding
//	GET  /agents                                 the agents served, as JSON
//	POST, GET, DELETE /mcp                       MCP (streamable HTTP): every agent a tool (mcp.go, mcp_tools.go)
//	GET  /healthz                                liveness: 200 while the process answers
//	GET  /readyz                                 readiness: 200 or 503 naming the failed check (health.go)
//	GET  /metrics                                Prometheus series, a2aflow's and the Temporal SDK's (metrics.go)
//
// gRPC (Config.GRPC, its own address; grpc.go):
//
//	lf.a2a.v1.A2AService/*                       A2A 1.0, every method; the agent is the request's tenant
//	a2a.v1.A2AService/*                          A2A 0.3; the default agent, or the a2aflow-agent metadata's
//	grpc.health.v1.Health/Check, Watch           SERVING while /readyz is ready
//	grpc.reflection.v1.ServerReflection          only with GRPCConfig.Reflection
//
// MCP clients reach the same agents at /mcp, behind the same
// authentication: each agent is a tool whose call starts (or continues) an
// A2A task through the agent's TaskService and answers when the task
// completes, fails or asks; a question is put to the user by MCP
// elicitation when the client can show one, else the result carries the
// task's ID and question, answered with the a2aflow_reply tool
// (a2aflow_get_task and a2aflow_cancel_task read and cancel a task). MCP
// "tasks" are not offered: the pinned go-sdk (v1.8.0) does not support
// them; a long call reports progress notifications instead.
//
// The A2A-Version request header selects the protocol form: "1.0" is served
// as A2A 1.0; no header or "0.3" as A2A 0.3 (method names like message/send);
// any other version gets VersionNotSupportedError (-32009).
package api
