package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Function asks the model one question and returns its answer as a T: the
// JSON schema of T is the requested response format, and the answer is
// decoded (unknown fields are an error) and validated with T's `validate`
// tags. An invalid answer is asked again, with the validation error, up to
// WithMaxAttempts times (default 3); then Function returns a non-retryable
// application error of type ErrTypeInvalidOutput. T must be a struct.
//
// Function is workflow code: each attempt is one CompleteChat activity
// (a local activity in the tasks the API starts, see [WithLocalActivity]).
func Function[T any](ctx workflow.Context, prompt string, opts ...Option) (T, error) {
	var zero T
	o := newOptions(opts)
	o.applyDefaults(ctx)
	defer usageMemo(ctx, o)
	schema, err := SchemaFor[T]() //workflowcheck:ignore reflection over a Go type: the same schema on every replay
	if err != nil {
		return zero, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidRequest, nil)
	}
	name := schemaName(reflect.TypeFor[T]())
	req := Request{
		Model:          o.model,
		Provider:       o.provider,
		System:         o.system,
		Messages:       []Message{{Role: RoleUser, Text: prompt}},
		ResponseFormat: &ResponseFormat{Name: name, Schema: schema},
		MaxTokens:      o.maxTokens,
	}
	for attempt := 1; ; attempt++ {
		summary := o.callSummary(fmt.Sprintf("%s, attempt %d", name, attempt), prompt)
		resp, err := complete(ctx, o, req, summary)
		if err != nil {
			return zero, err
		}
		var out T
		verr := decodeValid(resp.Text, &out, true) //workflowcheck:ignore decoding and validating a value is deterministic
		if verr == nil {
			return out, nil
		}
		verr = fmt.Errorf("the answer is %w", verr)
		workflow.GetLogger(ctx).Info("invalid LLM answer", "schema", name, "attempt", attempt, "error", verr)
		if attempt >= o.maxAttempts {
			return zero, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the model gave no valid %s in %d attempts: %v", name, attempt, verr), ErrTypeInvalidOutput, nil)
		}
		// The next attempt sees its own answer and what was wrong with it.
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, Text: resp.Text},
			Message{Role: RoleUser, Text: "That answer is invalid: " + verr.Error() + ". Answer again with only a JSON object that matches the schema."})
	}
}

// complete runs one CompleteChat activity and records its token usage,
// once the task's and its tenant's budgets allow it (budget.go).
func complete(ctx workflow.Context, o *callOptions, req Request, summary string) (Response, error) {
	if err := checkTaskBudget(ctx, o); err != nil {
		return Response{}, err
	}
	local := o.localCalls(ctx)
	actx := workflow.WithActivityOptions(ctx, withSummary(o.activity, summary))
	if local {
		actx = workflow.WithLocalActivityOptions(ctx, localActivityOptions(o.activity, summary))
	}
	var resp Response
	for {
		raised := tenantRaises(o)
		req.TenantBudgetRaises = raised
		var call workflow.Future
		if local {
			call = workflow.ExecuteLocalActivity(actx, ActivityCompleteChat, req)
		} else {
			call = workflow.ExecuteActivity(actx, ActivityCompleteChat, req)
		}
		err := call.Get(ctx, &resp)
		if tb, spent := tenantBudgetSpent(err); spent {
			// The tenant's budget for the period is spent: ask for more
			// (or fail), then call again.
			if err := raiseTenantBudget(ctx, o, tb, raised); err != nil {
				return Response{}, err
			}
			continue
		}
		if err != nil {
			return Response{}, err
		}
		break
	}
	if o.usage != nil {
		o.usage.AddTokenUsage(workflows.TokenUsage{InputTokens: resp.Usage.InputTokens, CachedInputTokens: resp.Usage.CachedInputTokens,
			OutputTokens: resp.Usage.OutputTokens, Calls: 1, CostUSD: resp.Usage.CostUSD})
		o.calls++
	}
	return resp, nil
}

// callSummary is the summary of a model call, which the Temporal UI shows
// in the run's timeline and the task's current details while it runs: the
// call's number in the task (when the task counts its usage), the model,
// what the call is (turn) and the text it answers (text).
func (o *callOptions) callSummary(turn, text string) string {
	model := o.model
	if model == "" {
		model = "the worker's model"
	}
	n := ""
	if o.usage != nil {
		n = fmt.Sprintf(" %d", o.usage.TokenUsage().Calls+1)
	}
	return fmt.Sprintf("model call%s (%s), %s: %s", n, model, turn, text)
}

// localCalls reports whether the calls run as local activities: as
// WithLocalActivity says, else as the task's run says for its recording
// (wire.LocalModelCalls). Outside a task, ordinary activities.
func (o *callOptions) localCalls(ctx workflow.Context) bool {
	if o.local != nil {
		return *o.local
	}
	r, ok := wire.RunRecordingOf(ctx)
	return ok && r.LocalModelCallNow(ctx)
}

// localActivityOptions are the local activity options of a call with
// activity options ao: its timeouts and retry policy, and a
// ScheduleToCloseTimeout, which bounds a local activity's retries (the
// SDK's default is StartToCloseTimeout: no retry after the first attempt
// used it up), from the retry policy when ao has none.
func localActivityOptions(ao workflow.ActivityOptions, summary string) workflow.LocalActivityOptions {
	lo := workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: ao.ScheduleToCloseTimeout,
		StartToCloseTimeout:    ao.StartToCloseTimeout,
		RetryPolicy:            ao.RetryPolicy,
		Summary:                wire.OneLine(summary, 200),
	}
	if lo.ScheduleToCloseTimeout <= 0 {
		lo.ScheduleToCloseTimeout = attemptsBound(ao)
	}
	return lo
}

// attemptsBound is how long the attempts of ao's retry policy can take:
// each attempt's StartToCloseTimeout and the backoff before the next,
// capped at MaximumInterval; 24 hours when attempts are unbounded.
func attemptsBound(ao workflow.ActivityOptions) time.Duration {
	const unbounded = 24 * time.Hour
	p := ao.RetryPolicy
	attempt := ao.StartToCloseTimeout
	if attempt <= 0 {
		attempt = DefaultActivityOptions.StartToCloseTimeout
	}
	if p == nil || p.MaximumAttempts <= 0 {
		return unbounded
	}
	initial, coef := p.InitialInterval, p.BackoffCoefficient
	if initial <= 0 {
		initial = time.Second
	}
	if coef < 1 {
		coef = 2
	}
	total := time.Duration(0)
	backoff := float64(initial)
	for i := int32(1); i <= p.MaximumAttempts && total < unbounded; i++ {
		total += attempt
		if i < p.MaximumAttempts {
			b := time.Duration(backoff)
			if p.MaximumInterval > 0 && b > p.MaximumInterval {
				b = p.MaximumInterval
			}
			total += b
			backoff = min(backoff*coef, float64(unbounded))
		}
	}
	return min(total, unbounded)
}

// usageMemo writes the task's usage into its memo once, after a Function or
// Worker run that made calls (see workflows.Task.RecordUsageMemo).
func usageMemo(ctx workflow.Context, o *callOptions) {
	if o.usage != nil && o.calls > 0 {
		o.usage.RecordUsageMemo(ctx)
	}
}

// IsNotConfigured reports whether err is an LLM call failing because the
// worker has no LLM provider, so a skill can answer with how to configure one.
func IsNotConfigured(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == ErrTypeNotConfigured
}

var notSchemaName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// schemaName names T's schema for the provider: its Go type name.
func schemaName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := notSchemaName.ReplaceAllString(t.Name(), "_")
	if name == "" {
		return "answer"
	}
	return wire.OneLine(name, 64)
}

// threadMessages turns an A2A conversation into model messages: user
// messages are the user's, agent messages the assistant's. Data parts are
// given as JSON; a user's file parts become the message's Files (read by the
// model as images, documents or text), an agent's are named in its text.
func threadMessages(th workflows.Thread) []Message {
	var out []Message
	for _, m := range th.Messages() {
		if m.Role == a2a.MessageRoleAgent {
			if text := partsText(m.Parts, true); text != "" {
				out = append(out, Message{Role: RoleAssistant, Text: text})
			}
			continue
		}
		msg := Message{Role: RoleUser, Text: partsText(m.Parts, false), Files: partsFiles(m.Parts)}
		if msg.Text == "" && len(msg.Files) == 0 {
			continue
		}
		out = append(out, msg)
	}
	return out
}

// partsText renders message parts as text for a model; file parts are
// named only when withFiles is set.
func partsText(parts a2a.ContentParts, withFiles bool) string {
	var out []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			if c != "" {
				out = append(out, string(c))
			}
		case a2a.Data:
			raw, err := json.Marshal(p.Data()) //workflowcheck:ignore encoding/json sorts map keys: the same text on every replay
			if err == nil {
				out = append(out, string(raw))
			}
		case a2a.URL:
			if withFiles {
				out = append(out, fmt.Sprintf("[file %s %s]", p.Filename, string(c)))
			}
		case a2a.Raw:
			if withFiles {
				out = append(out, fmt.Sprintf("[file %s, %s, %d bytes]", p.Filename, p.MediaType, len(c)))
			}
		}
	}
	return strings.Join(out, "\n")
}

// partsFiles returns the file parts of parts as Files.
func partsFiles(parts a2a.ContentParts) []File {
	var out []File
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.URL:
			out = append(out, File{Name: p.Filename, MediaType: p.MediaType, URI: string(c)})
		case a2a.Raw:
			out = append(out, File{Name: p.Filename, MediaType: p.MediaType, Data: []byte(c)})
		}
	}
	return out
}
