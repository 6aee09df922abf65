package temporalserver

import (
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/server/common/metrics"
)

// The embedded server's own metrics (Options.Metrics): the series a
// Temporal server exports with its Prometheus configuration
// (global.metrics.prometheus, tally), under the same names, so that
// Temporal's server dashboards and alerts work unchanged: service_requests,
// service_latency, persistence_requests, persistence_latency,
// schedule_to_start_latency... They are registered into a registry of the
// server's own, Server.Metrics, which the caller serves (a2aflow serve adds
// it to its /metrics).

// serverMetricsInterval is how often the server's tally scope reports into
// the registry.
const serverMetricsInterval = time.Second

// serverHistogramBoundaries are the server's default histogram buckets by
// unit (its config's defaultPerUnitHistogramBoundaries), which a handler
// built outside its configuration loader must be given.
var serverHistogramBoundaries = map[string][]float64{
	metrics.Dimensionless: {1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000},
	metrics.Milliseconds:  {1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000},
	metrics.Bytes:         {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216},
}

// newServerMetrics returns the server's metrics handler, reporting into reg
// like the server's own Prometheus configuration does (timers as
// histograms in seconds, the default buckets), and the closer that stops
// its reporting.
func newServerMetrics(reg *prometheus.Registry) (metrics.Handler, io.Closer) {
	boundaries := map[string][]float64{}
	for unit, b := range serverHistogramBoundaries {
		boundaries[unit] = b
	}
	seconds := make([]float64, 0, len(boundaries[metrics.Milliseconds]))
	for _, ms := range boundaries[metrics.Milliseconds] {
		seconds = append(seconds, ms/1000)
	}
	boundaries[metrics.Seconds] = seconds
	// tallyprom.NewReporter, not its Configuration, which would also
	// register /metrics on http.DefaultServeMux.
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              reg,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: seconds,
		// A series the server registers twice with other labels is
		// dropped, as with the server's own configuration (which logs).
		OnRegisterError: func(error) {},
	})
	safe := tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_'}}
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter: reporter,
		Separator:      tallyprom.DefaultSeparator,
		// tally's own series (tally_internal_...) are the SDK scope's
		// already: twice, they would collide in a2aflow's /metrics.
		OmitCardinalityMetrics: true,
		SanitizeOptions: &tally.SanitizeOptions{
			NameCharacters: safe, KeyCharacters: safe, ValueCharacters: safe,
			ReplacementCharacter: tally.DefaultReplacementCharacter,
		},
	}, serverMetricsInterval)
	return metrics.NewTallyMetricsHandler(metrics.ClientConfig{PerUnitHistogramBoundaries: boundaries}, scope), closer
}

// Metrics is the registry of the server's own metrics, nil unless
// Options.Metrics asked for them.
func (s *Server) Metrics() prometheus.Gatherer {
	if s.metrics == nil {
		return nil
	}
	return s.metrics
}
