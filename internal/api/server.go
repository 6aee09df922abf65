package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// DefaultHintedPollInterval is Config.PollInterval with a Notifier.
const DefaultHintedPollInterval = 5 * time.Minute

// Config configures the HTTP API. The zero value works.
type Config struct {
	// PublicURL is the base URL clients reach the API at, used in agent
	// cards (e.g. "https://agents.example.com"). Default: derived from each
	// request's Host header, which suits local use.
	PublicURL string
	// TaskQueue is the Temporal task queue of the task workflows; default
	// wire.DefaultTaskQueue.
	TaskQueue string
	// MaxBodyBytes limits request bodies; larger ones get 413. Default 4 MiB.
	MaxBodyBytes int64
	// Logger receives request errors; default slog.Default(). The lines
	// about a request carry its agent, task_id and context_id (accesslog.go).
	Logger *slog.Logger
	// AccessLog logs one line per request at info (accesslog.go): method,
	// path, A2A method, status, duration, bytes, principal; never
	// credentials. Off by default; serve and api turn it on (--access-log).
	AccessLog bool
	// ApproverGroups maps approvers (principals, or X-Approver names with
	// auth off) to the approver groups they belong to. Nil lets anyone
	// decide for any group, which suits a local all-in-one.
	ApproverGroups map[string][]string
	// TemporalUIURL is the Temporal Web UI's base URL, for links from the
	// inbox and approvals to a task's run; optional.
	TemporalUIURL string
	// Namespace is the Temporal namespace, for those links; default "default".
	Namespace string
	// Notifier, when the worker runs in the same process, wakes streaming
	// subscribers as soon as a task has a new event. Optional.
	Notifier *hints.Broker
	// PollInterval is how long a task's streams go without querying it for
	// new events: the latency of streams without a Notifier (default 250
	// ms), and with one a safety net (default 5 minutes). Hints are pushed,
	// and wherever they are known to get lost every stream is woken instead
	// (a listener reconnecting, a worker starting or failing to send:
	// hints.Outbox), so the poll only covers a worker killed between a
	// workflow task and its hints with no worker starting after it (a task
	// ended outside its handler, terminated or timed out, is found by one
	// visibility list every 5 s per process); 1,000 idle followed tasks
	// cost about 3 queries a second.
	PollInterval time.Duration
	// StreamQueryTimeout bounds each query a stream makes of its task's
	// workflow for new events: a query to an unreachable Temporal node fails
	// after it instead of holding the stream. Default 10 seconds.
	StreamQueryTimeout time.Duration
	// StreamUnreachableAfter is how long a stream keeps retrying while its
	// task's workflow cannot be queried (Temporal unavailable, queries timing
	// out) before it ends cleanly, as at shutdown: the client resubscribes,
	// to another replica or later, and misses nothing (the events wait in
	// the workflow). Default 30 seconds.
	StreamUnreachableAfter time.Duration
	// Push configures push notification configs: which webhook addresses
	// are allowed and how their secrets are sealed. The zero value works.
	Push PushOptions
	// Auth checks the credentials of A2A requests (see auth.go); nil, the
	// default, serves every caller.
	Auth *Authenticator
	// Payloads is the payload store holding the pages of long task
	// histories (and large payloads, through the Temporal client). Without
	// it, a long task's GetTask answers its recent messages only.
	Payloads blobstore.Store
	// WaitTimeout bounds how long a request waits for a worker: to accept a
	// message or cancel, and for a blocking SendMessage, for the task to stop
	// and wait or end. Past it, a write no worker accepted is answered with
	// a retryable error, and an accepted one with the task as it is.
	// Default 30 seconds.
	WaitTimeout time.Duration
	// NoLeanWrites starts tasks without wire.LeanWrites: a
	// task that completes while visibility has it working then writes
	// A2ATaskState completed (one history event and one visibility write
	// more per such task), and the approvals' search attributes are
	// upserted at each change. Default false: lean writes.
	NoLeanWrites bool
	// NoLocalModelCalls starts tasks without wire.LocalModelCalls: their
	// LLM calls are ordinary
	// activities (three history events and an activity task each) instead
	// of local ones (one marker event). Default false: local model calls.
	NoLocalModelCalls bool
	// Limits bound the streams and requests of each client and the host
	// names the API answers to (limits.go). The zero value caps streams at
	// DefaultMaxStreamsPerPrincipal and limits nothing else.
	Limits Limits
	// UICodecOrigins, when set, serves the Temporal Web UI's codec endpoint
	// (blobstore.CodecHandler over Payloads) at /a2aflow/codec for a UI
	// running elsewhere (the temporalio/ui container of docker-compose.yml),
	// to browsers from these origins only; with authentication on it needs
	// a credential like any A2A request. `a2aflow serve` needs none of it:
	// its UI serves the codec on its own address.
	UICodecOrigins []string
	// DefaultHistoryLength is how many of a task's latest messages a read
	// that sets no historyLength gets (A2A lets the server apply a lower
	// limit than "all"): reading a long task's whole history costs time in
	// proportion to its age. Default 1,000; negative: all.
	DefaultHistoryLength int
	// Usage sums the LLM usage the workers recorded (GET /usage); nil: the
	// route answers that this server keeps none.
	Usage UsageReader
	// Credentials keeps the credentials users give tasks that ask for them
	// (auth-required): the secret is taken out of the message and stored
	// sealed, and the task gets a reference. Nil: such a message is refused.
	Credentials *secrets.CredentialStore
	// Waitpoints mints and checks the tokens that complete waitpoints
	// (POST /waitpoints/{id}, waitpoints.go), from the secrets key. Nil: no
	// waitpoint is completed by token, only by the task owner's message.
	Waitpoints *wire.WaitpointTokens
	// Routes, when set, adds the embedding program's own routes to the API
	// (a2aflow.WithRoutes). They sit behind the same host check, body limit,
	// authentication and rate limit as the A2A routes; the caller is
	// PrincipalFrom(c.Request.Context()). They must not take the paths a2aflow
	// serves: /agents, /approvals, /waitpoints, /schedules, /inbox, /mcp, /healthz, /readyz, /.well-known.
	Routes func(gin.IRouter)
	// ReadinessChecks are checks of /readyz besides Temporal's ("temporal",
	// "namespace"): serve adds its worker's (health.go).
	ReadinessChecks []Check
	// ShuttingDown, once closed, ends every open stream at once, cleanly (a
	// client resubscribes to another replica or to the restarted server and
	// misses nothing: the events wait in the workflow), and turns /readyz to
	// 503. Close it when shutting the server down: http.Server.Shutdown
	// waits for streams, which would last as long as their tasks
	// (srv.RegisterOnShutdown). Nil: never.
	ShuttingDown <-chan struct{}
	// CardSigner, when set, signs every agent card (A2A 1.0 §8.4, cards.go)
	// and serves its public key at /.well-known/jwks.json. Nil: cards are
	// unsigned and that path answers 404.
	CardSigner *cardsign.Signer
	// GRPC configures the gRPC binding, which Server.GRPCServer serves on a
	// listener of the caller's (grpc.go). Its zero value lists it in no
	// card.
	GRPC GRPCConfig
}

// UICodecPath is where the API serves the Web UI's codec endpoint when
// Config.UICodecOrigins is set (the same path as the embedded UI's).
const UICodecPath = "/a2aflow/codec"

// recording is what the tasks the API starts record: every recording
// change (wire.CurrentRecording), less those the operator turned off.
func (c *Config) recording() wire.Recording {
	r := wire.CurrentRecording
	if c.NoLeanWrites {
		r = r.Without(wire.LeanWrites)
	}
	if c.NoLocalModelCalls {
		r = r.Without(wire.LocalModelCalls)
	}
	return r
}

// Server is the A2A HTTP API over one Temporal namespace.
type Server struct {
	cfg      Config
	temporal client.Client
	agents   *engine.Registry
	engine   *gin.Engine
	limits   requestLimits
	// readiness answers /readyz (health.go).
	readiness *Readiness
	// handlers are the agents' A2A handlers, by name, which every binding
	// serves (agentHandler).
	handlers map[string]a2asrv.RequestHandler
	// services are the agents' TaskServices, by name, which MCP's tools
	// call (mcp_tools.go).
	services map[string]*TaskService
	// closed hints the streams of tasks ended outside their handler, with a
	// Notifier (closedwatch.go).
	closed *closedWatch
	// started is when the cards were made: their Last-Modified (cards.go).
	started time.Time
}

// New returns the API serving the agents of reg, whose tasks run as workflows
// reached through c.
func New(c client.Client, reg *engine.Registry, cfg Config) *Server {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = wire.DefaultTaskQueue
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 4 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = requestLogger(cfg.Logger)
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
		if cfg.Notifier != nil {
			cfg.PollInterval = DefaultHintedPollInterval
		}
	}
	if cfg.StreamQueryTimeout <= 0 {
		cfg.StreamQueryTimeout = 10 * time.Second
	}
	if cfg.StreamUnreachableAfter <= 0 {
		cfg.StreamUnreachableAfter = 30 * time.Second
	}
	if cfg.DefaultHistoryLength == 0 {
		cfg.DefaultHistoryLength = 1000
	}
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = 30 * time.Second
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	s := &Server{cfg: cfg, temporal: c, agents: reg, limits: newRequestLimits(cfg.Limits), handlers: map[string]a2asrv.RequestHandler{},
		services: map[string]*TaskService{}, started: time.Now().UTC().Truncate(time.Second)}
	if cfg.Notifier != nil {
		s.closed = newClosedWatch(c, cfg.Namespace, cfg.Notifier, cfg.Logger)
	}
	s.readiness = NewReadiness(cfg.Logger, cfg.ShuttingDown, append(TemporalChecks(c, cfg.Namespace), cfg.ReadinessChecks...)...)
	s.engine = s.routes()
	return s
}

// Handler returns the http.Handler serving every route.
func (s *Server) Handler() http.Handler { return s.engine }

func (s *Server) routes() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(s.accessLog) // first: it sees the status the recovery answers
	// The request's span (tracing.go; a no-op without OTEL_*).
	r.Use(traceRequest)
	r.Use(gin.CustomRecovery(func(c *gin.Context, err any) {
		s.cfg.Logger.Error("panic serving request", "path", c.Request.URL.Path, "panic", err)
		abortWithA2AError(c, bindingPlain, 0, a2a.ErrInternalError)
	}))
	// The hardening of limits.go: the host first, then the body's limit,
	// and the rate limit on both sides of authentication, which names the
	// client.
	r.Use(s.checkHost)
	r.Use(s.limitBody)
	r.Use(s.limitRefused)
	r.Use(s.authenticate)
	r.Use(s.limitRate)
	r.Use(requireJSONDecision)

	endpoints := map[string]http.Handler{}
	for _, name := range s.agents.Names() {
		agent, _ := s.agents.Get(name)
		svc, handler := s.agentHandler(agent)
		s.handlers[name] = handler // gRPC serves the same handlers (grpc.go)
		s.services[name] = svc
		endpoints[name] = a2aEndpoint(name, s.agentEndpoint(agent, svc, handler))
	}
	def := s.agents.Default()

	if len(s.cfg.UICodecOrigins) > 0 && s.cfg.Payloads != nil {
		r.Any(UICodecPath+"/*op", gin.WrapH(blobstore.CodecHandler(s.cfg.Payloads, blobstore.CodecOptions{
			AllowedOrigins: s.cfg.UICodecOrigins, Logger: s.cfg.Logger,
		})))
	}
	mcpSvc := s.newMCP() // mcp.go
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		r.Handle(method, MCPPath, mcpSvc.serve)
	}
	s.approvalRoutes(r)
	s.usageRoutes(r) // usage.go
	s.waitpointRoutes(r)
	s.scheduleRoutes(r) // schedules.go
	if s.cfg.Routes != nil {
		s.cfg.Routes(r)
	}
	r.GET("/healthz", gin.WrapH(Liveness()))
	r.GET("/readyz", gin.WrapH(s.readiness))
	r.GET("/metrics", serveMetrics)      // metrics.go
	r.GET("/openapi.json", serveOpenAPI) // openapi.go
	r.GET("/docs", serveDocs)
	r.GET("/agents", s.listAgents)
	r.GET("/.well-known/agent-card.json", s.card(def, ""))
	r.GET(JWKSPath, s.jwks) // cards.go
	r.Any("/agents/:name/*path", func(c *gin.Context) {
		agent, ok := s.agents.Get(c.Param("name"))
		if !ok {
			noAgent(c)
			return
		}
		prefix := "/agents/" + agent.Name
		if c.Param("path") == "/.well-known/agent-card.json" {
			s.card(agent, prefix)(c)
			return
		}
		http.StripPrefix(prefix, endpoints[agent.Name]).ServeHTTP(c.Writer, c.Request)
	})
	// POST /agents/{name} without a trailing path is the JSON-RPC endpoint;
	// Gin's /agents/:name/*path does not match it.
	r.POST("/agents/:name", func(c *gin.Context) {
		agent, ok := s.agents.Get(c.Param("name"))
		if !ok {
			noAgent(c)
			return
		}
		http.StripPrefix("/agents/"+agent.Name, endpoints[agent.Name]).ServeHTTP(c.Writer, c.Request)
	})
	// Everything else is the default agent's endpoint (POST / and the
	// HTTP+JSON paths such as /message:send, which Gin's router cannot
	// express because of the colon).
	r.NoRoute(func(c *gin.Context) {
		// Gin presets 404 for unmatched routes; the endpoint sets its own status.
		c.Status(http.StatusOK)
		endpoints[def.Name].ServeHTTP(c.Writer, c.Request)
	})
	return r
}

// agentEndpoint serves one agent's JSON-RPC (POST on its base path) and
// HTTP+JSON bindings, in the A2A version the request asks for.
func (s *Server) agentEndpoint(agent *workflows.Agent, svc *TaskService, gated a2asrv.RequestHandler) http.Handler {
	panicToError := a2asrv.WithTransportPanicHandler(func(r any) error {
		s.cfg.Logger.Error("panic serving A2A request", "agent", agent.Name, "panic", r)
		return a2a.ErrInternalError
	})
	keepAlive := a2asrv.WithTransportKeepAlive(15 * time.Second)
	v1RPC := a2asrv.NewJSONRPCHandler(gated, panicToError, keepAlive)
	v1REST := a2asrv.NewRESTHandler(gated, panicToError, keepAlive)
	v0RPC := a2av0.NewJSONRPCHandler(gated, panicToError, keepAlive)
	v0REST := a2av0.NewRESTHandler(gated, panicToError, keepAlive)

	// guardBinding (validate.go) checks each request before a2a-go decodes it.
	return guardBinding(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonRPC := r.Method == http.MethodPost && (r.URL.Path == "" || r.URL.Path == "/")
		version := protocolVersion(r)
		if version != "1.0" && version != "0.3" {
			writeVersionNotSupported(w, version, jsonRPC)
			return
		}
		// The A2A-Extensions header against the agent's (extensions.go).
		r = negotiateExtensions(w, r, agent)
		// The fork extension's routes and methods (fork.go).
		if (jsonRPC && svc.serveForkRPC(w, r)) || (!jsonRPC && svc.serveForkREST(w, r)) {
			return
		}
		// A stream takes one of the client's slots and has no deadline.
		done, serve := s.openStream(w, r, jsonRPC)
		if !serve {
			return
		}
		defer done()
		// Over HTTP+JSON a refused subscription is an HTTP error, not a 200
		// stream holding the error, which @a2a-js/sdk reads as an empty
		// event. Over JSON-RPC the error stays inside the stream, as
		// a2a-go's client expects (it reads no plain error response there).
		if id, rpcID, ok := subscribeTarget(r, jsonRPC); ok && !jsonRPC && svc.refuseSubscription(w, r, jsonRPC, id, rpcID) {
			return
		}
		switch version {
		case "1.0":
			if jsonRPC {
				v1RPC.ServeHTTP(w, r)
			} else {
				v1REST.ServeHTTP(w, r)
			}
		case "0.3":
			if jsonRPC {
				v0RPC.ServeHTTP(w, r)
			} else {
				v0REST.ServeHTTP(w, r)
			}
		}
	}))
}

// agentHandler returns agent's TaskService and the handler every binding
// serves it through: the service, noted for the logs and gated by the
// agent's required extensions. JSON-RPC, HTTP+JSON and gRPC (grpc.go) all
// wrap this one handler.
func (s *Server) agentHandler(agent *workflows.Agent) (*TaskService, a2asrv.RequestHandler) {
	svc := &TaskService{
		temporal: taskIDGuard{s.temporal}, agent: agent, taskQueue: s.cfg.TaskQueue, logger: s.cfg.Logger,
		notifier: s.cfg.Notifier, closed: s.closed, pollInterval: s.cfg.PollInterval,
		queryTimeout: s.cfg.StreamQueryTimeout, unreachableAfter: s.cfg.StreamUnreachableAfter, push: s.cfg.Push,
		approverGroups: s.cfg.ApproverGroups, authOn: s.cfg.Auth.Enabled(), payloads: s.cfg.Payloads, waitTimeout: s.cfg.WaitTimeout,
		recording: s.cfg.recording(), credentials: s.cfg.Credentials, defaultHistory: s.cfg.DefaultHistoryLength, namespace: s.cfg.Namespace,
		shuttingDown: s.cfg.ShuttingDown, defaultAgent: agent.Name == s.agents.Default().Name,
	}
	noted := notedService{svc} // the method and task of each call, for the logs (accesslog.go)
	// Required extensions are checked before the service (extensions.go).
	return svc, gatedService{RequestHandler: noted, agent: agent.Name}
}

// noAgent answers a path under /agents/{name} that names no agent: 404,
// as a path with no A2A method (restResponseGuard), in the plain shape.
func noAgent(c *gin.Context) {
	abortWithA2AError(c, bindingPlain, http.StatusNotFound,
		a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf("no agent named %q", c.Param("name"))))
}

// protocolVersion reads the A2A-Version header (or query parameter) as
// "1.0", "0.3" (also when absent, as the spec asks) or the unknown value.
func protocolVersion(r *http.Request) string {
	v := r.Header.Get(a2a.SvcParamVersion)
	if v == "" {
		v = r.URL.Query().Get(a2a.SvcParamVersion)
	}
	switch strings.TrimPrefix(strings.TrimSpace(v), "v") {
	case "1.0", "1", "1.0.0":
		return "1.0"
	case "", "0.3", "0.3.0":
		return "0.3"
	default:
		return v
	}
}

func writeVersionNotSupported(w http.ResponseWriter, version string, jsonRPC bool) {
	err := a2a.NewError(a2a.ErrVersionNotSupported, fmt.Sprintf("A2A version %q is not supported; use 1.0 or 0.3", version))
	b := bindingREST
	if jsonRPC {
		b = bindingJSONRPCCodeOnly
	}
	writeA2AError(w, b, nil, 0, err)
}

// limitBody answers 413 for bodies over the limit, before any decoding.
func (s *Server) limitBody(c *gin.Context) {
	if c.Request.ContentLength > s.cfg.MaxBodyBytes {
		writeTooLarge(c.Writer, c.Request, c.Request.ContentLength, s.cfg.MaxBodyBytes)
		c.Abort()
		return
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
	c.Next()
}

func (s *Server) listAgents(c *gin.Context) {
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Card        string `json:"card"`
	}
	base := s.baseURL(c.Request)
	var out []entry
	for _, name := range s.agents.Names() {
		a, _ := s.agents.Get(name)
		out = append(out, entry{Name: a.Name, Description: a.Description, Card: base + "/agents/" + a.Name + "/.well-known/agent-card.json"})
	}
	c.JSON(http.StatusOK, gin.H{"default": s.agents.Default().Name, "agents": out})
}

// baseURL is the configured public URL or, by default, the request's own origin.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
