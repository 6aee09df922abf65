package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// a2aflow's series. Callers pass label values from a bounded set: known
// A2A methods, agent names of the registry, task states, outcomes.
var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_requests_total",
		Help: "HTTP requests served by the API, by agent, A2A method, binding and HTTP status.",
	}, []string{"agent", "method", "binding", "status"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "a2aflow_request_duration_seconds",
		Help:    "Duration of the API's requests (a stream's until it closes), by agent, A2A method and binding.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"agent", "method", "binding"})
	tasksStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_tasks_started_total",
		Help: "Tasks whose workflow the API started, by agent.",
	}, []string{"agent"})
	sseSubscribers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "a2aflow_sse_subscribers",
		Help: "Server-sent event streams open now (SendStreamingMessage, SubscribeToTask).",
	})
	streamQueries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_stream_queries_total",
		Help: "Events queries the API's streams made of task workflows, by reason: start (a stream's first query, its task), hint (a new event was hinted), poll (the poll interval passed), join (a stream joined a follower off its position), retry (after a failed query).",
	}, []string{"reason"})
	streamFollowers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "a2aflow_stream_followers",
		Help: "Tasks followed now for the streams of this API process (one follower per task, however many streams).",
	})
	stuckAnswered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_stuck_tasks_answered_total",
		Help: "Requests answered that their task is stuck, by reason (NONDETERMINISM: the deployed code no longer replays it; TASK_STUCK: its workflow task keeps failing).",
	}, []string{"reason"})
	llmCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_llm_calls_total",
		Help: "LLM calls by provider, model and outcome (ok, error).",
	}, []string{"provider", "model", "outcome"})
	llmTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_llm_tokens_total",
		Help: "LLM tokens by provider, model and kind (input, output; cached_input: the part of input read from the provider's prompt cache).",
	}, []string{"provider", "model", "kind"})
	llmCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_llm_cost_usd_total",
		Help: "Cost of the LLM calls that answered, in USD by the worker's price table ([[llm-prices]]), by provider, model, agent and tenant (the task's owner, \"\" without authentication). Counted as the calls are paid: an attempt whose answer was lost and retried counts twice here, once in the usage totals (GET /usage).",
	}, []string{"provider", "model", "agent", "tenant"})
	llmAgentTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_llm_agent_tokens_total",
		Help: "LLM tokens by agent, tenant (the task's owner) and kind (input, output), counted like a2aflow_llm_cost_usd_total.",
	}, []string{"agent", "tenant", "kind"})
	delegations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_delegation_calls_total",
		Help: "Calls to remote A2A agents by outcome (ok, error).",
	}, []string{"outcome"})
	webhooks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2aflow_webhook_deliveries_total",
		Help: "Webhook deliveries by kind (push: a task's push notification, approval: an approver group's notice) and outcome (ok, error), each attempt.",
	}, []string{"kind", "outcome"})
)

func init() {
	Registry.MustRegister(requests, requestDuration, tasksStarted, sseSubscribers, streamQueries, streamFollowers, stuckAnswered, llmCalls, llmTokens, llmCost, llmAgentTokens, delegations, webhooks)
	// Series whose labels are all known start at zero, so that a rate or
	// an alert sees them before the first event.
	for _, o := range []string{"ok", "error"} {
		delegations.WithLabelValues(o)
		for _, k := range []string{WebhookPush, WebhookApproval} {
			webhooks.WithLabelValues(k, o)
		}
	}
	for _, r := range []string{StreamQueryStart, StreamQueryHint, StreamQueryPoll, StreamQueryJoin, StreamQueryRetry} {
		streamQueries.WithLabelValues(r)
	}
	for _, r := range []string{"NONDETERMINISM", "TASK_STUCK"} {
		stuckAnswered.WithLabelValues(r)
	}
}

// Request counts one request the API served.
func Request(agent, method, binding string, status int, d time.Duration) {
	requests.WithLabelValues(agent, method, binding, strconv.Itoa(status)).Inc()
	requestDuration.WithLabelValues(agent, method, binding).Observe(d.Seconds())
}

// TaskStarted counts a task whose workflow the API started.
func TaskStarted(agent string) { tasksStarted.WithLabelValues(agent).Inc() }

// SSESubscriber counts a stream opening (+1) or closing (-1).
func SSESubscriber(delta int) { sseSubscribers.Add(float64(delta)) }

// Reasons of a stream's query (StreamQuery).
const (
	StreamQueryStart = "start" // a stream's first query: the task it starts with
	StreamQueryHint  = "hint"  // a follower's, on a hint of a new event
	StreamQueryPoll  = "poll"  // a follower's, the poll interval passed
	StreamQueryJoin  = "join"  // a follower's, for a stream that joined off its position
	StreamQueryRetry = "retry" // a follower's, after a failed query
)

// StreamQuery counts an events query a stream made, for reason.
func StreamQuery(reason string) { streamQueries.WithLabelValues(reason).Inc() }

// StreamFollower counts a task follower starting (+1) or stopping (-1).
func StreamFollower(delta int) { streamFollowers.Add(float64(delta)) }

// StuckAnswered counts an answer that a task is stuck: reason is
// "NONDETERMINISM" or "TASK_STUCK".
func StuckAnswered(reason string) { stuckAnswered.WithLabelValues(reason).Inc() }

// LLMCallLabels are the labels of an LLM call's series: the provider and
// model, and the agent and tenant (owner) of the task that made it.
type LLMCallLabels struct {
	Provider, Model, Agent, Tenant string
}

// LLMCall counts an LLM call, its tokens and its cost in USD.
func LLMCall(l LLMCallLabels, err error, inputTokens, cachedInputTokens, outputTokens int64, costUSD float64) {
	llmCalls.WithLabelValues(l.Provider, l.Model, outcome(err)).Inc()
	if inputTokens > 0 {
		llmTokens.WithLabelValues(l.Provider, l.Model, "input").Add(float64(inputTokens))
		llmAgentTokens.WithLabelValues(l.Agent, l.Tenant, "input").Add(float64(inputTokens))
	}
	if cachedInputTokens > 0 {
		llmTokens.WithLabelValues(l.Provider, l.Model, "cached_input").Add(float64(cachedInputTokens))
	}
	if outputTokens > 0 {
		llmTokens.WithLabelValues(l.Provider, l.Model, "output").Add(float64(outputTokens))
		llmAgentTokens.WithLabelValues(l.Agent, l.Tenant, "output").Add(float64(outputTokens))
	}
	if err == nil && costUSD > 0 {
		llmCost.WithLabelValues(l.Provider, l.Model, l.Agent, l.Tenant).Add(costUSD)
	}
}

// Delegation counts a call to a remote agent.
func Delegation(err error) { delegations.WithLabelValues(outcome(err)).Inc() }

// Kinds of webhook deliveries (WebhookDelivery).
const (
	WebhookPush     = "push"     // a task's push notification
	WebhookApproval = "approval" // an approver group's notice of an approval
)

// WebhookDelivery counts an attempt to deliver a webhook of kind
// (WebhookPush, WebhookApproval).
func WebhookDelivery(kind string, err error) { webhooks.WithLabelValues(kind, outcome(err)).Inc() }

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
