package api

import (
	"github.com/gin-gonic/gin"

	"github.com/a2aflow/a2aflow/internal/metrics"
)

// GET /metrics serves the process's Prometheus series (package metrics):
// a2aflow's and the Temporal SDK's. It is public, like /healthz: the series
// carry no task, context nor principal.

// serveMetrics is GET /metrics.
var serveMetrics = gin.WrapH(metrics.Handler())
