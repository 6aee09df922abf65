package llm

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// ActivityCompleteChat is the name of the activity that makes one LLM call
// (a Request in, a Response out): wire.ActivityCompleteChat.
const ActivityCompleteChat = wire.ActivityCompleteChat

// Application error types of LLM failures, as workflow code sees them in a
// *temporal.ApplicationError.
const (
	// ErrTypeNotConfigured: the worker has no LLM provider. Not retried.
	ErrTypeNotConfigured = "LLMNotConfigured"
	// ErrTypeRateLimited: the provider answered 429. Retried, after its Retry-After.
	ErrTypeRateLimited = "LLMRateLimited"
	// ErrTypeLimited: the call waited half of its attempt's time for a slot
	// of its model's limit ([[llm-limits]]) in vain. Retried.
	ErrTypeLimited = "LLMLimited"
	// ErrTypeUnavailable: the provider answered 5xx (or 408/409). Retried.
	ErrTypeUnavailable = "LLMUnavailable"
	// ErrTypeRejected: the provider refused the request (another 4xx: bad
	// request, wrong key, unknown model). Not retried.
	ErrTypeRejected = "LLMRequestRejected"
	// ErrTypeInvalidRequest: the request could not be built. Not retried.
	ErrTypeInvalidRequest = "LLMInvalidRequest"
	// ErrTypeInvalidOutput: Function got no valid answer within its attempts.
	ErrTypeInvalidOutput = "LLMInvalidOutput"
	// ErrTypeTooManyTurns: a Worker loop did not finish within its turns.
	ErrTypeTooManyTurns = "LLMTooManyTurns"
	// ErrTypeBudgetExceeded: the task's spend reached its budget
	// ([WithBudget], [[llm-budgets]]) and the budget says fail, or its
	// approval was rejected. Not retried: the task fails with it.
	ErrTypeBudgetExceeded = "LLMBudgetExceeded"
	// ErrTypeTenantBudgetExceeded: the CompleteChat activity refused a call
	// because the tenant's spend in the period reached its budget
	// ([[llm-budgets]]); its details are a [TenantBudget]. Not retried:
	// the workflow side asks for more or fails with ErrTypeBudgetExceeded.
	ErrTypeTenantBudgetExceeded = "LLMTenantBudgetExceeded"
)

// DefaultActivityOptions are the activity options of an LLM call unless
// WithActivityOptions replaces them: two minutes per attempt, and up to ten
// attempts over about ten minutes for rate limits and server errors (a
// provider's Retry-After replaces the backoff). Failures that a retry cannot
// fix are non-retryable errors and fail at once. The activity heartbeats
// every 5 s while the provider works, so an attempt lost with its worker
// (killed, partitioned) is retried on another after 20 s, not after the
// attempt's two minutes.
var DefaultActivityOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Minute,
	HeartbeatTimeout:    20 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    2 * time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    2 * time.Minute,
		MaximumAttempts:    10,
	},
}

// Option changes one Function call or Worker run.
type Option func(*callOptions)

type callOptions struct {
	model       string
	provider    string
	system      string
	usage       *workflows.Task
	budget      *Budget
	calls       int // calls made with usage, by this Function or Run
	maxAttempts int
	maxTurns    int
	maxTokens   int64
	parallel    int
	activity    workflow.ActivityOptions
	local       *bool // WithLocalActivity; nil: the task's setting
	// safeByDefault are WithSafeByDefault's approvers; nil: off.
	safeByDefault []string
}

func newOptions(opts []Option) *callOptions {
	o := &callOptions{maxAttempts: 3, maxTurns: 12, parallel: 8, activity: DefaultActivityOptions}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithModel uses model instead of the worker's configured one.
func WithModel(model string) Option { return func(o *callOptions) { o.model = model } }

// defaultsKey keys the call defaults WithDefaults puts into a context.
type defaultsKey struct{}

type callDefaults struct{ provider, model string }

// WithDefaults returns ctx whose LLM calls (Function, Worker) use provider
// and model unless a call names its own with WithProvider or WithModel;
// empty keeps the worker's. It is how a config file gives any agent,
// built-in ones too, its model: the worker wraps the agent's handler.
func WithDefaults(ctx workflow.Context, provider, model string) workflow.Context {
	return workflow.WithValue(ctx, defaultsKey{}, callDefaults{provider: provider, model: model})
}

// applyDefaults fills the model and provider the call did not name from
// ctx's WithDefaults.
func (o *callOptions) applyDefaults(ctx workflow.Context) {
	if b, ok := ctx.Value(budgetKey{}).(Budget); ok && o.budget == nil {
		o.budget = &b
	}
	if d, ok := ctx.Value(defaultsKey{}).(callDefaults); ok {
		if o.model == "" {
			o.model = d.model
		}
		if o.provider == "" {
			o.provider = d.provider
		}
	}
}

// WithProvider calls the worker's provider of that name ("openai",
// "anthropic" or "gemini", each configured by its environment, see
// ConfiguredProviders)
// instead of its default one.
func WithProvider(name string) Option { return func(o *callOptions) { o.provider = name } }

// WithSystem sets the system prompt.
func WithSystem(prompt string) Option { return func(o *callOptions) { o.system = prompt } }

// WithUsage adds the token usage of every call to t's metadata (see
// workflows.Task.AddTokenUsage).
func WithUsage(t *workflows.Task) Option { return func(o *callOptions) { o.usage = t } }

// WithMaxAttempts bounds how often Function asks for a valid answer; default 3.
func WithMaxAttempts(n int) Option { return func(o *callOptions) { o.maxAttempts = max(n, 1) } }

// WithMaxTurns bounds the LLM calls of one Worker run; default 12.
func WithMaxTurns(n int) Option { return func(o *callOptions) { o.maxTurns = max(n, 1) } }

// WithParallelToolCalls bounds how many tool calls of one turn a Worker
// loop runs at once; default 8, 1 runs them one after another.
func WithParallelToolCalls(n int) Option { return func(o *callOptions) { o.parallel = max(n, 1) } }

// WithMaxTokens limits each answer; default the provider's.
func WithMaxTokens(n int64) Option { return func(o *callOptions) { o.maxTokens = n } }

// WithActivityOptions replaces DefaultActivityOptions for the LLM calls.
// A call made as a local activity ([WithLocalActivity]) takes its
// StartToCloseTimeout, ScheduleToCloseTimeout and RetryPolicy; with no
// ScheduleToCloseTimeout its attempts are bounded by the retry policy's
// MaximumAttempts (each attempt's StartToCloseTimeout and backoff added
// up; 24 hours when MaximumAttempts is 0).
func WithActivityOptions(ao workflow.ActivityOptions) Option {
	return func(o *callOptions) { o.activity = ao }
}

// WithLocalActivity says how the LLM calls run, whatever the task's
// setting: true as local activities, false as ordinary activities.
//
// By default a task the API started (with --local-model-calls, the
// default) makes its calls as local activities, except in a turn whose
// message came from a caller that reads the task while the skill works (a
// stream, a non-blocking send) and in a workflow task that answers an
// update: the worker that runs the workflow makes the call at once and
// records the answer in one marker event (fewer history events and no
// second task per call, about half the CPU per model turn). An ordinary
// activity goes through the task queue to any worker, and its three
// events record when it was scheduled, started and finished. A local
// activity holds the workflow task while it runs: the task answers no
// query until the model answered, a call longer than the workflow task's
// timeout (10 s) costs three events every 8 s, and a worker that dies
// mid-call makes the next one call the model again from the start, where
// an ordinary activity is retried alone, after its StartToCloseTimeout.
// Prefer WithLocalActivity(false) for a call that takes minutes (a
// reasoning model writing a long answer).
func WithLocalActivity(local bool) Option {
	return func(o *callOptions) { o.local = &local }
}
