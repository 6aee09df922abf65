// Package metrics holds a2aflow's Prometheus series and the Temporal SDK's,
// in one registry served as Prometheus text at GET /metrics (the API port
// of serve and api, the worker's --health-addr port).
//
// a2aflow's own series are prefixed a2aflow_ and carry low-cardinality
// labels only (agent, state, method, binding, status, outcome, provider,
// model, reason): never a task, context or principal.
//
// The Temporal SDK's series (temporal_request_total,
// temporal_workflow_completed_total, temporal_activity_execution_latency...)
// come from the client's MetricsHandler (TemporalHandler): the SDK's tally
// handler (go.temporal.io/sdk/contrib/tally) reporting through tally's
// Prometheus reporter into the same registry.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// Registry is the process's registry: a2aflow's series, the Temporal
// SDK's, and the Go runtime's and process's collectors.
var Registry = prometheus.NewRegistry()

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Handler serves Registry as Prometheus text (or OpenMetrics when asked).
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

var (
	temporalOnce    sync.Once
	temporalHandler client.MetricsHandler
)

// temporalReportInterval is how often the SDK's tally scope reports into
// Registry: what /metrics shows of Temporal lags by up to this much.
const temporalReportInterval = time.Second

// TemporalHandler is the Temporal client's metrics handler
// (client.Options.MetricsHandler): the SDK's series, Prometheus-named
// (counters end in _total, timers are histograms in seconds), in Registry.
// Every client of the process shares it.
func TemporalHandler() client.MetricsHandler {
	temporalOnce.Do(func() {
		reporter, err := tallyprom.Configuration{TimerType: "histogram"}.NewReporter(tallyprom.ConfigurationOptions{
			Registry: Registry,
			OnError:  func(error) {}, // a series registered twice with other labels: dropped, not fatal
		})
		if err != nil {
			temporalHandler = client.MetricsNopHandler
			return
		}
		scope, _ := tally.NewRootScope(tally.ScopeOptions{
			CachedReporter:  reporter,
			Separator:       tallyprom.DefaultSeparator,
			SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
		}, temporalReportInterval)
		temporalHandler = sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope))
	})
	return temporalHandler
}
