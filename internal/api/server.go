package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/a2aflow/a2aflow/internal/api/a2abinding"
	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/mcpserver"
	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/secrets"
	"github.com/a2aflow/a2aflow/internal/wire"
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
	// about a request carry its agent, task_id and context_id (guard/accesslog.go).
	Logger *slog.Logger
	// AccessLog logs one line per request at info (guard/accesslog.go): method,
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
	Push taskservice.PushOptions
	// Auth checks the credentials of A2A requests (see guard/auth.go); nil, the
	// default, serves every caller.
	Auth *guard.Authenticator
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
	// names the API answers to (guard/limits.go). The zero value caps streams at
	// DefaultMaxStreamsPerPrincipal and limits nothing else.
	Limits guard.Limits
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
	Usage resources.UsageReader
	// Policies keeps the approval policies' versions (/policies); nil: the
	// routes answer that this server keeps none. PolicyAdmins says who
	// administers them (guard.PolicyAdminOf).
	Policies     resources.PolicyStore
	PolicyAdmins map[string][]string
	// Delegations keeps the approvers' delegations (/delegations); nil:
	// none are kept.
	Delegations resources.DelegationStore
	// Credentials keeps the credentials users give tasks that ask for them
	// (auth-required): the secret is taken out of the message and stored
	// sealed, and the task gets a reference. Nil: such a message is refused.
	Credentials *secrets.CredentialStore
	// Waitpoints mints and checks the tokens that complete waitpoints
	// (POST /waitpoints/{id}, resources/waitpoints.go), from the secrets key. Nil: no
	// waitpoint is completed by token, only by the task owner's message.
	Waitpoints *wire.WaitpointTokens
	// Routes, when set, adds the embedding program's own routes to the API
	// (a2aflow.WithRoutes). They sit behind the same host check, body limit,
	// authentication and rate limit as the A2A routes; the caller is
	// PrincipalFrom(c.Request.Context()). They must not take the paths a2aflow
	// serves: /agents, /approvals, /waitpoints, /schedules, /inbox, /console, /mcp, /healthz, /readyz, /.well-known.
	Routes func(gin.IRouter)
	// ReadinessChecks are checks of /readyz besides Temporal's ("temporal",
	// "namespace"): serve adds its worker's (health.go).
	ReadinessChecks []Check
	// StorageCheck, when set, is asked before each message is delivered:
	// its error refuses the message at once, retryable (JSON-RPC -32603
	// with data reason STORAGE_FULL, HTTP 503 with Retry-After), instead of
	// a wait for a Temporal that cannot record it. serve checks the free
	// space of its data directory.
	StorageCheck func() error
	// ShuttingDown, once closed, ends every open stream at once, cleanly (a
	// client resubscribes to another replica or to the restarted server and
	// misses nothing: the events wait in the workflow), and turns /readyz to
	// 503. Close it when shutting the server down: http.Server.Shutdown
	// waits for streams, which would last as long as their tasks
	// (srv.RegisterOnShutdown). Nil: never.
	ShuttingDown <-chan struct{}
	// CardSigner, when set, signs every agent card (A2A 1.0 §8.4, a2abinding/cards.go)
	// and serves its public key at /.well-known/jwks.json. Nil: cards are
	// unsigned and that path answers 404.
	CardSigner *cardsign.Signer
	// GRPC configures the gRPC binding, which Server.GRPCServer serves on a
	// listener of the caller's (a2abinding/grpc.go). Its zero value lists it in no
	// card.
	GRPC a2abinding.GRPCConfig
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

// Server is the A2A HTTP API over one Temporal namespace: the guard every
// request passes, the agents' A2A bindings and MCP server over their task
// services, and the REST resources, on one Gin engine.
type Server struct {
	cfg    Config
	agents *engine.Registry
	engine *gin.Engine
	guard  *guard.Guard
	// readiness answers /readyz (health.go).
	readiness *Readiness
	bindings  *a2abinding.Bindings
	resources *resources.Resources
	mcp       *mcpserver.Server
}

// New returns the API serving the agents of reg, whose tasks run as workflows
// reached through c.
func New(c client.Client, reg *engine.Registry, cfg Config) *Server {
	cfg = withDefaults(cfg)
	s := &Server{cfg: cfg, agents: reg}
	s.guard = guard.New(guard.Config{Auth: cfg.Auth, Limits: cfg.Limits, MaxBodyBytes: cfg.MaxBodyBytes,
		AccessLog: cfg.AccessLog, Logger: cfg.Logger})
	services := taskservice.NewServices(c, reg, taskservice.Config{
		TaskQueue: cfg.TaskQueue, Namespace: cfg.Namespace, Logger: cfg.Logger, Notifier: cfg.Notifier,
		PollInterval: cfg.PollInterval, QueryTimeout: cfg.StreamQueryTimeout, UnreachableAfter: cfg.StreamUnreachableAfter,
		WaitTimeout: cfg.WaitTimeout, Push: cfg.Push, ApproverGroups: cfg.ApproverGroups, AuthOn: cfg.Auth.Enabled(),
		Payloads: cfg.Payloads, Recording: cfg.recording(),
		Credentials: cfg.Credentials, DefaultHistoryLength: cfg.DefaultHistoryLength, ShuttingDown: cfg.ShuttingDown,
		Usage: cfg.Usage, TemporalUIURL: cfg.TemporalUIURL, StorageCheck: cfg.StorageCheck, Delegations: cfg.Delegations,
	})
	s.bindings = a2abinding.New(reg, services, s.guard, a2abinding.Config{PublicURL: cfg.PublicURL, Logger: cfg.Logger,
		AccessLog: cfg.AccessLog, MaxBodyBytes: cfg.MaxBodyBytes, Auth: cfg.Auth, CardSigner: cfg.CardSigner, GRPC: cfg.GRPC,
		ShuttingDown: cfg.ShuttingDown})
	s.resources = resources.New(c, reg, services, resources.Config{TaskQueue: cfg.TaskQueue, Namespace: cfg.Namespace,
		TemporalUIURL: cfg.TemporalUIURL, Logger: cfg.Logger, Auth: cfg.Auth, ApproverGroups: cfg.ApproverGroups,
		Waitpoints: cfg.Waitpoints, Usage: cfg.Usage, Recording: cfg.recording(),
		Policies: cfg.Policies, PolicyAdmins: cfg.PolicyAdmins, Delegations: cfg.Delegations})
	s.mcp = mcpserver.New(c, reg, services, s.guard, mcpserver.Config{Logger: cfg.Logger, MaxBodyBytes: cfg.MaxBodyBytes,
		HostsChecked: len(cfg.Limits.AllowedHosts) > 0, AuthOn: cfg.Auth.Enabled(), ShuttingDown: cfg.ShuttingDown})
	s.readiness = NewReadiness(cfg.Logger, cfg.ShuttingDown, append(TemporalChecks(c, cfg.Namespace), cfg.ReadinessChecks...)...)
	s.engine = s.routes()
	return s
}

// withDefaults is cfg with the default of each field left zero.
func withDefaults(cfg Config) Config {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = wire.DefaultTaskQueue
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 4 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = guard.RequestLogger(cfg.Logger)
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
	return cfg
}

// Handler returns the http.Handler serving every route.
func (s *Server) Handler() http.Handler { return s.engine }

// GRPCServer returns a gRPC server serving the A2A binding of every agent
// in both versions, the standard health service (grpc.health.v1.Health:
// SERVING while /readyz is ready, for "" and both A2A services) and, with
// GRPCConfig.Reflection, server reflection. opts come after the server's
// own (message size, keepalive, interceptors). The caller serves it on a
// listener and stops it (GracefulStop) after closing Config.ShuttingDown,
// which ends the open streams.
func (s *Server) GRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	ready := func(ctx context.Context) bool {
		_, ok := s.readiness.Check(ctx)
		return ok
	}
	return s.bindings.GRPCServer(ready, opts...)
}

// PrincipalFrom returns the authenticated caller of a request served by the
// API (its context), or "" when authentication is off: what a route added
// with Config.Routes checks before it answers.
func PrincipalFrom(ctx context.Context) string { return guard.Principal(ctx) }

func (s *Server) routes() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(s.guard.Middleware()...)
	def := s.agents.Default()

	if len(s.cfg.UICodecOrigins) > 0 && s.cfg.Payloads != nil {
		r.Any(UICodecPath+"/*op", gin.WrapH(blobstore.CodecHandler(s.cfg.Payloads, blobstore.CodecOptions{
			AllowedOrigins: s.cfg.UICodecOrigins, Logger: s.cfg.Logger,
		})))
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		r.Handle(method, guard.MCPPath, s.mcp.Serve) // mcpserver/server.go
	}
	s.resources.AddRoutes(r)
	if s.cfg.Routes != nil {
		s.cfg.Routes(r)
	}
	r.GET("/healthz", gin.WrapH(Liveness()))
	r.GET("/readyz", gin.WrapH(s.readiness))
	r.GET("/metrics", serveMetrics)      // metrics.go
	r.GET("/openapi.json", serveOpenAPI) // openapi.go
	r.GET("/docs", serveDocs)
	r.GET("/agents", s.bindings.ListAgents)
	r.GET("/.well-known/agent-card.json", s.bindings.Card(def, ""))
	r.GET(guard.JWKSPath, s.bindings.JWKS) // a2abinding/cards.go
	r.Any("/agents/:name/*path", func(c *gin.Context) {
		agent, ok := s.agents.Get(c.Param("name"))
		if !ok {
			noAgent(c)
			return
		}
		prefix := "/agents/" + agent.Name
		if c.Param("path") == "/.well-known/agent-card.json" {
			s.bindings.Card(agent, prefix)(c)
			return
		}
		s.bindings.Serve(c.Writer, c.Request, agent.Name, prefix)
	})
	// POST /agents/{name} without a trailing path is the JSON-RPC endpoint;
	// Gin's /agents/:name/*path does not match it.
	r.POST("/agents/:name", func(c *gin.Context) {
		agent, ok := s.agents.Get(c.Param("name"))
		if !ok {
			noAgent(c)
			return
		}
		s.bindings.Serve(c.Writer, c.Request, agent.Name, "/agents/"+agent.Name)
	})
	// Everything else is the default agent's endpoint (POST / and the
	// HTTP+JSON paths such as /message:send, which Gin's router cannot
	// express because of the colon).
	r.NoRoute(func(c *gin.Context) {
		// Gin presets 404 for unmatched routes; the endpoint sets its own status.
		c.Status(http.StatusOK)
		s.bindings.Serve(c.Writer, c.Request, def.Name, "")
	})
	return r
}

// noAgent answers a path under /agents/{name} that names no agent: 404,
// as a path with no A2A method (restResponseGuard), in the plain shape.
func noAgent(c *gin.Context) {
	apierror.Abort(c, apierror.Plain, http.StatusNotFound,
		a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf("no agent named %q", c.Param("name"))))
}
