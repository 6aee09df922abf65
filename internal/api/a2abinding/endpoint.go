package a2abinding

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/workflows"
)

// Config configures the A2A bindings; api.New fills in the
// defaults of its Config.
type Config struct {
	// PublicURL is the base URL clients reach the API at, which the cards
	// list; "": each request's own origin.
	PublicURL string
	// Logger receives panics and, with AccessLog, the gRPC calls' access
	// lines.
	Logger *slog.Logger
	// AccessLog logs one line per gRPC call (the HTTP requests' are the
	// guard's).
	AccessLog bool
	// MaxBodyBytes is the largest message a gRPC call may send.
	MaxBodyBytes int64
	// Auth declares the accepted credentials in the cards; nil: none.
	Auth *guard.Authenticator
	// CardSigner signs every card; nil: cards are unsigned.
	CardSigner *cardsign.Signer
	// GRPC configures the gRPC binding (grpc.go).
	GRPC GRPCConfig
	// ShuttingDown, once closed, turns the gRPC health service to
	// NOT_SERVING.
	ShuttingDown <-chan struct{}
}

// Bindings serve each agent over A2A: JSON-RPC 2.0 and HTTP+JSON on the
// agent's endpoint (Serve), gRPC on a listener of its own (GRPCServer),
// each in A2A 1.0 and 0.3, with a2a-go's transports around the agent's
// TaskService, corrected where a2a-go departs from the specifications
// (a2agofixes.go); and the agents' cards.
type Bindings struct {
	cfg    Config
	agents *engine.Registry
	guard  *guard.Guard
	// handlers are the agents' A2A handlers, by name, which every binding
	// serves (agentHandler).
	handlers map[string]a2asrv.RequestHandler
	// endpoints serve the agents' JSON-RPC and HTTP+JSON bindings, by name.
	endpoints map[string]http.Handler
	// started is when the cards were made: their Last-Modified (cards.go).
	started time.Time
}

// New returns the bindings of reg's agents, served by their
// services and guarded by g.
func New(reg *engine.Registry, services map[string]*taskservice.TaskService, g *guard.Guard, cfg Config) *Bindings {
	b := &Bindings{cfg: cfg, agents: reg, guard: g, handlers: map[string]a2asrv.RequestHandler{},
		endpoints: map[string]http.Handler{}, started: time.Now().UTC().Truncate(time.Second)}
	for _, name := range reg.Names() {
		agent, _ := reg.Get(name)
		b.handlers[name] = b.agentHandler(services[name])
		b.endpoints[name] = b.agentEndpoint(agent, services[name], b.handlers[name])
	}
	return b
}

// Serve serves a request to the JSON-RPC and HTTP+JSON bindings of agent,
// whose endpoint the request reached under prefix ("/agents/{name}", or ""
// for the default agent's routes), which Serve strips.
func (b *Bindings) Serve(w http.ResponseWriter, r *http.Request, agent, prefix string) {
	if _, ok := guard.CallerOf(r.Context()); ok {
		// The extended card lists the interfaces of the card the caller
		// read (cards.go).
		r = r.WithContext(withCardAddrs(r.Context(), b.baseURL(r)+prefix, b.grpcCardAddr(r)))
	}
	http.StripPrefix(prefix, b.endpoints[agent]).ServeHTTP(w, r)
}

// agentEndpoint serves one agent's JSON-RPC (POST on its base path) and
// HTTP+JSON bindings, in the A2A version the request asks for.
func (b *Bindings) agentEndpoint(agent *workflows.Agent, svc *taskservice.TaskService, gated a2asrv.RequestHandler) http.Handler {
	panicToError := a2asrv.WithTransportPanicHandler(func(r any) error {
		b.cfg.Logger.Error("panic serving A2A request", "agent", agent.Name, "panic", r)
		return a2a.ErrInternalError
	})
	keepAlive := a2asrv.WithTransportKeepAlive(15 * time.Second)
	v1RPC := a2asrv.NewJSONRPCHandler(gated, panicToError, keepAlive)
	v1REST := a2asrv.NewRESTHandler(gated, panicToError, keepAlive)
	v0RPC := a2av0.NewJSONRPCHandler(gated, panicToError, keepAlive)
	v0REST := a2av0.NewRESTHandler(gated, panicToError, keepAlive)

	// guardBinding (validate.go) checks each request before a2a-go decodes it.
	guarded := guardBinding(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonRPC := r.Method == http.MethodPost && (r.URL.Path == "" || r.URL.Path == "/")
		version := protocolVersion(r)
		if version != "1.0" && version != "0.3" {
			writeVersionNotSupported(w, version, jsonRPC)
			return
		}
		// The A2A-Extensions header against the agent's (extensions.go).
		r = negotiateExtensions(w, r, agent)
		// The fork extension's routes and methods (fork.go).
		if (jsonRPC && serveForkRPC(w, r, svc)) || (!jsonRPC && serveForkREST(w, r, svc)) {
			return
		}
		// The console's timeline of a task (timeline.go).
		if !jsonRPC && serveTimeline(w, r, svc) {
			return
		}
		// A stream takes one of the client's slots and has no deadline.
		done, serve := b.openStream(w, r, jsonRPC)
		if !serve {
			return
		}
		defer done()
		// Over HTTP+JSON a refused subscription is an HTTP error, not a 200
		// stream holding the error, which @a2a-js/sdk reads as an empty
		// event. Over JSON-RPC the error stays inside the stream, its first
		// and only event (the choice is refuseSubscription's comment's).
		if id, rpcID, ok := subscribeTarget(r, jsonRPC); ok && !jsonRPC && refuseSubscription(w, r, svc, jsonRPC, id, rpcID) {
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
	// The request log notes the agent, binding and version of each
	// request (guard/accesslog.go).
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		binding := "http+json"
		if r.URL.Path == "" || r.URL.Path == "/" {
			binding = "jsonrpc"
		}
		if isV11(r) {
			// A2A 1.1: 1.0 with the task generation (v11.go).
			guard.NoteEndpoint(r.Context(), agent.Name, binding, v11Version)
			serveV11(w, r, guarded)
			return
		}
		guard.NoteEndpoint(r.Context(), agent.Name, binding, protocolVersion(r))
		guarded.ServeHTTP(w, r)
	})
}

// agentHandler returns the handler every binding serves svc's agent
// through: the service with its agent's extended card (cards.go), noted
// for the logs (noted.go) and gated by the caller's permissions and the
// agent's required extensions (extensions.go). JSON-RPC, HTTP+JSON and
// gRPC (grpc.go) all wrap this one handler.
func (b *Bindings) agentHandler(svc *taskservice.TaskService) a2asrv.RequestHandler {
	agent := svc.Agent().Name
	noted := notedService{agentService{TaskService: svc, isDefault: agent == b.agents.Default().Name}}
	return gatedService{RequestHandler: noted, agent: agent}
}

// openStream prepares r for a stream when it asks for one (streams.go):
// one of the client's stream slots, no write deadline (Guard.OpenStream).
// It returns whether to serve r, and the function to call when r is
// served.
func (b *Bindings) openStream(w http.ResponseWriter, r *http.Request, jsonRPC bool) (done func(), serve bool) {
	stream, rpcID := streamRequest(r, jsonRPC)
	if !stream {
		return func() {}, true
	}
	return b.guard.OpenStream(w, r, rpcID)
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
	err := a2a.NewError(a2a.ErrVersionNotSupported, fmt.Sprintf("A2A version %q is not supported; use 1.1, 1.0 or 0.3", version))
	b := apierror.HTTPJSON
	if jsonRPC {
		b = apierror.JSONRPCCodeOnly
	}
	apierror.Write(w, b, nil, 0, err)
}
