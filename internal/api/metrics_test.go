package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// TestMetrics scrapes GET /metrics after a few requests: the requests'
// series name the agent, the A2A method (a made-up one as "other"), the
// binding and the status, never the task.
func TestMetrics(t *testing.T) {
	h := fuzzHandler(t)
	post := func(body string) {
		req := httptest.NewRequest(http.MethodPost, "/agents/travel", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	post(`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"known-task","historyLength":1}}`)
	post(`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"known-task","historyLength":1}}`)
	post(`{"jsonrpc":"2.0","id":4,"method":"NoSuchMethod-made-up","params":{}}`)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "known-task") {
		t.Error("/metrics names a task")
	}
	families, err := new(expfmt.TextParser).TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, rec.Body)
	}
	count := func(family string, labels map[string]string) float64 {
		f, ok := families[family]
		if !ok {
			t.Fatalf("no %s in /metrics", family)
		}
		var sum float64
	metric:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue metric
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				sum += m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
		return sum
	}
	getTask := map[string]string{"agent": "travel", "method": "GetTask", "binding": "jsonrpc", "status": "200"}
	if n := count("a2aflow_requests_total", getTask); n < 2 {
		t.Errorf("a2aflow_requests_total%v = %v, want >= 2", getTask, n)
	}
	if n := count("a2aflow_request_duration_seconds", map[string]string{"agent": "travel", "method": "GetTask", "binding": "jsonrpc"}); n < 2 {
		t.Errorf("a2aflow_request_duration_seconds count = %v, want >= 2", n)
	}
	if n := count("a2aflow_requests_total", map[string]string{"agent": "travel", "method": "other"}); n < 1 {
		t.Errorf("a made-up method is not counted as other: %v", n)
	}
	if n := count("a2aflow_requests_total", map[string]string{"method": "NoSuchMethod-made-up"}); n != 0 {
		t.Errorf("a made-up method has its own series")
	}
	for _, f := range []string{"a2aflow_sse_subscribers", "go_goroutines"} {
		if _, ok := families[f]; !ok {
			t.Errorf("no %s in /metrics", f)
		}
	}
}
