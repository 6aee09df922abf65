package cli

import (
	"net/http"

	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/metrics"
)

// a2aflow serves its Prometheus series (package metrics) at GET /metrics:
// on the API port of serve and api (api/metrics.go), on worker's
// --health-addr port (health.go). The Temporal SDK's series come from the
// metrics handler every client gets here.

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
