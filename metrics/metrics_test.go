package metrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// value is a counter's or gauge's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue() + out.GetGauge().GetValue()
}

func TestSeries(t *testing.T) {
	LLMCall("openai", "gpt-x", nil, 10, 3)
	LLMCall("openai", "gpt-x", errors.New("429"), 0, 0)
	Delegation(nil)
	WebhookDelivery(errors.New("refused"))
	StuckAnswered("NONDETERMINISM")
	SSESubscriber(1)
	for _, c := range []struct {
		got  float64
		want float64
		name string
	}{
		{value(t, llmCalls.WithLabelValues("openai", "gpt-x", "ok")), 1, "llm ok"},
		{value(t, llmCalls.WithLabelValues("openai", "gpt-x", "error")), 1, "llm error"},
		{value(t, llmTokens.WithLabelValues("openai", "gpt-x", "input")), 10, "input tokens"},
		{value(t, llmTokens.WithLabelValues("openai", "gpt-x", "output")), 3, "output tokens"},
		{value(t, delegations.WithLabelValues("ok")), 1, "delegation ok"},
		{value(t, webhooks.WithLabelValues("error")), 1, "webhook error"},
		{value(t, stuckAnswered.WithLabelValues("NONDETERMINISM")), 1, "stuck"},
		{value(t, sseSubscribers), 1, "sse"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	SSESubscriber(-1)
}

// TestTemporalHandler: what the SDK counts through TemporalHandler is in
// Registry, Prometheus-named (counters _total, timers _seconds histograms),
// once the scope reported.
func TestTemporalHandler(t *testing.T) {
	h := TemporalHandler().WithTags(map[string]string{"namespace": "default"})
	h.Counter("temporal_test_thing").Inc(2)
	h.Timer("temporal_test_latency").Record(30 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec := httptest.NewRecorder()
		Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		body := rec.Body.String()
		if strings.Contains(body, `temporal_test_thing_total{namespace="default"} 2`) &&
			strings.Contains(body, `temporal_test_latency_seconds_bucket{namespace="default",le="0.05"} 1`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the SDK's series are not in /metrics:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
