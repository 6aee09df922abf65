package tests

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestMetricsReplaySafe: the series the task workflow emits count each
// event once, even when a worker replays the task's history. serve is
// killed (kill -9) while a travel task and an expense wait; the restarted
// process rebuilds both from their histories (a replay of the question
// answered and of the task's start) before it handles the next message, and
// its /metrics counts only what happened after the restart.
func TestMetricsReplaySafe(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	travel, _ := harness.NewClient(t, ctx, s.APIURL)
	expenses, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	decide := func(approvalID string, approved bool) {
		t.Helper()
		if code := postJSON(t, s.APIURL+"/approvals/"+approvalID+"/decision", map[string]string{"X-Approver": "fiona"},
			map[string]any{"approved": approved}, nil); code != http.StatusOK {
			t.Fatalf("decision on %s: HTTP %d", approvalID, code)
		}
	}

	// Before the kill: one question answered, one approval approved, one
	// approval pending.
	trip := harness.Send(t, ctx, travel, "", "Book a flight")
	trip = harness.Send(t, ctx, travel, trip.ID, "Lisbon")
	harness.WantState(t, trip, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
	first, firstApproval := expense(t, ctx, expenses, "250 EUR training course")
	decide(firstApproval, true)
	waitState(t, ctx, expenses, first.ID, a2a.TaskStateCompleted)
	second, secondApproval := expense(t, ctx, expenses, "300 EUR hotel")

	want := map[string]string{
		"input_required{travel}":   "1",
		"input_required{expenses}": "1",
		"approval_wait{approved}":  "1",
		"approval_wait{rejected}":  "0",
		"tasks_ended{travel}":      "0",
		"tasks_ended{expenses}":    "1",
		"tasks_started{travel}":    "1",
		"tasks_started{expenses}":  "2",
	}
	waitCounts(t, s.APIURL, "before the kill", want)

	s.Proc().Kill()
	s.Restart()
	// After the restart: the date answered (the travel task replays its
	// first answer), the pending approval rejected, the trip completed.
	trip = harness.Send(t, ctx, travel, trip.ID, "2026-12-24")
	harness.WantState(t, trip, a2a.TaskStateInputRequired, "How many travellers?")
	decide(secondApproval, false)
	waitState(t, ctx, expenses, second.ID, a2a.TaskStateCompleted)
	trip = harness.Send(t, ctx, travel, trip.ID, "2")
	harness.WantState(t, trip, a2a.TaskStateCompleted, "")

	want = map[string]string{
		"input_required{travel}":   "2", // the date and the travellers, not the destination again
		"input_required{expenses}": "1",
		"approval_wait{approved}":  "0", // approved before the kill: not again
		"approval_wait{rejected}":  "1",
		"tasks_ended{travel}":      "1",
		"tasks_ended{expenses}":    "1",
		"tasks_started{travel}":    "0",
		"tasks_started{expenses}":  "0",
	}
	waitCounts(t, s.APIURL, "after the restart", want)
}

// waitCounts waits until /metrics holds the counts want (keys as
// metricCounts makes them), then checks they stay so for a moment: a count
// emitted twice would show up late.
func waitCounts(t *testing.T, apiURL, when string, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		families, _ := scrapeMetrics(t, apiURL+"/metrics")
		got := metricCounts(families)
		diff := cmp.Diff(want, got)
		if diff == "" {
			time.Sleep(2 * time.Second)
			families, _ = scrapeMetrics(t, apiURL+"/metrics")
			if diff := cmp.Diff(want, metricCounts(families)); diff != "" {
				t.Fatalf("%s: the counts changed (-want +got):\n%s", when, diff)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: counts (-want +got):\n%s", when, diff)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// metricCounts sums the series of the workflow-emitted families (and the
// API's tasks started) by the label the test looks at.
func metricCounts(families map[string]*dto.MetricFamily) map[string]string {
	sum := func(family, label, value string) string {
		var n float64
		for _, m := range families[family].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					n += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		return fmt.Sprint(n)
	}
	return map[string]string{
		"input_required{travel}":   sum("a2aflow_input_required_seconds", "agent", "travel"),
		"input_required{expenses}": sum("a2aflow_input_required_seconds", "agent", "expenses"),
		"approval_wait{approved}":  sum("a2aflow_approval_wait_seconds", "outcome", "approved"),
		"approval_wait{rejected}":  sum("a2aflow_approval_wait_seconds", "outcome", "rejected"),
		"tasks_ended{travel}":      sum("a2aflow_tasks_ended_total", "agent", "travel"),
		"tasks_ended{expenses}":    sum("a2aflow_tasks_ended_total", "agent", "expenses"),
		"tasks_started{travel}":    sum("a2aflow_tasks_started_total", "agent", "travel"),
		"tasks_started{expenses}":  sum("a2aflow_tasks_started_total", "agent", "expenses"),
	}
}
