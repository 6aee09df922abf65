package api

import (
	"context"
	"iter"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/engine"
)

// The API's log lines about a request carry what the API learned of it as
// it served it (requestLog): the agent, the task and its context. The
// access log is one line per request, logged when the request ends (a
// stream's when it closes): method, path (never the query string), A2A
// method, binding and version, status, duration, bytes written, principal
// and peer address. It holds nothing of the request's headers or body:
// no Authorization header, API key, token nor push config credential.

// requestLog is what the API learns about a request while serving it.
type requestLog struct {
	mu        sync.Mutex
	agent     string
	binding   string // "jsonrpc" or "http+json"
	version   string // the A2A version served, "1.0" or "0.3"
	method    string // the A2A method: JSON-RPC's from the body, else the service's
	taskID    string
	contextID string
}

type requestLogKey struct{}

// requestLogFrom returns the request log of ctx, nil outside a request.
func requestLogFrom(ctx context.Context) *requestLog {
	l, _ := ctx.Value(requestLogKey{}).(*requestLog)
	return l
}

// noteEndpoint records the agent whose endpoint r reached, and the binding
// and version it is served in. r's path is the endpoint's: without the
// /agents/{name} prefix.
func noteEndpoint(r *http.Request, agent string) {
	l := requestLogFrom(r.Context())
	if l == nil {
		return
	}
	binding := "http+json"
	if r.URL.Path == "" || r.URL.Path == "/" {
		binding = "jsonrpc"
	}
	version := protocolVersion(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.agent, l.binding = agent, binding
	if version == "1.0" || version == "0.3" {
		l.version = version
	}
}

// Bounds of what a request log keeps of the client's words, not yet
// checked when recorded: a JSON-RPC method name, task and context IDs.
const (
	maxLoggedMethod = 64
	maxLoggedID     = 256
)

// bounded returns s cut to n bytes, valid UTF-8.
func bounded(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// noteMethod records the A2A method of the request unless one is known.
func noteMethod(ctx context.Context, method string) {
	method = bounded(method, maxLoggedMethod)
	if l := requestLogFrom(ctx); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.method == "" {
			l.method = method
		}
	}
}

// noteTask records the task the request is about, and its context when
// known.
func noteTask(ctx context.Context, taskID a2a.TaskID, contextID string) {
	if l := requestLogFrom(ctx); l != nil && (taskID != "" || contextID != "") {
		l.mu.Lock()
		defer l.mu.Unlock()
		if taskID != "" {
			l.taskID = bounded(string(taskID), maxLoggedID)
		}
		if contextID != "" {
			l.contextID = bounded(contextID, maxLoggedID)
		}
	}
}

// a2aEndpoint wraps the endpoint of agent, to record it and the binding of
// each request.
func a2aEndpoint(agent string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noteEndpoint(r, agent)
		next.ServeHTTP(w, r)
	})
}

// accessLog is the outermost middleware: it gives the request its
// requestLog and, with Config.AccessLog, logs the request's access line
// when it ends. The health probes' lines are debug, not to drown the
// others.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	method, path := c.Request.Method, c.Request.URL.Path
	rl := &requestLog{}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestLogKey{}, rl))
	c.Next()
	s.observeRequest(rl, c.Writer.Status(), time.Since(start)) // metrics.go
	if !s.cfg.AccessLog {
		return
	}
	level := slog.LevelInfo
	if path == "/healthz" || path == "/readyz" {
		level = slog.LevelDebug
	}
	// c.Request now carries what the middleware and handlers added to its
	// context: the principal, the request log.
	ctx := c.Request.Context()
	if !s.cfg.Logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("method", method),
		slog.String("path", bounded(path, maxLoggedPath)),
	)
	rl.mu.Lock()
	for _, kv := range [...][2]string{{"a2a_method", rl.method}, {"binding", rl.binding}, {"a2a_version", rl.version}} {
		if kv[1] != "" {
			attrs = append(attrs, slog.String(kv[0], kv[1]))
		}
	}
	rl.mu.Unlock()
	attrs = append(attrs,
		slog.Int("status", c.Writer.Status()),
		slog.Float64("duration_ms", math.Round(float64(time.Since(start).Microseconds()))/1000),
		slog.Int("bytes", max(c.Writer.Size(), 0)),
	)
	if strings.HasPrefix(c.Writer.Header().Get("Content-Type"), "text/event-stream") {
		attrs = append(attrs, slog.Bool("stream", true))
	}
	if p := PrincipalFrom(ctx); p != "" {
		attrs = append(attrs, slog.String("principal", p))
	}
	attrs = append(attrs, slog.String("remote", remoteHost(c.Request)))
	// requestLogHandler adds the agent, task and context.
	s.cfg.Logger.LogAttrs(ctx, level, "http request", attrs...)
}

// maxLoggedPath bounds the path on an access line.
const maxLoggedPath = 512

// remoteHost is the address of r's peer, without its port.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// requestLogger returns logger with requestLogHandler: its lines logged
// with a request's context (InfoContext...) carry the request's agent, task
// and context.
func requestLogger(logger *slog.Logger) *slog.Logger {
	if _, ok := logger.Handler().(requestLogHandler); ok {
		return logger
	}
	return slog.New(requestLogHandler{Handler: logger.Handler()})
}

// requestLogHandler adds a request's keys (requestLog) to the lines logged
// with its context, but the keys a line or its logger has already, and the
// trace hook's (traceAttrs).
type requestLogHandler struct {
	slog.Handler
	own map[string]bool // the request keys the logger's attributes hold
}

func (h requestLogHandler) Handle(ctx context.Context, r slog.Record) error {
	var add []slog.Attr
	if l := requestLogFrom(ctx); l != nil {
		l.mu.Lock()
		for _, kv := range [...][2]string{{engine.LogKeyAgent, l.agent}, {engine.LogKeyTaskID, l.taskID}, {engine.LogKeyContextID, l.contextID}} {
			if kv[1] != "" && !h.own[kv[0]] {
				add = append(add, slog.String(kv[0], kv[1]))
			}
		}
		l.mu.Unlock()
	}
	if len(add) > 0 {
		r.Attrs(func(a slog.Attr) bool {
			add = deleteAttr(add, a.Key)
			return len(add) > 0
		})
	}
	add = append(add, traceAttrs(ctx)...)
	if len(add) > 0 {
		r = r.Clone()
		r.AddAttrs(add...)
	}
	return h.Handler.Handle(ctx, r)
}

func deleteAttr(attrs []slog.Attr, key string) []slog.Attr {
	for i, a := range attrs {
		if a.Key == key {
			return append(attrs[:i], attrs[i+1:]...)
		}
	}
	return attrs
}

func (h requestLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	own := h.own
	copied := false
	for _, a := range attrs {
		switch a.Key {
		case engine.LogKeyAgent, engine.LogKeyTaskID, engine.LogKeyContextID:
			if !copied {
				own, copied = maps.Clone(h.own), true
				if own == nil {
					own = make(map[string]bool, 3)
				}
			}
			own[a.Key] = true
		}
	}
	return requestLogHandler{Handler: h.Handler.WithAttrs(attrs), own: own}
}

func (h requestLogHandler) WithGroup(name string) slog.Handler {
	return requestLogHandler{Handler: h.Handler.WithGroup(name), own: h.own}
}

// traceAttrs (tracing.go) adds the trace and span IDs.

// notedService records on the request log the A2A method of each call
// and the task it is about, then calls the service.
type notedService struct{ svc *TaskService }

var _ a2asrv.RequestHandler = notedService{}

func noteCall(ctx context.Context, method string, taskID a2a.TaskID) {
	noteMethod(ctx, method)
	noteTask(ctx, taskID, "")
}

func noteResult(ctx context.Context, t *a2a.Task) {
	if t != nil {
		noteTask(ctx, t.ID, t.ContextID)
	}
}

// noteEvents notes the task of a stream's events.
func noteEvents(ctx context.Context, events iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		noted := false
		for e, err := range events {
			if t, ok := e.(*a2a.Task); ok && !noted {
				noteResult(ctx, t)
				noted = true
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

func (n notedService) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	noteCall(ctx, "GetTask", req.ID)
	t, err := n.svc.GetTask(ctx, req)
	noteResult(ctx, t)
	return t, err
}

func (n notedService) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	noteMethod(ctx, "ListTasks")
	if req.ContextID != "" {
		noteTask(ctx, "", req.ContextID)
	}
	return n.svc.ListTasks(ctx, req)
}

func (n notedService) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	noteCall(ctx, "CancelTask", req.ID)
	t, err := n.svc.CancelTask(ctx, req)
	noteResult(ctx, t)
	return t, err
}

func (n notedService) noteMessage(ctx context.Context, method string, req *a2a.SendMessageRequest) {
	noteMethod(ctx, method)
	if req != nil && req.Message != nil {
		noteTask(ctx, req.Message.TaskID, req.Message.ContextID)
	}
}

func (n notedService) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	n.noteMessage(ctx, "SendMessage", req)
	res, err := n.svc.SendMessage(ctx, req)
	if t, ok := res.(*a2a.Task); ok {
		noteResult(ctx, t)
	}
	return res, err
}

func (n notedService) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	n.noteMessage(ctx, "SendStreamingMessage", req)
	return countStream(noteEvents(ctx, n.svc.SendStreamingMessage(ctx, req))) // metrics.go
}

func (n notedService) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	noteCall(ctx, "SubscribeToTask", req.ID)
	return countStream(noteEvents(ctx, n.svc.SubscribeToTask(ctx, req))) // metrics.go
}

func (n notedService) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	noteCall(ctx, "GetTaskPushNotificationConfig", req.TaskID)
	return n.svc.GetTaskPushConfig(ctx, req)
}

func (n notedService) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	noteCall(ctx, "ListTaskPushNotificationConfigs", req.TaskID)
	return n.svc.ListTaskPushConfigs(ctx, req)
}

func (n notedService) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	var taskID a2a.TaskID
	if req != nil {
		taskID = req.TaskID
	}
	noteCall(ctx, "CreateTaskPushNotificationConfig", taskID)
	return n.svc.CreateTaskPushConfig(ctx, req)
}

func (n notedService) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	noteCall(ctx, "DeleteTaskPushNotificationConfig", req.TaskID)
	return n.svc.DeleteTaskPushConfig(ctx, req)
}

func (n notedService) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	noteMethod(ctx, "GetExtendedAgentCard")
	return n.svc.GetExtendedAgentCard(ctx, req)
}
