package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/engine"
)

// The API serves its agents over MCP too, at MCPPath, with MCP's
// streamable HTTP transport from the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): every agent is a tool, which
// starts or continues an A2A task through the agent's TaskService, as
// JSON-RPC SendMessage does (tools.go). The route sits behind the
// same host check, body limit, authentication and rate limit as the A2A
// routes, and every MCP request acts as its authenticated caller: the tasks
// a call creates are the caller's, and another owner's task reads as not
// found, as on every binding.
//
// Two protocol generations share the path, told apart by the
// MCP-Protocol-Version header:
//
//   - up to 2025-11-25 (initialize, then a session): a session lives in the
//     process that created it (Mcp-Session-Id), bound to the principal that
//     created it — another principal's request naming it gets 404, as an
//     unknown session does. A question of a task is asked with a
//     server-to-client elicitation request. Behind several API replicas
//     such clients need session affinity, or they start a new session when
//     a replica answers 404 for theirs.
//   - 2026-07-28 and later (SEP-2575, no session): every request stands on
//     its own and any replica serves it; a question is asked by answering
//     the call with an input request (SEP-2322, multi round-trip), which
//     the client answers by calling again.
//
// The SDK's plain-text refusals (a malformed payload, an unknown session, a
// wrong Accept header...) are answered as JSON-RPC error objects with the
// same HTTP status (mcpErrorWriter). MCP "tasks" (long-running calls a
// client polls) are not offered: the pinned SDK (v1.8.0) has no support for
// them. A long call reports the task's progress instead, and a client that
// lets go of a call reads the task later with a2aflow_get_task.

// mcpSessionTimeout closes a session (protocol versions up to 2025-11-25)
// that has had no request for this long.
const mcpSessionTimeout = 30 * time.Minute

// mcpStatelessSince is the first protocol version served without sessions.
const mcpStatelessSince = "2026-07-28"

// mcpRequestKey names, in the auth.TokenInfo the SDK hands every request's
// handler, the context of the HTTP request that carried it (mcpCallContext).
const mcpRequestKey = "a2aflow/request"

// Config configures the MCP server; api.New fills in the defaults of
// its Config.
type Config struct {
	// Logger receives the SDK's warnings and the calls' failures.
	Logger *slog.Logger
	// MaxBodyBytes bounds a request's body.
	MaxBodyBytes int64
	// HostsChecked says the guard checks the Host header
	// (Limits.AllowedHosts): the SDK's own defence against DNS rebinding
	// is then off.
	HostsChecked bool
	// AuthOn says authentication is on: a call without a caller is
	// refused.
	AuthOn bool
	// ShuttingDown, once closed, ends the calls' waits and then closes
	// the sessions; nil: never.
	ShuttingDown <-chan struct{}
}

// Server is the API's MCP server: its tools, and the two handlers of
// the protocol generations (see above).
type Server struct {
	cfg      Config
	temporal client.Client
	agents   *engine.Registry
	// services are the agents' TaskServices, by name, which the tools call.
	services  map[string]*taskservice.TaskService
	guard     *guard.Guard
	server    *mcp.Server
	sessions  http.Handler // protocol versions up to 2025-11-25
	stateless http.Handler // 2026-07-28 and later
	// calls counts the tool calls in flight (closeAtShutdown).
	calls atomic.Int64
}

// New builds the MCP server over the services of reg's agents, whose
// tasks run as workflows reached through c, behind the guard g.
func New(c client.Client, reg *engine.Registry, services map[string]*taskservice.TaskService, g *guard.Guard, cfg Config) *Server {
	m := &Server{cfg: cfg, temporal: c, agents: reg, services: services, guard: g}
	m.server = mcp.NewServer(&mcp.Implementation{Name: "a2aflow", Title: "a2aflow agents", Version: buildVersion()}, &mcp.ServerOptions{
		Instructions: "Each tool is an agent. A call starts a task of the agent (or continues one, with task_id) and answers " +
			"when the task completes, fails or asks a question. A question the client cannot show its user is answered " +
			"with a2aflow_reply; a2aflow_get_task reads a task and a2aflow_cancel_task cancels it.",
		Logger: slog.New(minLevel{cfg.Logger.Handler(), slog.LevelWarn}),
		// No logging capability: the server sends no log messages.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	m.addTools()
	m.server.AddReceivingMiddleware(m.listPermittedTools)
	get := func(*http.Request) *mcp.Server { return m.server }
	opts := mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: cfg.MaxBodyBytes,
		// Limits.AllowedHosts, when set, is the API's own defence against
		// DNS rebinding (Guard.CheckHost); without it the SDK's stays on: a
		// request reaching a loopback address must name a loopback host.
		DisableLocalhostProtection: cfg.HostsChecked,
	}
	sessions := opts
	sessions.SessionTimeout = mcpSessionTimeout
	stateless := opts
	stateless.Stateless = true
	// A call whose client went away stops waiting for its task.
	stateless.PropagateRequestCancellation = true
	m.sessions = withMCPCaller(mcp.NewStreamableHTTPHandler(get, &sessions))
	m.stateless = withMCPCaller(mcp.NewStreamableHTTPHandler(get, &stateless))
	if cfg.ShuttingDown != nil {
		go m.closeAtShutdown()
	}
	return m
}

// mcpShutdownGrace bounds how long the sessions stay open at shutdown for
// the calls in flight to answer.
const mcpShutdownGrace = 10 * time.Second

// mcpAnswerGrace is how long the sessions stay open at shutdown after the
// last call answered.
const mcpAnswerGrace = 500 * time.Millisecond

// closeAtShutdown closes the sessions once the server shuts down and the
// calls in flight have answered (they stop waiting for their tasks at
// once: follow): a session's standalone stream would hold
// http.Server.Shutdown, and closing a session drops the answers still
// due on it.
func (m *Server) closeAtShutdown() {
	<-m.cfg.ShuttingDown
	deadline := time.Now().Add(mcpShutdownGrace)
	for m.calls.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The answers just written reach their clients before the sessions'
	// streams end: a client that sees its session's stream end first may
	// give up on the answers it has not read.
	time.Sleep(min(mcpAnswerGrace, time.Until(deadline)))
	for ss := range m.server.Sessions() {
		_ = ss.Close()
	}
}

// Serve answers a request to guard.MCPPath.
func (m *Server) Serve(c *gin.Context) {
	w, r := c.Writer, c.Request
	// Like an A2A stream, an MCP request may last as long as its task (a
	// call) or its session (GET): it takes one of the client's stream
	// slots, and has no write deadline.
	release, ok := m.guard.OpenStream(w, r, nil)
	if !ok {
		return
	}
	defer release()
	ew := &mcpErrorWriter{ResponseWriter: w}
	defer ew.finish()
	if v := r.Header.Get("MCP-Protocol-Version"); v >= mcpStatelessSince {
		m.stateless.ServeHTTP(ew, r)
		return
	}
	m.sessions.ServeHTTP(ew, r)
}

// withMCPCaller hands the SDK the caller that authentication found: the
// SDK takes a request's caller from an auth.TokenInfo, which only its
// bearer token middleware can set. The token checked here is a stand-in:
// the request passed a2aflow's authentication (any of its schemes) before
// it came here; the TokenInfo names its principal (the SDK binds a session
// to the principal that created it) and carries the request's context for
// the tool handlers (mcpCallContext).
func withMCPCaller(next http.Handler) http.Handler {
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: guard.Principal(r.Context()), Extra: map[string]any{mcpRequestKey: r.Context()}}, nil
	}
	guard := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header
		stand := r.WithContext(r.Context())
		stand.Header = header.Clone()
		stand.Header.Set("Authorization", "Bearer a2aflow-authenticated")
		guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header = header // the request's own headers again
			next.ServeHTTP(w, r)
		})).ServeHTTP(w, stand)
	})
}

// mcpCallContext is the context of one tool call: the SDK's handler
// context (its cancellation, and its values, which route the call's
// notifications and requests to the call's HTTP response) with the values
// of the HTTP request that carried the call first (the caller, the request
// log, the trace span). With sessions the SDK runs a handler in the context
// of the request that created the session, which may be long gone.
type mcpCallContext struct {
	context.Context
	request context.Context
}

func (c mcpCallContext) Value(key any) any {
	if v := c.request.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// callContext returns the context a tool call acts in, ended also when the
// HTTP request carrying it ends, or an error when the call did not come
// through the API's HTTP route (which cannot happen: it has no caller).
func (m *Server) callContext(ctx context.Context, req *mcp.CallToolRequest) (context.Context, context.CancelFunc, error) {
	var request context.Context
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		request, _ = req.Extra.TokenInfo.Extra[mcpRequestKey].(context.Context)
	}
	if request == nil || (m.cfg.AuthOn && guard.Principal(request) == "") {
		return nil, nil, a2a.NewError(a2a.ErrUnauthenticated, "authentication required")
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(request, cancel)
	return mcpCallContext{Context: ctx, request: request}, func() { stop(); cancel() }, nil
}

// mcpErrorWriter answers the SDK's plain-text refusals (http.Error) as
// JSON-RPC error objects, as the MCP transport allows ("a JSON-RPC error
// response that has no id"), with the same status; but a session of another
// principal, which the SDK refuses with 403, reads as an unknown one: 404.
type mcpErrorWriter struct {
	http.ResponseWriter
	status int
	body   *bytes.Buffer // the refusal's text, while one is being written
}

func (w *mcpErrorWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status, w.body = code, new(bytes.Buffer)
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *mcpErrorWriter) Write(b []byte) (int, error) {
	if w.body != nil {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher for the SDK's event streams.
func (w *mcpErrorWriter) Flush() {
	if w.body != nil {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *mcpErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the refusal held back, as JSON-RPC.
func (w *mcpErrorWriter) finish() {
	if w.body == nil {
		return
	}
	msg := strings.TrimSpace(w.body.String())
	status, code := w.status, int64(-32600) // invalid request
	switch {
	case status == http.StatusForbidden && msg == "session user mismatch", status == http.StatusNotFound:
		// -32001, as the other MCP SDKs answer an unknown session.
		status, code, msg = http.StatusNotFound, -32001, "session not found: start a new one (initialize)"
	case status == http.StatusBadRequest && strings.HasPrefix(msg, "malformed payload"):
		code = -32700 // parse error
	case status == http.StatusForbidden:
		code = -31403
	case status >= 500:
		code = -32603
	}
	h := w.Header()
	h.Del("X-Content-Type-Options")
	h.Set("Content-Type", "application/json")
	w.ResponseWriter.WriteHeader(status)
	_ = json.NewEncoder(w.ResponseWriter).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg},
	})
}

// minLevel drops the records of a handler below a level: the SDK logs
// every session it connects at info.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}

// buildVersion is the version of the program serving, for MCP's serverInfo.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
