package a2abinding

// The gRPC binding (A2A 1.0 §10): a2a-go's a2agrpc handlers, 1.0
// (lf.a2a.v1.A2AService) and 0.3 (a2a.v1.A2AService), over the very handlers
// the JSON-RPC and HTTP+JSON bindings serve (Bindings.agentHandler: the
// TaskService, noted and gated). What the Gin middleware does for HTTP the
// interceptors below do for gRPC, from the call's metadata, through the
// guard: authentication (the API key header and "authorization: Bearer
// ..."), the rate limits, the stream slots (Guard.AdmitCall,
// Guard.TakeStreamSlot); and the A2A-Extensions negotiation, a deadline
// for unary calls, the access line and the request metrics. Errors have
// the same mapping as over HTTP+JSON (apierror.GRPC): the gRPC status
// named in apierror's codes and a
// google.rpc.ErrorInfo with the A2A reason (a2aflow's own reason and domain
// for its refusals), a RetryInfo where HTTP sends Retry-After. Only the
// service's errors are mapped: a status it wraps (Temporal's) never reaches
// the client as it is.
//
// Agents: a 1.0 request names its agent in its tenant field, which clients
// copy from the card's GRPC interface (tenant = the agent's name); a 0.3
// request has no such field and reaches the default agent, or the one the
// a2aflow-agent metadata key names (which 1.0 requests may use too, when
// their tenant is empty).

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// GRPCConfig configures the gRPC binding (Bindings.GRPCServer).
type GRPCConfig struct {
	// Addr is the address cards list for the gRPC binding, "host:port";
	// with no host or an unspecified one (":9090", "0.0.0.0:9090") the host
	// the client reached the HTTP API at (PublicURL's, else the request's)
	// with that port. Empty: the binding is off and no card lists it.
	Addr string
	// Reflection registers the gRPC server reflection service, which lets
	// tools such as grpcurl list and call the A2A services without their
	// .proto files. Off by default.
	Reflection bool
	// APIURL is the HTTP API's base URL, which the extended card a gRPC
	// caller gets lists when PublicURL is unset.
	APIURL string
	// UnaryTimeout bounds each unary call (the HTTP API's write timeout's
	// counterpart); streams have none. 0: the client's deadline alone.
	UnaryTimeout time.Duration
}

// GRPCAgentMetadata is the metadata key naming the agent a gRPC call is
// for when its request has no tenant (every A2A 0.3 request).
const GRPCAgentMetadata = "a2aflow-agent"

// The gRPC services of A2A 1.0 and 0.3.
const (
	grpcServiceV1 = "lf.a2a.v1.A2AService"
	grpcServiceV0 = "a2a.v1.A2AService"
)

// GRPCServer returns a gRPC server serving the A2A binding of every agent
// in both versions, the standard health service (grpc.health.v1.Health:
// SERVING while ready says so, for "" and both A2A services) and, with
// GRPCConfig.Reflection, server reflection. opts come after the server's
// own (message size, keepalive, interceptors).
func (b *Bindings) GRPCServer(ready func(context.Context) bool, opts ...grpc.ServerOption) *grpc.Server {
	onPanic := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		b.cfg.Logger.ErrorContext(ctx, "panic serving gRPC call", "panic", p, "stack", string(debug.Stack()))
		return apierror.GRPC(a2a.ErrInternalError)
	})
	all := append([]grpc.ServerOption{
		// The HTTP API's body limit, as the largest message a call may send.
		grpc.MaxRecvMsgSize(int(min(b.cfg.MaxBodyBytes, math.MaxInt32))),
		// Streams last as long as their tasks: pings keep idle ones alive
		// through proxies and find dead peers.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(recovery.UnaryServerInterceptor(onPanic), b.grpcUnary),
		grpc.ChainStreamInterceptor(recovery.StreamServerInterceptor(onPanic), b.grpcStream),
	}, opts...)
	srv := grpc.NewServer(all...)
	router := grpcRouter{b}
	grpcv1.NewHandler(router).RegisterWith(srv)
	grpcv0.NewHandler(router).RegisterWith(srv)

	hs := health.NewServer()
	for _, name := range []string{"", grpcServiceV1, grpcServiceV0} {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(srv, readinessHealth{Server: hs, ready: ready})
	if b.cfg.ShuttingDown != nil {
		go func() {
			<-b.cfg.ShuttingDown
			hs.Shutdown() // NOT_SERVING, to Check and to every Watch
		}()
	}
	if b.cfg.GRPC.Reflection {
		reflection.Register(srv)
	}
	return srv
}

// readinessHealth answers Check with NOT_SERVING while the API is not ready
// (/readyz: Temporal unreachable, shutting down); Watch follows the
// server's status.
type readinessHealth struct {
	*health.Server
	ready func(context.Context) bool
}

func (h readinessHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	resp, err := h.Server.Check(ctx, req)
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return resp, err
	}
	if !h.ready(ctx) {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
	}
	return resp, nil
}

// grpcCardAddr is where the cards served for r list the gRPC binding (see
// GRPCConfig.Addr), "" when it is off.
func (b *Bindings) grpcCardAddr(r *http.Request) string {
	addr := b.cfg.GRPC.Addr
	if addr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host != "" && host != "0.0.0.0" && host != "::" {
		return addr
	}
	u, err := url.Parse(b.baseURL(r))
	if err != nil || u.Hostname() == "" {
		return net.JoinHostPort("localhost", port)
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// a2aGRPCMethod splits a call's full method into the A2A version of its
// service and the method; ok is false for other services (health,
// reflection).
func a2aGRPCMethod(full string) (version, method string, ok bool) {
	service, method, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	switch service {
	case grpcServiceV1:
		return "1.0", method, true
	case grpcServiceV0:
		return "0.3", method, true
	}
	return "", "", false
}

// grpcCall is one A2A gRPC call being served.
type grpcCall struct {
	start   time.Time
	version string
	method  string
	log     *guard.RequestLog
	http    *http.Request // the call's metadata as headers, its peer and authority, for the HTTP code it shares
	release func()        // gives a stream's slot back
	v11     bool          // A2A 1.1 on the 1.0 service (grpcv11.go)
}

// servedVersion is the A2A version the call is served in.
func (c *grpcCall) servedVersion() string {
	if c.v11 {
		return v11Version
	}
	return c.version
}

// grpcAdmit does for a call what the HTTP middleware does for a request,
// but the agent (which needs the request message): the request log, the
// rate limits and authentication. It returns the call and its context, or
// the status refusing it.
func (b *Bindings) grpcAdmit(ctx context.Context, fullMethod string) (*grpcCall, context.Context, error) {
	version, method, _ := a2aGRPCMethod(fullMethod)
	call := &grpcCall{start: time.Now(), version: version, method: method, release: func() {}}
	ctx, call.log = guard.WithRequestLog(ctx, "grpc", version)

	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	r := &http.Request{Method: http.MethodPost, Header: h, URL: &url.URL{Path: fullMethod}, Host: strings.Join(md.Get(":authority"), "")}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
	}
	call.http = r.WithContext(ctx)
	// The a2a-version metadata as the A2A-Version header of the HTTP
	// bindings: absent, 1.0 or 0.3 pass (the service called says which),
	// any other version is refused before anything runs. 1.1 is served
	// on the 1.0 service (grpcv11.go).
	call.v11 = version == "1.0" && isV11(r)
	if v := protocolVersion(r); v != "1.0" && v != "0.3" && !call.v11 {
		return call, ctx, apierror.GRPC(a2a.NewError(a2a.ErrVersionNotSupported,
			fmt.Sprintf("A2A version %q is not supported; use 1.1 (on %s), 1.0 or 0.3", guard.BoundedID(v), grpcServiceV1)))
	}

	// LimitRefused, Authenticate and LimitRate of the HTTP API, in order.
	ctx, refused := b.guard.AdmitCall(call.http)
	call.http = call.http.WithContext(ctx)
	switch {
	case refused == nil:
		return call, ctx, nil
	case refused.RetryAfter > 0:
		return call, ctx, apierror.GRPCRetry(refused.Err, refused.RetryAfter)
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(flatten("www-authenticate", refused.Challenges)...))
	return call, ctx, apierror.GRPC(refused.Err)
}

// flatten returns key, v1, key, v2... for metadata.Pairs.
func flatten(key string, values []string) []string {
	out := make([]string, 0, 2*len(values))
	for _, v := range values {
		out = append(out, key, v)
	}
	return out
}

// route finds the agent of the call from its request message (see the
// file's comment), negotiates its extensions, takes a stream's slot, and
// returns the context the agent's handler serves the call in. setHeader
// sends the activated extensions back.
func (b *Bindings) route(ctx context.Context, call *grpcCall, req any, stream bool, setHeader func(metadata.MD) error) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	name := ""
	if t, ok := req.(interface{ GetTenant() string }); ok && call.version == "1.0" {
		name = t.GetTenant()
	}
	if name == "" {
		if v := md.Get(GRPCAgentMetadata); len(v) > 0 {
			name = v[0]
		}
	}
	agent := b.agents.Default()
	if name != "" {
		a, ok := b.agents.Get(name)
		if !ok {
			return ctx, apierror.GRPC(a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf("no agent named %q", guard.BoundedID(name))))
		}
		agent = a
	}
	call.log.SetAgent(agent.Name)
	ctx = context.WithValue(ctx, grpcAgentKey{}, agent.Name)
	if _, ok := guard.CallerOf(ctx); ok {
		// The extended card lists the interfaces of the card the client
		// read: the HTTP API's at PublicURL (or the host it dialled), and
		// this binding at the address it dialled.
		base := b.cfg.PublicURL
		if base == "" {
			base = strings.TrimRight(b.cfg.GRPC.APIURL, "/")
		}
		ctx = withCardAddrs(ctx, base+"/agents/"+agent.Name, call.http.Host)
	}

	// negotiateExtensions, on metadata: both header names are read, and
	// the activated extensions are sent back under both.
	hr := (&http.Request{Header: call.http.Header, URL: &url.URL{}}).WithContext(ctx)
	w := headerWriter{http.Header{}}
	hr = negotiateExtensions(w, hr, agent)
	ctx = hr.Context()
	if len(w.h) > 0 {
		out := metadata.MD{}
		for k, vs := range w.h {
			out[strings.ToLower(k)] = vs
		}
		if call.version == "1.0" {
			delete(out, strings.ToLower(taskservice.LegacyExtensionsHeader))
		} else {
			out[strings.ToLower(taskservice.LegacyExtensionsHeader)] = w.h.Values(a2a.SvcParamExtensions)
		}
		_ = setHeader(out)
	}

	if stream {
		release, err := b.guard.TakeStreamSlot(call.http.WithContext(ctx))
		if err != nil {
			return ctx, apierror.GRPCRetry(err, guard.StreamRetryAfter)
		}
		call.release = release
	}
	return ctx, nil
}

// headerWriter is the http.ResponseWriter negotiateExtensions writes its
// header to.
type headerWriter struct{ h http.Header }

func (w headerWriter) Header() http.Header         { return w.h }
func (w headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w headerWriter) WriteHeader(int)             {}

type grpcAgentKey struct{}

// done logs and counts the call once it is answered.
func (b *Bindings) done(ctx context.Context, call *grpcCall, err error) {
	call.release()
	code := status.Code(err)
	httpStatus := apierror.HTTPStatusOfGRPC(code)
	guard.CountRequest(call.log, httpStatus, time.Since(call.start))
	if !b.cfg.AccessLog || !b.cfg.Logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", call.method),
		slog.String("binding", "grpc"),
		slog.String("a2a_version", call.servedVersion()),
		slog.String("code", code.String()),
		slog.Int("status", httpStatus),
		slog.Float64("duration_ms", math.Round(float64(time.Since(call.start).Microseconds()))/1000),
	}
	if p := guard.Principal(ctx); p != "" {
		attrs = append(attrs, slog.String("principal", p))
	}
	attrs = append(attrs, slog.String("remote", guard.RemoteHost(call.http)))
	b.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "grpc request", attrs...)
}

// grpcUnary is the unary interceptor of the A2A services.
func (b *Bindings) grpcUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	if _, _, ok := a2aGRPCMethod(info.FullMethod); !ok {
		return handler(ctx, req)
	}
	call, ctx, err := b.grpcAdmit(ctx, info.FullMethod)
	defer func() { b.done(ctx, call, err) }()
	if err != nil {
		return nil, err
	}
	if ctx, err = b.route(ctx, call, req, false, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) }); err != nil {
		return nil, err
	}
	if call.v11 {
		g, err := grpcGeneration(req)
		if err != nil {
			return nil, apierror.GRPC(err)
		}
		ctx = taskservice.WithGeneration(ctx, g)
		defer func() {
			if err == nil {
				grpcWithGeneration(resp)
			}
		}()
	}
	if t := b.cfg.GRPC.UnaryTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	resp, err = handler(ctx, req)
	return resp, apierror.WithErrorInfo(err)
}

// grpcStream is the stream interceptor of the A2A services. The agent is
// routed when the handler reads the request (routedStream.RecvMsg).
func (b *Bindings) grpcStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	if _, _, ok := a2aGRPCMethod(info.FullMethod); !ok {
		return handler(srv, ss)
	}
	call, ctx, err := b.grpcAdmit(ss.Context(), info.FullMethod)
	defer func() { b.done(ctx, call, err) }()
	if err != nil {
		return err
	}
	rs := &routedStream{ServerStream: ss, b: b, call: call, ctx: ctx}
	err = apierror.WithErrorInfo(handler(srv, rs))
	if rs.err != nil {
		err = rs.err
	}
	return err
}

// routedStream is a server stream whose context, once the request is read,
// is the routed one.
type routedStream struct {
	grpc.ServerStream
	b      *Bindings
	call   *grpcCall
	ctx    context.Context
	routed bool
	err    error // the routing's refusal
}

func (r *routedStream) Context() context.Context { return r.ctx }

func (r *routedStream) RecvMsg(m any) error {
	if err := r.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if r.routed {
		return nil
	}
	r.routed = true
	ctx, err := r.b.route(r.ctx, r.call, m, true, r.ServerStream.SetHeader)
	if err == nil && r.call.v11 {
		var g taskservice.Generation
		if g, err = grpcGeneration(m); err == nil {
			ctx = taskservice.WithGeneration(ctx, g)
		} else {
			err = apierror.GRPC(err)
		}
	}
	if err != nil {
		r.err = err
		return err
	}
	r.ctx = ctx
	return nil
}

// SendMsg sends m, with its generations in their 1.1 fields on a 1.1
// call (grpcv11.go).
func (r *routedStream) SendMsg(m any) error {
	if r.call.v11 {
		grpcWithGeneration(m)
	}
	return r.ServerStream.SendMsg(m)
}

// grpcRouter is the a2asrv.RequestHandler behind a2agrpc's handlers: it
// calls the routed agent's handler (route) and turns its errors into
// statuses with the API's mapping (apierror.GRPC), which a2agrpc passes on
// as they are.
type grpcRouter struct{ b *Bindings }

var _ a2asrv.RequestHandler = grpcRouter{}

func (g grpcRouter) handler(ctx context.Context) a2asrv.RequestHandler {
	name, _ := ctx.Value(grpcAgentKey{}).(string)
	if h, ok := g.b.handlers[name]; ok {
		return h
	}
	return g.b.handlers[g.b.agents.Default().Name]
}

func grpcErrors(events iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for e, err := range events {
			if !yield(e, apierror.GRPC(err)) {
				return
			}
		}
	}
}

func (g grpcRouter) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	t, err := g.handler(ctx).GetTask(ctx, req)
	return t, apierror.GRPC(err)
}

func (g grpcRouter) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	r, err := g.handler(ctx).ListTasks(ctx, req)
	return r, apierror.GRPC(err)
}

func (g grpcRouter) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	t, err := g.handler(ctx).CancelTask(ctx, req)
	return t, apierror.GRPC(err)
}

func (g grpcRouter) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	r, err := g.handler(ctx).SendMessage(ctx, req)
	return r, apierror.GRPC(err)
}

func (g grpcRouter) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return grpcErrors(countStream(g.handler(ctx).SubscribeToTask(ctx, req)))
}

func (g grpcRouter) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return grpcErrors(countStream(g.handler(ctx).SendStreamingMessage(ctx, req)))
}

func (g grpcRouter) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	c, err := g.handler(ctx).GetTaskPushConfig(ctx, req)
	return c, apierror.GRPC(err)
}

func (g grpcRouter) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	r, err := g.handler(ctx).ListTaskPushConfigs(ctx, req)
	return r, apierror.GRPC(err)
}

func (g grpcRouter) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	c, err := g.handler(ctx).CreateTaskPushConfig(ctx, req)
	return c, apierror.GRPC(err)
}

func (g grpcRouter) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	return apierror.GRPC(g.handler(ctx).DeleteTaskPushConfig(ctx, req))
}

func (g grpcRouter) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	c, err := g.handler(ctx).GetExtendedAgentCard(ctx, req)
	return c, apierror.GRPC(err)
}
