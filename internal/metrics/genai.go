package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The GenAI semantic conventions' client metrics (package genai names the
// version), in the registry of a2aflow's other series, as the OpenTelemetry
// Prometheus exporter names them: gen_ai.client.token.usage is
// gen_ai_client_token_usage, gen_ai.client.operation.duration (seconds)
// gen_ai_client_operation_duration_seconds, and the attributes' dots are
// underscores. They are Prometheus histograms here, not an OpenTelemetry
// meter's, so that one /metrics (and one scrape) carries all of a2aflow's
// series, without a second metrics pipeline; the buckets are the
// conventions' explicit bucket boundaries.
var (
	genaiTokenUsage = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_client_token_usage",
		Help:    "Tokens of each LLM call (gen_ai.client.token.usage of the OpenTelemetry GenAI semantic conventions), by gen_ai_token_type (input, output), operation, provider and models.",
		Buckets: []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864},
	}, []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model", "gen_ai_token_type"})
	genaiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_client_operation_duration_seconds",
		Help:    "Duration of each LLM call (gen_ai.client.operation.duration of the OpenTelemetry GenAI semantic conventions), by operation, provider, models and error_type (empty for a call that answered).",
		Buckets: []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92},
	}, []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model", "error_type"})
)

func init() { Registry.MustRegister(genaiTokenUsage, genaiDuration) }

// GenAICallLabels are the attributes of a model call's GenAI metrics.
type GenAICallLabels struct {
	Operation, Provider, RequestModel, ResponseModel, ErrorType string
}

// GenAIClientCall records a model call: its duration and, when it answered,
// its input and output tokens.
func GenAIClientCall(l GenAICallLabels, d time.Duration, inputTokens, outputTokens int64, answered bool) {
	genaiDuration.WithLabelValues(l.Operation, l.Provider, l.RequestModel, l.ResponseModel, l.ErrorType).Observe(d.Seconds())
	if !answered {
		return
	}
	genaiTokenUsage.WithLabelValues(l.Operation, l.Provider, l.RequestModel, l.ResponseModel, "input").Observe(float64(inputTokens))
	genaiTokenUsage.WithLabelValues(l.Operation, l.Provider, l.RequestModel, l.ResponseModel, "output").Observe(float64(outputTokens))
}
