package guard

import (
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
)

// Config configures the guard. The zero value lets every request
// through but for the default cap on streams.
type Config struct {
	// Auth checks the credentials of requests (auth.go); nil serves every
	// caller.
	Auth *Authenticator
	// Limits bound the streams and requests of each client and the host
	// names the API answers to (limits.go).
	Limits Limits
	// MaxBodyBytes limits request bodies; larger ones get 413 (body.go).
	MaxBodyBytes int64
	// AccessLog logs one line per request at info (accesslog.go).
	AccessLog bool
	// Logger receives the access lines, refused credentials and panics.
	Logger *slog.Logger
}

// Guard is what every way into the API passes before it reaches an agent
// or a resource: the host check, the body limit, authentication, the rate
// limit and the stream cap, the access log, the request's span and
// metrics. HTTP requests pass its Gin middleware (Middleware); a gRPC call
// passes AdmitCall and TakeStreamSlot, and MCP's requests OpenStream, as
// the A2A streams do.
type Guard struct {
	cfg    Config
	limits requestLimits
}

// New returns the guard of cfg.
func New(cfg Config) *Guard {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Guard{cfg: cfg, limits: newRequestLimits(cfg.Limits)}
}

// Middleware returns the Gin handlers every HTTP request passes, in order:
// the access log first, so that it sees the status the recovery answers;
// the request's span (tracing.go; a no-op without OTEL_*); the recovery of
// a panic; then the hardening of limits.go: the host first, then the
// body's limit, and the rate limit on both sides of authentication, which
// names the client; last, the CSRF guard of approval decisions.
func (g *Guard) Middleware() []gin.HandlerFunc {
	return []gin.HandlerFunc{
		g.AccessLog,
		TraceRequest,
		gin.CustomRecovery(func(c *gin.Context, err any) {
			g.cfg.Logger.Error("panic serving request", "path", c.Request.URL.Path, "panic", err)
			apierror.Abort(c, apierror.Plain, 0, a2a.ErrInternalError)
		}),
		g.CheckHost,
		g.LimitBody,
		g.LimitRefused,
		g.Authenticate,
		g.LimitRate,
		RequireJSONDecision,
	}
}
