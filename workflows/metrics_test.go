package workflows_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// recordedMetrics is a metrics handler that records what is emitted
// through it under a2aflow's names: "name{agent,outcome|state} value".
type recordedMetrics struct {
	mu   *sync.Mutex
	got  *[]string
	tags map[string]string
}

func newRecordedMetrics() recordedMetrics {
	return recordedMetrics{mu: &sync.Mutex{}, got: &[]string{}}
}

func (m recordedMetrics) WithTags(tags map[string]string) client.MetricsHandler {
	merged := map[string]string{}
	for k, v := range m.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return recordedMetrics{mu: m.mu, got: m.got, tags: merged}
}

func (m recordedMetrics) record(name string, v any) {
	if !strings.HasPrefix(name, "a2aflow_") {
		return // the SDK's own
	}
	label := m.tags["outcome"] + m.tags["state"]
	if g := m.tags["group"]; g != "" {
		label = g + "," + label
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.got = append(*m.got, fmt.Sprintf("%s{%s,%s} %v", name, m.tags["agent"], label, v))
}

func (m recordedMetrics) Counter(name string) client.MetricsCounter {
	return counterFunc(func(d int64) { m.record(name, d) })
}
func (m recordedMetrics) Gauge(name string) client.MetricsGauge {
	return gaugeFunc(func(v float64) { m.record(name, v) })
}
func (m recordedMetrics) Timer(name string) client.MetricsTimer {
	return timerFunc(func(d time.Duration) { m.record(name, d) })
}

func (m recordedMetrics) sorted() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]string(nil), *m.got...)
	sort.Strings(out)
	return out
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }

// TestMetricsOfWaits: the task workflow times each input-required stretch
// and each approval with its outcome (and, but for a canceled one, per
// group that decided it), and counts the task's end, once each.
func TestMetricsOfWaits(t *testing.T) {
	asker := &workflows.Agent{Name: "asker", Handle: func(ctx workflow.Context, t *workflows.Task) error {
		if _, err := t.Ask(ctx, "city", "Which city?"); err != nil {
			return err
		}
		if _, err := t.Ask(ctx, "date", "When?"); err != nil {
			return err
		}
		t.Reply("Done.")
		return nil
	}}
	answer := func(env *testsuite.TestWorkflowEnvironment, text string) func() {
		return func() {
			sendMessage(env, wire.SendMessageInput{Message: userText(text), ReturnImmediately: true})
		}
	}
	cases := []struct {
		name  string
		agent *workflows.Agent
		// script schedules the test's updates on env.
		script func(env *testsuite.TestWorkflowEnvironment)
		want   []string
	}{
		{
			name:  "two questions answered",
			agent: asker,
			script: func(env *testsuite.TestWorkflowEnvironment) {
				env.RegisterDelayedCallback(answer(env, "Lisbon"), 10*time.Minute)
				env.RegisterDelayedCallback(answer(env, "Monday"), 40*time.Minute)
			},
			want: []string{
				"a2aflow_input_required{asker,} 10m0s",
				"a2aflow_input_required{asker,} 30m0s",
				"a2aflow_tasks_ended{asker,TASK_STATE_COMPLETED} 1",
			},
		},
		{
			name:  "approved",
			agent: payer(invoice, 0, &approvalResult{}),
			script: func(env *testsuite.TestWorkflowEnvironment) {
				env.RegisterDelayedCallback(func() { decide(env, by("fiona", finance, true, "")) }, 2*time.Hour)
			},
			want: []string{
				"a2aflow_approval_decision{payer,finance,approved} 2h0m0s",
				"a2aflow_approval_wait{payer,approved} 2h0m0s",
				"a2aflow_input_required{payer,} 2h0m0s",
				"a2aflow_tasks_ended{payer,TASK_STATE_COMPLETED} 1",
			},
		},
		{
			name:  "rejected",
			agent: payer(invoice, 0, &approvalResult{}),
			script: func(env *testsuite.TestWorkflowEnvironment) {
				env.RegisterDelayedCallback(func() { decide(env, by("fiona", finance, false, "no")) }, 30*time.Minute)
			},
			want: []string{
				"a2aflow_approval_decision{payer,finance,rejected} 30m0s",
				"a2aflow_approval_wait{payer,rejected} 30m0s",
				"a2aflow_input_required{payer,} 30m0s",
				"a2aflow_tasks_ended{payer,TASK_STATE_REJECTED} 1",
			},
		},
		{
			name:   "expired at its deadline",
			agent:  payer(invoice, 0, &approvalResult{}),
			script: func(*testsuite.TestWorkflowEnvironment) {},
			want: []string{
				"a2aflow_approval_decision{payer,finance,expired} 24h0m0s",
				"a2aflow_approval_wait{payer,expired} 24h0m0s",
				"a2aflow_input_required{payer,} 24h0m0s",
				"a2aflow_tasks_ended{payer,TASK_STATE_REJECTED} 1",
			},
		},
		{
			name:  "canceled while pending",
			agent: payer(invoice, 0, &approvalResult{}),
			script: func(env *testsuite.TestWorkflowEnvironment) {
				env.RegisterDelayedCallback(func() { cancelTask(env) }, time.Hour)
			},
			want: []string{
				"a2aflow_approval_wait{payer,canceled} 1h0m0s",
				"a2aflow_input_required{payer,} 1h0m0s",
				"a2aflow_tasks_ended{payer,TASK_STATE_CANCELED} 1",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg, err := engine.NewRegistry(c.agent)
			if err != nil {
				t.Fatal(err)
			}
			rec := newRecordedMetrics()
			var suite testsuite.WorkflowTestSuite
			suite.SetMetricsHandler(rec)
			env := suite.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
			env.RegisterActivityWithOptions(func(context.Context, wire.ApprovalNotice) error { return nil }, activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testTaskID})
			env.SetStartTime(t0)
			c.script(env)
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: c.agent.Name, ContextID: testContextID, Message: userText("go")})
			if !env.IsWorkflowCompleted() {
				t.Fatal("the task did not end")
			}
			if diff := cmp.Diff(c.want, rec.sorted()); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}
