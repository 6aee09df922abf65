package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/genai"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/metrics"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/internal/workerenv"
	"github.com/a2aflow/a2aflow/llm"
)

// LLM makes the LLM calls of the llm package's workflow helpers (Function,
// Worker). Its CompleteChat method is the activity llm.ActivityCompleteChat.
type LLM struct {
	// Provider answers the calls; nil means no LLM is configured, and every
	// call fails, not retried, with an llm.ErrTypeNotConfigured error that
	// says how to configure one.
	Provider llm.Provider
	// Providers are the providers a call may name (llm.Request.Provider,
	// llm.WithProvider), by name; a call naming none uses Provider.
	Providers map[string]llm.Provider
	// Prices price each call (the config file's [[llm-prices]]): the cost
	// goes into the answer's Usage.CostUSD, recorded in the task's history.
	Prices Prices
	// Usage, when set, records each call's tokens and cost for the usage
	// totals (GET /usage, a2aflow usage), keyed by the call's activity so
	// that a retried attempt replaces its row (models.LLMUsage).
	Usage UsageRecorder
	// Live, when set, takes the answer's text as it is written: a call to
	// a provider that streams (llm.Streamer) and asks for text, not a
	// ResponseFormat, sends each piece to Live (hints.Delta: the task,
	// the call, the attempt and the offset), for the API processes'
	// subscribers. Nothing of it goes through the workflow.
	Live hints.LiveNotifier
	// Limits are the rate and concurrency limits of the calls (the config
	// file's [[llm-limits]]), held in Leases, the database every worker
	// shares: a call waits in its activity for a slot of its provider's
	// model (limits.go).
	Limits Limits
	Leases LeaseStore
	// Budgets are the tenants' budgets per period (the config file's
	// [[llm-budgets]]), checked against Spend, the recorded usage every
	// worker shares, before each call (budgets.go).
	Budgets TenantBudgets
	Spend   SpendReader

	now func() time.Time // the clock of the budgets' periods; nil: time.Now
}

// UsageRecorder keeps the usage of LLM calls: *models.Store.
type UsageRecorder interface {
	RecordLLMUsage(ctx context.Context, u models.LLMUsage) error
}

// CompleteChat makes one LLM call. Failures become Temporal errors that
// drive the activity's retry policy: a 429 or 5xx is retried (after the
// provider's Retry-After, when it sends one), another 4xx or a request that
// cannot be built is not. The API key is in none of them: the providers
// remove it from every error.
func (a *LLM) CompleteChat(ctx context.Context, req llm.Request) (llm.Response, error) {
	p := a.Provider
	if req.Provider != "" {
		if p = a.Providers[req.Provider]; p == nil && a.Provider != nil && a.Provider.Name() == req.Provider {
			p = a.Provider
		}
		if p == nil {
			return llm.Response{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the LLM provider %q is not configured on this worker: %v", req.Provider, llm.ErrNotConfigured), llm.ErrTypeNotConfigured, nil)
		}
	}
	if p == nil {
		return llm.Response{}, temporal.NewNonRetryableApplicationError(llm.ErrNotConfigured.Error(), llm.ErrTypeNotConfigured, nil)
	}
	logger := activity.GetLogger(ctx)
	model := req.Model
	if model == "" {
		model = p.Model()
	}
	task := workerenv.TaskOf(ctx)
	if err := a.checkTenantBudgets(ctx, task.Owner, req.TenantBudgetRaises); err != nil {
		return llm.Response{}, err
	}
	release, err := a.acquire(ctx, p.Name(), model, task.Owner)
	if err != nil {
		return llm.Response{}, err
	}
	var resp llm.Response
	_, streams := p.(llm.Streamer)
	streams = streams && a.Live != nil && req.ResponseFormat == nil
	ctx, span := genai.StartChat(ctx, genai.Chat{Provider: p.Name(), Model: model, MaxTokens: req.MaxTokens, Stream: streams,
		JSON: req.ResponseFormat != nil, Agent: task.Agent, TaskID: chatTaskID(ctx, task), ConversationID: task.ContextID})
	began := time.Now()
	stopBeating := heartbeatWhile(ctx)
	if streams {
		resp, err = a.stream(ctx, p.(llm.Streamer), req)
	} else {
		resp, err = p.Complete(ctx, req)
	}
	stopBeating()
	release()
	if err == nil {
		resp.Usage.CostUSD, _ = a.Prices.Cost(p.Name(), model, resp.Model, resp.Usage)
		resp.Provider, resp.DurationMs = p.Name(), max(time.Since(began).Milliseconds(), 1)
	}
	metrics.LLMCall(metrics.LLMCallLabels{Provider: p.Name(), Model: model, Agent: task.Agent, Tenant: task.Owner}, err, resp.Usage.InputTokens,
		resp.Usage.CachedInputTokens, resp.Usage.OutputTokens, resp.Usage.CostUSD)
	errType := chatErrorType(err)
	metrics.GenAIClientCall(metrics.GenAICallLabels{Operation: genai.Operation(p.Name()), Provider: genai.ProviderName(p.Name()),
		RequestModel: model, ResponseModel: resp.Model, ErrorType: errType}, time.Since(began), resp.Usage.InputTokens, resp.Usage.OutputTokens, err == nil)
	genai.SetContent(span, req.System, chatInput(req), chatOutput(resp, err))
	genai.EndChat(span, genai.ChatResult{ResponseModel: resp.Model, FinishReason: string(resp.StopReason), InputTokens: resp.Usage.InputTokens,
		CachedInputTokens: resp.Usage.CachedInputTokens, OutputTokens: resp.Usage.OutputTokens, CostUSD: resp.Usage.CostUSD}, err, errType)
	if err != nil {
		err = temporalError(err)
		logger.Warn("LLM call failed", "provider", p.Name(), "error", err)
		return llm.Response{}, err
	}
	logger.Debug("LLM call", "provider", p.Name(), "model", resp.Model,
		"input_tokens", resp.Usage.InputTokens, "cached_input_tokens", resp.Usage.CachedInputTokens,
		"output_tokens", resp.Usage.OutputTokens, "cost_usd", resp.Usage.CostUSD, "stop", resp.StopReason)
	a.record(ctx, task, p.Name(), model, resp.Usage)
	return resp, nil
}

// llmHeartbeatEvery is how often an LLM call in progress tells Temporal its
// worker still works on it: a quarter of llm.DefaultActivityOptions'
// HeartbeatTimeout.
const llmHeartbeatEvery = 5 * time.Second

// heartbeatWhile heartbeats the activity of ctx every llmHeartbeatEvery
// until the returned function is called, so that an attempt lost with its
// worker is retried after the heartbeat timeout rather than the attempt's.
// A provider's call has no progress to report in between (a stream's
// chunks go to the live outbox, not to history). Outside an ordinary
// activity (a local activity, a direct call) it does nothing.
func heartbeatWhile(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).IsLocalActivity {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(llmHeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// chatTaskID is the task's ID: the activity's workflow's, when the task's
// keys do not name it.
func chatTaskID(ctx context.Context, task workerenv.Task) string {
	if task.ID == "" && activity.IsActivity(ctx) {
		return activity.GetInfo(ctx).WorkflowExecution.ID
	}
	return task.ID
}

// chatErrorType is a failed call's error.type: the provider's HTTP
// status, or a2aflow's class of the failure.
func chatErrorType(err error) string {
	var apiErr *llm.APIError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &apiErr):
		return strconv.Itoa(apiErr.StatusCode)
	case errors.Is(err, llm.ErrInvalidRequest):
		return llm.ErrTypeInvalidRequest
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "_OTHER"
}

// chatInput is the request's conversation as gen_ai.input.messages.
func chatInput(req llm.Request) []genai.Message {
	out := make([]genai.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		msg := genai.Message{Role: string(m.Role)}
		switch m.Role {
		case llm.RoleTool:
			msg.Parts = append(msg.Parts, genai.Part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Text})
		default:
			if m.Text != "" {
				msg.Parts = append(msg.Parts, genai.Part{Type: "text", Content: m.Text})
			}
			for _, c := range m.ToolCalls {
				msg.Parts = append(msg.Parts, genai.Part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			}
		}
		out = append(out, msg)
	}
	return out
}

// chatOutput is the answer as gen_ai.output.messages.
func chatOutput(resp llm.Response, err error) []genai.Message {
	if err != nil {
		return nil
	}
	msg := genai.Message{Role: string(llm.RoleAssistant), FinishReason: genai.FinishReason(string(resp.StopReason))}
	if resp.Text != "" {
		msg.Parts = append(msg.Parts, genai.Part{Type: "text", Content: resp.Text})
	}
	for _, c := range resp.ToolCalls {
		msg.Parts = append(msg.Parts, genai.Part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return []genai.Message{msg}
}

// ChatAnswer is the result of the CompleteChat activity the worker
// registers (Set.Register): the model's answer and, from a local activity,
// the hash of the request it answered (wire.LocalForkHash), which forks
// compare. A workflow decodes it as an llm.Response.
type ChatAnswer struct {
	llm.Response
	ForkHash string `json:"a2aflowForkHash,omitempty"`
}

// completeChatAnswer is CompleteChat, whose answer names its request when
// it runs as a local activity (ChatAnswer).
func (a *LLM) completeChatAnswer(ctx context.Context, req llm.Request) (ChatAnswer, error) {
	resp, err := a.CompleteChat(ctx, req)
	if err != nil || !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return ChatAnswer{Response: resp}, err
	}
	return ChatAnswer{Response: resp, ForkHash: requestForkHash(ctx, req)}, nil
}

// requestForkHash is wire.ForkHash of req as the workflow encoded it (the
// default converter's JSON, which decoding and encoding again gives back),
// or "" when the task's context is not known here (no header): a fork
// then matches the call by its order.
func requestForkHash(ctx context.Context, req llm.Request) string {
	task := workerenv.TaskOf(ctx)
	if task.ContextID == "" {
		return ""
	}
	payloads, err := converter.GetDefaultDataConverter().ToPayloads(req)
	if err != nil {
		return ""
	}
	var data [][]byte
	for _, p := range payloads.GetPayloads() {
		data = append(data, p.GetData())
	}
	return wire.ForkHash(data, a2a.TaskID(activity.GetInfo(ctx).WorkflowExecution.ID), task.ContextID)
}

// record keeps the call's usage for the totals. A failure to record is
// logged, not returned: the call succeeded and was paid for, and a retry
// would pay again; the task's own metadata still counts it.
func (a *LLM) record(ctx context.Context, task workerenv.Task, provider, model string, u llm.Usage) {
	if a.Usage == nil || !activity.IsActivity(ctx) {
		return
	}
	info := activity.GetInfo(ctx)
	if task.ID == "" {
		task.ID = info.WorkflowExecution.ID
	}
	row := models.LLMUsage{TaskID: task.ID, RunID: info.WorkflowExecution.RunID, ActivityID: callID(info),
		Owner: task.Owner, ContextID: task.ContextID, Agent: task.Agent, Provider: provider, Model: model,
		InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD}
	if err := a.Usage.RecordLLMUsage(ctx, row); err != nil {
		activity.GetLogger(ctx).Warn("LLM usage not recorded for the totals", "error", err)
	}
}

// stream makes the call with s, sending each piece of the answer to
// a.Live as it arrives, and that the answer is complete once it is. A
// failed attempt's answer is not marked complete: the next attempt starts
// it again (its deltas name a higher attempt).
func (a *LLM) stream(ctx context.Context, s llm.Streamer, req llm.Request) (llm.Response, error) {
	info := activity.GetInfo(ctx)
	d := hints.Delta{Task: info.WorkflowExecution.ID, Call: LiveCallName(info.WorkflowExecution.RunID, callID(info)), Attempt: info.Attempt}
	if info.IsLocalActivity {
		// Its attempts start again at 1 on the worker that replaces one
		// that died mid-call: the later execution starts the answer again.
		d.Since = info.ScheduledTime.UnixNano()
	}
	resp, err := s.CompleteStream(ctx, req, func(text string) {
		d.Text = text
		a.Live.Live(d)
		d.Offset += len(text)
	})
	if err == nil {
		d.Text, d.Done = "", true
		a.Live.Live(d)
	}
	return resp, err
}

// callID names the call among its run's LLM calls: its activity ID, which
// for a local activity (a task started with wire.LocalModelCalls)
// is "local-" and its own sequence number in the run (the SDK numbers local
// activities apart from the other commands: "local-3" and the activity "3"
// are two calls). A local activity executed again after its worker died
// keeps its ID: it is the same call, and its usage row is replaced.
func callID(info activity.Info) string {
	if info.IsLocalActivity {
		return "local-" + info.ActivityID
	}
	return info.ActivityID
}

// LiveCallName names an LLM call among its task's live answers: the
// activity's ID within the run, after the run's first 8 characters (IDs
// start again in a continued run).
func LiveCallName(runID, activityID string) string {
	if len(runID) > 8 {
		runID = runID[:8]
	}
	return runID + "-" + activityID
}

// temporalError classifies a provider error for Temporal's retry policy.
// The provider's error is not attached as the cause: only its message,
// already free of the key, enters history.
func temporalError(err error) error {
	var apiErr *llm.APIError
	switch {
	case errors.As(err, &apiErr):
		switch {
		case !apiErr.Retryable():
			return temporal.NewNonRetryableApplicationError(apiErr.Error(), llm.ErrTypeRejected, nil)
		case apiErr.StatusCode == 429:
			return temporal.NewApplicationErrorWithOptions(apiErr.Error(), llm.ErrTypeRateLimited,
				temporal.ApplicationErrorOptions{NextRetryDelay: apiErr.RetryAfter})
		default:
			return temporal.NewApplicationErrorWithOptions(apiErr.Error(), llm.ErrTypeUnavailable,
				temporal.ApplicationErrorOptions{NextRetryDelay: apiErr.RetryAfter})
		}
	case errors.Is(err, llm.ErrInvalidRequest):
		return temporal.NewNonRetryableApplicationError(err.Error(), llm.ErrTypeInvalidRequest, nil)
	}
	// Not reached, timed out, a broken answer: worth another attempt.
	return temporal.NewApplicationError(fmt.Sprintf("LLM call failed: %v", err), llm.ErrTypeUnavailable)
}
