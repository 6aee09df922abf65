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
	dto "github.com/prometheus/client_model/go"
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

// Handler serves Registry and the registries Include added as Prometheus
// text (or OpenMetrics when asked). A family that cannot be gathered is left
// out of the answer, not a reason to fail the scrape: promhttp counts the
// error in promhttp_metric_handler_errors_total.
func Handler() http.Handler {
	return promhttp.HandlerFor(gatherAll, promhttp.HandlerOpts{Registry: Registry, ErrorHandling: promhttp.ContinueOnError})
}

var (
	includedMu sync.Mutex
	included   []prometheus.Gatherer
)

// Include adds g's series to what Handler serves (the embedded Temporal
// server's own, in serve), until the returned function is called. g must
// be comparable (a *prometheus.Registry is).
func Include(g prometheus.Gatherer) (remove func()) {
	includedMu.Lock()
	defer includedMu.Unlock()
	included = append(included, g)
	return func() {
		includedMu.Lock()
		defer includedMu.Unlock()
		for i := range included {
			if included[i] == g {
				included = append(included[:i], included[i+1:]...)
				return
			}
		}
	}
}

// gatherAll gathers Registry and the included registries.
var gatherAll = prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
	includedMu.Lock()
	gs := append(prometheus.Gatherers{Registry}, included...)
	includedMu.Unlock()
	return gs.Gather()
})

var (
	temporalOnce    sync.Once
	temporalHandler client.MetricsHandler
)

// temporalReportInterval is how often the SDK's tally scope reports into
// Registry: what /metrics shows of Temporal lags by up to this much.
const temporalReportInterval = time.Second

// TemporalHandler is the Temporal client's metrics handler
// (client.Options.MetricsHandler): the SDK's series, Prometheus-named
// (counters end in _total, timers are histograms in seconds), in Registry,
// and the series a2aflow's workflows emit through it (workflow.go).
// Every client of the process shares it.
func TemporalHandler() client.MetricsHandler {
	temporalOnce.Do(func() {
		// tallyprom.NewReporter, not its Configuration, which would also
		// register /metrics on http.DefaultServeMux.
		reporter := tallyprom.NewReporter(tallyprom.Options{
			Registerer:       Registry,
			DefaultTimerType: tallyprom.HistogramTimerType,
			OnRegisterError:  func(error) {}, // a series registered twice with other labels: dropped, not fatal
		})
		scope, _ := tally.NewRootScope(tally.ScopeOptions{
			CachedReporter:  reporter,
			Separator:       tallyprom.DefaultSeparator,
			SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
		}, temporalReportInterval)
		temporalHandler = routingHandler{sdk: sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope))}
	})
	return temporalHandler
}
