package metrics

import (
	"maps"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// Series that workflow code emits. A workflow must count through
// workflow.GetMetricsHandler, which drops what a replay emits again: a
// worker that rebuilds a task from its history (after a restart, or when
// the task left its cache) would otherwise count the task's past twice.
// That handler is the Temporal client's, TemporalHandler: it hands the
// names below to a2aflow's own collectors, with a2aflow's labels and
// buckets, and every other name (the SDK's) to the SDK's tally handler.
//
// The names are the SDK's style, without unit or _total suffix (the
// workflows package declares the same constants, checked by a test); the
// Prometheus names add them.
const (
	// TasksEnded counts tasks that reached a terminal state, by agent and
	// state: a2aflow_tasks_ended_total.
	TasksEnded = "a2aflow_tasks_ended"
	// InputRequired times each stretch a task spent input-required, from
	// entering the state to leaving it (an answer, a decision, the task's
	// end), by agent: a2aflow_input_required_seconds.
	InputRequired = "a2aflow_input_required"
	// ApprovalWait times each approval from its request to its settlement,
	// by agent and outcome (approved, rejected, expired: settled by its
	// deadline, canceled: the task ended first): a2aflow_approval_wait_seconds.
	ApprovalWait = "a2aflow_approval_wait"
	// ApprovalDecision times each approval from its request to its decision,
	// once per group that decided it, by agent, group and outcome
	// (approved, rejected, expired): a2aflow_approval_decision_seconds.
	ApprovalDecision = "a2aflow_approval_decision"
)

// waitBuckets are the buckets of waits for people: a second to a month.
var waitBuckets = []float64{
	1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400, 30 * 86400,
}

var (
	tasksEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: TasksEnded + "_total",
		Help: "Tasks that reached a terminal state, by agent and state (emitted by the task workflow, replay-safe).",
	}, []string{"agent", "state"})
	inputRequired = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    InputRequired + "_seconds",
		Help:    "Time a task spent input-required (asking the user, waiting for approvals), each stretch from entering the state to leaving it, by agent.",
		Buckets: waitBuckets,
	}, []string{"agent"})
	approvalWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    ApprovalWait + "_seconds",
		Help:    "Time from an approval's request to its settlement, by agent and outcome (approved, rejected, expired, canceled); its _count is the approvals settled.",
		Buckets: waitBuckets,
	}, []string{"agent", "outcome"})
	approvalDecision = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    ApprovalDecision + "_seconds",
		Help:    "Time from an approval's request to its decision, per group that decided it (its groups when settled), by agent, group and outcome (approved, rejected, expired).",
		Buckets: waitBuckets,
	}, []string{"agent", "group", "outcome"})
)

func init() {
	Registry.MustRegister(tasksEnded, inputRequired, approvalWait, approvalDecision)
}

// workflowCounters and workflowTimers are the collectors of the names
// workflows emit, with the tags that become their labels (in order); any
// other tag (namespace, task_queue, workflow_type...) is dropped.
var (
	workflowCounters = map[string]struct {
		vec    *prometheus.CounterVec
		labels []string
	}{
		TasksEnded: {tasksEnded, []string{"agent", "state"}},
	}
	workflowTimers = map[string]struct {
		vec    *prometheus.HistogramVec
		labels []string
	}{
		InputRequired:    {inputRequired, []string{"agent"}},
		ApprovalWait:     {approvalWait, []string{"agent", "outcome"}},
		ApprovalDecision: {approvalDecision, []string{"agent", "group", "outcome"}},
	}
)

// routingHandler is TemporalHandler: a2aflow's workflow series to their
// collectors, the rest to the SDK's handler.
type routingHandler struct {
	sdk  client.MetricsHandler
	tags map[string]string
}

var _ client.MetricsHandler = routingHandler{}

func (h routingHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(h.tags)
	if merged == nil {
		merged = make(map[string]string, len(tags))
	}
	maps.Copy(merged, tags)
	return routingHandler{sdk: h.sdk.WithTags(tags), tags: merged}
}

func (h routingHandler) Counter(name string) client.MetricsCounter {
	if s, ok := workflowCounters[name]; ok {
		c := s.vec.WithLabelValues(h.values(s.labels)...)
		return counterFunc(func(d int64) { c.Add(float64(d)) })
	}
	return h.sdk.Counter(name)
}

func (h routingHandler) Gauge(name string) client.MetricsGauge { return h.sdk.Gauge(name) }

func (h routingHandler) Timer(name string) client.MetricsTimer {
	if s, ok := workflowTimers[name]; ok {
		o := s.vec.WithLabelValues(h.values(s.labels)...)
		return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
	}
	return h.sdk.Timer(name)
}

// values are the handler's tags named by labels, "" for a missing one.
func (h routingHandler) values(labels []string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = h.tags[l]
	}
	return out
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) {
	if d > 0 { // a Prometheus counter only goes up
		f(d)
	}
}

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(max(d, 0)) }
