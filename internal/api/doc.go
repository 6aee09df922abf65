// Package api serves a2aflow's agents over A2A 1.0 and 0.3 with Gin: it
// assembles the packages below it into one server (Server, built by New
// from Config) and serves what belongs to none of them: the routes, health
// (/healthz, /readyz), metrics and the OpenAPI document. The API holds no
// task state of its own: every A2A request is a Temporal call on the
// task's workflow, so any number of API replicas can serve the same tasks.
//
// The packages under it, each by concern, in the order they import one
// another (a package imports only those before it):
//
//	apierror     how an error reads on each binding (JSON-RPC code, HTTP
//	             status, gRPC code, google.rpc.ErrorInfo) and the one mapping
//	             of Temporal's errors and the task workflow's validator
//	             errors to A2A errors, for every route
//	guard        what every way in passes: authentication and permissions,
//	             the approver, the host check, body limit, rate limits and
//	             stream cap, the access log, the request's span and metrics
//	             (guard/guardtest: the keys and tokens of its tests)
//	taskservice  the A2A task methods of one agent on Temporal (TaskService),
//	             which every binding and /mcp share: send, read, list,
//	             stream, cancel, push configs, fork; the agent's card
//	a2abinding   JSON-RPC 2.0, HTTP+JSON and gRPC, each in 1.0 and 0.3
//	             (a2a-go's transports), the corrections of a2a-go, the cards
//	resources    a2aflow's REST resources: approvals and the inbox,
//	             waitpoints, schedules, LLM usage, approval policies
//	mcpserver    the MCP server: every agent a tool
//
// a2abinding, resources and mcpserver do not import one another
// (TestPackagesImportInOrder reads this list and checks both). The
// tests of this package drive the assembled server through its routes
// (upstream_test.go runs the canaries of a2a-go's behaviours that
// a2abinding corrects); each package's own tests check it alone.
//
// Routes:
//
//	GET  /.well-known/agent-card.json            the default agent's card
//	POST /                                       the default agent's JSON-RPC endpoint
//	*    /message:send, /tasks/...               the default agent's HTTP+JSON binding
//	GET  /agents/{name}/.well-known/agent-card.json
//	POST /agents/{name}                          that agent's JSON-RPC endpoint
//	*    /agents/{name}/message:send, ...        that agent's HTTP+JSON binding
//	GET  [/agents/{name}]/tasks/{id}/timeline    a task's timeline, in pages (a2abinding/timeline.go)
//	GET  /agents                                 the agents served, as JSON
//	GET  /.well-known/jwks.json                  the public key of signed cards
//	POST, GET, DELETE /mcp                       MCP (streamable HTTP): every agent a tool (mcpserver)
//	GET, POST /approvals..., GET /inbox          approvals and their inbox (resources)
//	GET  /console, /console/{file}               the web console: a page and its scripts (resources)
//	GET, POST /waitpoints/{id}                   waitpoints (resources)
//	*    /schedules...                           schedules (resources)
//	GET  /usage                                  LLM usage (resources)
//	*    /policies..., GET /policy-versions...   approval policies (resources)
//	GET  /healthz                                liveness: 200 while the process answers
//	GET  /readyz                                 readiness: 200 or 503 naming the failed check (health.go)
//	GET  /metrics                                Prometheus series, a2aflow's and the Temporal SDK's (metrics.go)
//	GET  /openapi.json, /docs                    the OpenAPI document and its Swagger UI (openapi.go)
//
// gRPC (Config.GRPC, its own address; Server.GRPCServer):
//
//	lf.a2a.v1.A2AService/*                       A2A 1.0, every method; the agent is the request's tenant
//	a2a.v1.A2AService/*                          A2A 0.3; the default agent, or the a2aflow-agent metadata's
//	grpc.health.v1.Health/Check, Watch           SERVING while /readyz is ready
//	grpc.reflection.v1.ServerReflection          only with GRPCConfig.Reflection
//
// The A2A-Version request header selects the protocol form: "1.0" is served
// as A2A 1.0; no header or "0.3" as A2A 0.3 (method names like message/send),
// but a request only 1.0 has; any other version gets
// VersionNotSupportedError (-32009).
package api
