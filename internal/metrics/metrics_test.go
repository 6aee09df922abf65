package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/a2aflow/a2aflow/internal/wire"
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
	LLMCall(LLMCallLabels{Provider: "openai", Model: "gpt-x"}, nil, 10, 0, 3, 0)
	LLMCall(LLMCallLabels{Provider: "openai", Model: "gpt-x"}, errors.New("429"), 0, 0, 0, 0)
	Delegation(nil)
	WebhookDelivery(WebhookPush, errors.New("refused"))
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
		{value(t, webhooks.WithLabelValues(WebhookPush, "error")), 1, "webhook error"},
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

// TestWorkflowSeries: the names workflows emit through the SDK's handler
// reach a2aflow's collectors with a2aflow's labels only; other names go to
// the SDK's series.
func TestWorkflowSeries(t *testing.T) {
	for _, c := range []struct{ here, there string }{
		{TasksEnded, wire.MetricTasksEnded},
		{InputRequired, wire.MetricInputRequired},
		{ApprovalWait, wire.MetricApprovalWait},
		{ApprovalDecision, wire.MetricApprovalDecision},
	} {
		if c.here != c.there {
			t.Errorf("metrics name %q, workflows name %q: they must be the same", c.here, c.there)
		}
	}
	h := TemporalHandler().WithTags(map[string]string{"namespace": "default", "task_queue": "q", "workflow_type": "TaskWorkflow"})
	h = h.WithTags(map[string]string{"agent": "payer"})
	h.WithTags(map[string]string{"state": "TASK_STATE_COMPLETED"}).Counter(wire.MetricTasksEnded).Inc(1)
	h.Timer(wire.MetricInputRequired).Record(90 * time.Second)
	h.WithTags(map[string]string{"outcome": wire.ApprovalOutcomeExpired}).Timer(wire.MetricApprovalWait).Record(2 * time.Hour)
	h.WithTags(map[string]string{"outcome": wire.ApprovalOutcomeApproved, "group": "finance"}).Timer(wire.MetricApprovalDecision).Record(30 * time.Minute)

	if got := value(t, tasksEnded.WithLabelValues("payer", "TASK_STATE_COMPLETED")); got != 1 {
		t.Errorf("tasks ended = %v, want 1", got)
	}
	families, err := Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a2aflow_tasks_ended_total":         `agent="payer" state="TASK_STATE_COMPLETED" count=1`,
		"a2aflow_input_required_seconds":    `agent="payer" count=1 sum=90`,
		"a2aflow_approval_wait_seconds":     `agent="payer" outcome="expired" count=1 sum=7200`,
		"a2aflow_approval_decision_seconds": `agent="payer" group="finance" outcome="approved" count=1 sum=1800`,
	}
	got := map[string]string{}
	for _, f := range families {
		if _, ok := want[f.GetName()]; !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			var s []string
			for _, l := range m.GetLabel() {
				s = append(s, l.GetName()+"="+strconv.Quote(l.GetValue()))
			}
			if h := m.GetHistogram(); h != nil {
				s = append(s, fmt.Sprintf("count=%d sum=%g", h.GetSampleCount(), h.GetSampleSum()))
			} else {
				s = append(s, fmt.Sprintf("count=%g", m.GetCounter().GetValue()))
			}
			got[f.GetName()] = strings.Join(s, " ")
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workflow series (-want +got):\n%s", diff)
	}
}
