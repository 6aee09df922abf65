package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
)

// a2aflow serves its Prometheus series (package metrics) at GET /metrics:
// on the API port of serve and api (api/metrics.go), on worker's
// --health-addr port (health.go), on temporal's --metrics-addr port. The
// Temporal SDK's series come from the metrics handler every client gets
// here. The embedded Temporal server's own series (service_requests,
// persistence_latency...) join serve's /metrics, and are temporal's
// --metrics-addr.

// temporalMetrics is the metrics handler of a Temporal client: h when the
// caller set one, else the SDK's series into the process's registry.
func temporalMetrics(h client.MetricsHandler) client.MetricsHandler {
	if h != nil {
		return h
	}
	return metrics.TemporalHandler()
}

// metricsHandler serves GET /metrics.
func metricsHandler() http.Handler { return metrics.Handler() }

// metricsConfig is where the embedded Temporal server's metrics go: serve
// adds them to its /metrics, temporal serves them on --metrics-addr.
type metricsConfig struct {
	// Addr is temporal's --metrics-addr: where GET /metrics answers; ""
	// records and serves none.
	Addr string
	// Embedded is serve's: the embedded server's series join the API's
	// /metrics.
	Embedded bool
}

func (c *metricsConfig) bind(fs *pflag.FlagSet) {
	cmdutil.Bind(fs).String(&c.Addr, "metrics-addr", "A2AFLOW_METRICS_ADDR", "",
		"listen address of GET /metrics: the Temporal server's own metrics (service_requests, persistence_latency...) with the process's; empty serves none")
}

// serverMetrics reports whether the embedded server records its metrics.
func (c *metricsConfig) serverMetrics() bool { return c.Embedded || c.Addr != "" }

// include adds the embedded server's series to the process's /metrics
// until the returned function is called.
func (c *metricsConfig) include(srv *temporalserver.Server) (remove func()) {
	if g := srv.Metrics(); g != nil {
		return metrics.Include(g)
	}
	return func() {}
}

// serve serves GET /metrics on --metrics-addr until ctx is done; the
// returned function waits for it to stop.
func (c *metricsConfig) serve(ctx context.Context, logger *slog.Logger) (wait func(), err error) {
	if c.Addr == "" {
		return func() {}, nil
	}
	ln, err := listen(c.Addr, "the metrics port")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics port", "error", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	logger.Info("metrics port", "metrics", httpURL(ln)+"/metrics")
	return func() { _ = srv.Close(); <-done }, nil
}
