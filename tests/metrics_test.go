package tests

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestMetrics runs a travel task on serve and scrapes GET /metrics: the
// Temporal SDK's series and a2aflow's, with their labels.
func TestMetrics(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	harness.TravelBooking(t, ctx, c)

	type want struct {
		family string
		labels map[string]string
	}
	wants := []want{
		{"temporal_request_total", nil},
		{"temporal_workflow_completed_total", nil},
		{"a2aflow_requests_total", map[string]string{"agent": "travel", "method": "SendMessage", "status": "200"}},
		{"a2aflow_request_duration_seconds", map[string]string{"agent": "travel", "method": "SendMessage"}},
		{"a2aflow_tasks_started_total", map[string]string{"agent": "travel"}},
		{"a2aflow_tasks_ended_total", map[string]string{"agent": "travel", "state": "TASK_STATE_COMPLETED"}},
	}
	// The SDK's series reach the registry every second.
	deadline := time.Now().Add(20 * time.Second)
	for {
		families, body := scrapeMetrics(t, s.APIURL+"/metrics")
		var missing []string
		for _, w := range wants {
			if !hasSeries(families[w.family], w.labels) {
				missing = append(missing, w.family)
			}
		}
		if len(missing) == 0 {
			t.Logf("/metrics: %d families, %d bytes", len(families), len(body))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %v (with their labels):\n%s", missing, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func scrapeMetrics(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	families, err := new(expfmt.TextParser).TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return families, string(body)
}

// hasSeries reports whether f has a series with a value carrying labels.
func hasSeries(f *dto.MetricFamily, labels map[string]string) bool {
	if f == nil {
		return false
	}
metric:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue metric
			}
		}
		if m.GetCounter().GetValue() > 0 || m.GetHistogram().GetSampleCount() > 0 || m.GetGauge() != nil {
			return true
		}
	}
	return false
}
