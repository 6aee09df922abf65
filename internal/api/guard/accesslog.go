package guard

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/engine"
)

// The API's log lines about a request carry what the API learned of it as
// it served it (RequestLog): the agent, the task and its context. The
// access log is one line per request, logged when the request ends (a
// stream's when it closes): method, path (never the query string), A2A
// method, binding and version, status, duration, bytes written, principal
// and peer address. It holds nothing of the request's headers or body:
// no Authorization header, API key, token nor push config credential.

// RequestLog is what the API learns about a request while serving it.
type RequestLog struct {
	mu        sync.Mutex
	agent     string
	binding   string // "jsonrpc" or "http+json"
	version   string // the A2A version served, "1.1", "1.0" or "0.3"
	method    string // the A2A method: JSON-RPC's from the body, else the service's
	taskID    string
	contextID string
}

type requestLogKey struct{}

// requestLogFrom returns the request log of ctx, nil outside a request.
func requestLogFrom(ctx context.Context) *RequestLog {
	l, _ := ctx.Value(requestLogKey{}).(*RequestLog)
	return l
}

// WithRequestLog gives a call that comes another way than HTTP (a gRPC
// call) its request log, noting the binding and A2A version it is served
// in; the HTTP requests get theirs from AccessLog.
func WithRequestLog(ctx context.Context, binding, version string) (context.Context, *RequestLog) {
	l := &RequestLog{binding: binding, version: version}
	return context.WithValue(ctx, requestLogKey{}, l), l
}

// SetAgent notes the agent the request is for.
func (l *RequestLog) SetAgent(agent string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.agent = agent
}

// NoteEndpoint records the agent whose endpoint the request of ctx
// reached, and the binding ("jsonrpc", "http+json") and A2A version ("1.0"
// or "0.3"; another is not noted) it is served in.
func NoteEndpoint(ctx context.Context, agent, binding, version string) {
	l := requestLogFrom(ctx)
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.agent, l.binding = agent, binding
	if version == "1.1" || version == "1.0" || version == "0.3" {
		l.version = version
	}
}

// NoteVersion records the A2A version the request of ctx is served in,
// once it is known to be another than its header said (a2abinding/versionless.go).
func NoteVersion(ctx context.Context, version string) {
	if l := requestLogFrom(ctx); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.version = version
	}
}

// Bounds of what a request log keeps of the client's words, not yet
// checked when recorded: a JSON-RPC method name, task and context IDs.
const (
	maxLoggedMethod = 64
	maxLoggedID     = 256
)

// BoundedID is s, a client's word not yet checked (an ID, a version, an
// agent's name), as a log line or a message quotes it: at most
// maxLoggedID bytes, valid UTF-8.
func BoundedID(s string) string { return bounded(s, maxLoggedID) }

// bounded returns s cut to n bytes, valid UTF-8.
func bounded(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// NoteMethod records the A2A method of the request unless one is known.
func NoteMethod(ctx context.Context, method string) {
	method = bounded(method, maxLoggedMethod)
	if l := requestLogFrom(ctx); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.method == "" {
			l.method = method
		}
	}
}

// NoteTask records the task the request is about, and its context when
// known.
func NoteTask(ctx context.Context, taskID a2a.TaskID, contextID string) {
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

// AccessLog is the outermost middleware: it gives the request its
// RequestLog and, with Config.AccessLog, logs the request's access line
// when it ends. The health probes' lines are debug, not to drown the
// others.
func (g *Guard) AccessLog(c *gin.Context) {
	start := time.Now()
	method, path := c.Request.Method, c.Request.URL.Path
	rl := &RequestLog{}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestLogKey{}, rl))
	c.Next()
	CountRequest(rl, c.Writer.Status(), time.Since(start)) // metrics.go
	if !g.cfg.AccessLog {
		return
	}
	level := slog.LevelInfo
	if path == "/healthz" || path == "/readyz" {
		level = slog.LevelDebug
	}
	// c.Request now carries what the middleware and handlers added to its
	// context: the principal, the request log.
	ctx := c.Request.Context()
	if !g.cfg.Logger.Enabled(ctx, level) {
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
	if p := Principal(ctx); p != "" {
		attrs = append(attrs, slog.String("principal", p))
	}
	attrs = append(attrs, slog.String("remote", RemoteHost(c.Request)))
	// requestLogHandler adds the agent, task and context.
	g.cfg.Logger.LogAttrs(ctx, level, "http request", attrs...)
}

// maxLoggedPath bounds the path on an access line.
const maxLoggedPath = 512

// RemoteHost is the address of r's peer, without its port.
func RemoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// RequestLogger returns logger with requestLogHandler: its lines logged
// with a request's context (InfoContext...) carry the request's agent, task
// and context.
func RequestLogger(logger *slog.Logger) *slog.Logger {
	if _, ok := logger.Handler().(requestLogHandler); ok {
		return logger
	}
	return slog.New(requestLogHandler{Handler: logger.Handler()})
}

// requestLogHandler adds a request's keys (RequestLog) to the lines logged
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
