package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	dto "github.com/prometheus/client_model/go"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// dashboardPath is the Grafana dashboard a2aflow ships.
const dashboardPath = "../deploy/grafana/a2aflow.json"

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	labelValues  = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,`)
)

// promKeywords are PromQL words that are not metric names.
var promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}

// promQLMetrics returns the metric names a PromQL expression selects: its
// identifiers that are neither functions nor aggregations (followed by
// "("), nor labels (in matchers and grouping clauses), nor keywords.
func promQLMetrics(expr string) []string {
	expr = promString.ReplaceAllString(expr, " ")
	expr = promMatchers.ReplaceAllString(expr, " ")
	expr = promRange.ReplaceAllString(expr, " ")
	expr = promGrouping.ReplaceAllString(expr, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(expr, -1) {
		word := expr[loc[0]:loc[1]]
		rest := strings.TrimLeft(expr[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || promKeywords[strings.ToLower(word)] {
			continue
		}
		if loc[0] > 0 && (expr[loc[0]-1] == '.' || (expr[loc[0]-1] >= '0' && expr[loc[0]-1] <= '9')) {
			continue // the tail of a number (0.95, 1e3)
		}
		out = append(out, word)
	}
	return out
}

// dashboardMetrics returns the metric names the dashboard's panels and
// variables query.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	seen := map[string]bool{}
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			names := promQLMetrics(target.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q: no metric in %q", p.Title, target.Expr)
			}
			for _, n := range names {
				seen[n] = true
			}
		}
	}
	for _, v := range dash.Templating.List {
		for _, m := range labelValues.FindAllStringSubmatch(v.Definition, -1) {
			seen[m[1]] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func TestPromQLMetrics(t *testing.T) {
	for expr, want := range map[string][]string{
		`histogram_quantile(0.95, sum by (le, agent) (rate(a2aflow_input_required_seconds_bucket{agent=~"$agent"}[$__range])))`: {"a2aflow_input_required_seconds_bucket"},
		`sum by (outcome) (increase(x_sum[5m])) / sum without (outcome) (increase(x_count{a="b"}[5m])) > bool 2`:                {"x_sum", "x_count"},
		`sum(a2aflow_sse_subscribers) or vector(0)`: {"a2aflow_sse_subscribers"},
	} {
		if got := promQLMetrics(expr); !slices.Equal(got, want) {
			t.Errorf("promQLMetrics(%q) = %v, want %v", expr, got, want)
		}
	}
}

// TestMetricsDashboard drives tasks through serve (a question answered, an
// approval decided over REST, LLM calls against the fake OpenAI endpoint,
// a stream) and checks that every metric the Grafana dashboard
// (deploy/grafana/a2aflow.json) queries is exported at /metrics: a2aflow's,
// the SDK's and the embedded Temporal server's. The scrape gathers without
// error and no label carries a task ID.
func TestMetricsDashboard(t *testing.T) {
	names := dashboardMetrics(t)
	for _, must := range []string{"a2aflow_input_required_seconds_bucket", "a2aflow_approval_wait_seconds_count", "a2aflow_llm_calls_total", "service_requests"} {
		if !slices.Contains(names, must) {
			t.Fatalf("the dashboard's metrics %v lack %s", names, must)
		}
	}
	fake := newFakeOpenAI(t)
	fakes.UseOpenAI(t, fake.URL, fakes.OpenAIKey, "fake-model")
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)

	var taskIDs []a2a.TaskID
	travel, _ := harness.NewClient(t, ctx, s.APIURL)
	taskIDs = append(taskIDs, harness.TravelBooking(t, ctx, travel).ID)

	expenses, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	task, approvalID := expense(t, ctx, expenses, "250 EUR training course")
	taskIDs = append(taskIDs, task.ID)
	if code := postJSON(t, s.APIURL+"/approvals/"+approvalID+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true}, nil); code != http.StatusOK {
		t.Fatalf("approval decision: HTTP %d", code)
	}
	waitState(t, ctx, expenses, task.ID, a2a.TaskStateCompleted)

	assistant, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
	task = harness.Send(t, ctx, assistant, "", "What is 6*7 in my city?")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Which city are you in?")
	task = harness.Send(t, ctx, assistant, task.ID, "Lisbon")
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	taskIDs = append(taskIDs, task.ID)

	echo, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
	_, streamed := stream(t, ctx, echo, "", "hello")
	taskIDs = append(taskIDs, streamed)

	// Series that the driven tasks must have moved, with their labels.
	moved := []struct {
		family string
		labels map[string]string
	}{
		{"a2aflow_input_required_seconds", map[string]string{"agent": "travel"}},
		{"a2aflow_input_required_seconds", map[string]string{"agent": "assistant"}},
		{"a2aflow_approval_wait_seconds", map[string]string{"agent": "expenses", "outcome": "approved"}},
		{"a2aflow_llm_calls_total", map[string]string{"provider": "openai", "model": "fake-model", "outcome": "ok"}},
		{"a2aflow_llm_tokens_total", map[string]string{"provider": "openai", "model": "fake-model", "kind": "input"}},
		{"a2aflow_tasks_ended_total", map[string]string{"agent": "assistant", "state": "TASK_STATE_COMPLETED"}},
		{"a2aflow_request_duration_seconds", map[string]string{"method": "SendStreamingMessage"}},
		{"temporal_workflow_task_schedule_to_start_latency_seconds", nil},
		{"service_requests", map[string]string{"operation": "UpdateWorkflowExecution"}},
		{"persistence_latency", nil},
	}
	var families map[string]*dto.MetricFamily
	var body string
	deadline := time.Now().Add(30 * time.Second) // the SDK's and the server's series report every second
	for {
		families, body = scrapeMetrics(t, s.APIURL+"/metrics")
		var missing []string
		for _, n := range names {
			if exportedFamily(families, n) == nil {
				missing = append(missing, n)
			}
		}
		for _, m := range moved {
			if !hasSeries(families[m.family], m.labels) {
				missing = append(missing, m.family)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %v, which the dashboard queries or the tasks moved", missing)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("dashboard queries %d metrics, all exported; /metrics: %d families, %d lines, %d bytes",
		len(names), len(families), strings.Count(body, "\n"), len(body))

	// The scrape gathered without error (promhttp counts errors of the
	// scrapes before this one).
	families, body = scrapeMetrics(t, s.APIURL+"/metrics")
	for _, m := range families["promhttp_metric_handler_errors_total"].GetMetric() {
		if m.GetCounter().GetValue() != 0 {
			t.Errorf("promhttp_metric_handler_errors_total %v = %v, want 0: a family failed to gather", m.GetLabel(), m.GetCounter().GetValue())
		}
	}
	for _, id := range taskIDs {
		if strings.Contains(body, string(id)) {
			t.Errorf("/metrics names task %s: task IDs must not be labels", id)
		}
	}
}

// exportedFamily returns the family a PromQL metric name selects: the
// family itself, or the histogram (or summary) whose _bucket, _sum or
// _count it is.
func exportedFamily(families map[string]*dto.MetricFamily, name string) *dto.MetricFamily {
	if f := families[name]; f != nil {
		return f
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		f := families[base]
		if f == nil {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			return f
		case dto.MetricType_SUMMARY:
			if suffix != "_bucket" {
				return f
			}
		}
	}
	return nil
}

// TestTemporalMetricsAddr: `a2aflow temporal --metrics-addr` serves the
// Temporal server's own series, under the names Temporal's dashboards use.
func TestTemporalMetricsAddr(t *testing.T) {
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", harness.FreePort(t))
	p := harness.Start(t, "a2aflow temporal", nil, "temporal",
		"--data-dir", t.TempDir(),
		"--temporal-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)),
		"--ui-addr", "",
		"--metrics-addr", strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics"),
		"--log-level", "warn")
	p.WaitOutput("Temporal is serving", 2*time.Minute)
	deadline := time.Now().Add(20 * time.Second)
	for {
		families, body := scrapeMetrics(t, metricsURL)
		if hasSeries(families["service_requests"], map[string]string{"service_name": "frontend"}) && families["persistence_latency"] != nil {
			t.Logf("temporal --metrics-addr: %d families, %d bytes", len(families), len(body))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporal's /metrics lacks the server's service_requests and persistence_latency:\n%.2000s", body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
