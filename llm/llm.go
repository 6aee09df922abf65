package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Provider is one configured LLM endpoint. Complete makes exactly one call,
// without client-side retries: a failure is an [*APIError] when the provider
// answered with an HTTP error status (its Retryable method says whether a
// later attempt may succeed), any other error when the provider was not
// reached (also worth retrying). Errors never contain the API key.
type Provider interface {
	// Name is the provider kind, "openai", "anthropic" or "gemini", for logs.
	Name() string
	// Model is the model used when a Request names none.
	Model() string
	// Complete sends req and returns the model's answer.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Role is who said a Message.
type Role string

const (
	// RoleUser is the person (or the calling agent).
	RoleUser Role = "user"
	// RoleAssistant is the model.
	RoleAssistant Role = "assistant"
	// RoleTool is the result of a tool call the model asked for.
	RoleTool Role = "tool"
)

// Message is one message of the conversation sent to the model.
type Message struct {
	Role Role `json:"role"`
	// Text is the message text; for RoleTool the tool's result.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a RoleTool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	// IsError marks a RoleTool result that is an error message.
	IsError bool `json:"isError,omitempty"`
	// Files are the files of a RoleUser message, given to the model after
	// its text: images and PDFs as the provider's image and document
	// content, text files as text.
	Files []File `json:"files,omitempty"`
}

// ToolCall is the model's request to call a tool.
type ToolCall struct {
	// ID pairs the call with its result message.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments as the model wrote it. It is
	// a string, not a json.RawMessage, because a model may write invalid JSON
	// and the call must still travel through workflow history to be answered
	// with an error.
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema (an object schema) of the arguments.
	Parameters json.RawMessage `json:"parameters"`
}

// ResponseFormat asks for an answer that is JSON matching a schema.
type ResponseFormat struct {
	// Name names the schema (letters, digits, '_' and '-').
	Name string `json:"name"`
	// Schema is the JSON schema of the answer.
	Schema json.RawMessage `json:"schema"`
}

// Request is one call to the model.
type Request struct {
	// Model overrides the provider's model; empty uses Provider.Model().
	Model string `json:"model,omitempty"`
	// Provider names the configured provider to call ("openai",
	// "anthropic", "gemini"); empty calls the worker's default one.
	Provider string `json:"provider,omitempty"`
	// System is the system prompt; optional.
	System string `json:"system,omitempty"`
	// Messages is the conversation so far, oldest first.
	Messages []Message `json:"messages"`
	// Tools the model may call; optional.
	Tools []ToolSpec `json:"tools,omitempty"`
	// ResponseFormat asks for structured JSON output; optional.
	ResponseFormat *ResponseFormat `json:"responseFormat,omitempty"`
	// MaxTokens limits the answer; 0 means the provider's default (4096
	// for Anthropic, which requires a limit; none for OpenAI).
	MaxTokens int64 `json:"maxTokens,omitempty"`
	// TenantBudgetRaises are what approvers allowed the task to spend
	// beyond its tenant's budgets ([[llm-budgets]]), by period ("day",
	// "week", "month"): the CompleteChat activity refuses the call with an
	// ErrTypeTenantBudgetExceeded error when the tenant's spend in a
	// period has reached its budget plus this.
	TenantBudgetRaises map[string]float64 `json:"tenantBudgetRaises,omitempty"`
}

// Usage counts the tokens of one or more calls, and what they cost.
type Usage struct {
	// InputTokens counts every prompt token, CachedInputTokens those of
	// them the provider read from its prompt cache (billed lower).
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64 `json:"outputTokens"`
	// CostUSD is the call's cost by the worker's price table
	// ([[llm-prices]] in the config file), set by the CompleteChat activity
	// and so recorded in the task's history with the answer; 0 when the
	// table has no price for the call's provider and model.
	CostUSD float64 `json:"costUSD,omitempty"`
}

// StopReason says why the model stopped.
type StopReason string

const (
	// StopEnd: the model finished its answer.
	StopEnd StopReason = "end"
	// StopToolUse: the model asks for tool calls.
	StopToolUse StopReason = "tool_use"
	// StopMaxTokens: the answer was cut at the token limit.
	StopMaxTokens StopReason = "max_tokens"
	// StopRefusal: the model refused (content filter or refusal).
	StopRefusal StopReason = "refusal"
	// StopOther: any other reason the provider gave.
	StopOther StopReason = "other"
)

// Response is the model's answer to one Request.
type Response struct {
	// Text is the answer text (the JSON document with a ResponseFormat).
	Text string `json:"text,omitempty"`
	// ToolCalls are the tool calls the model asks for, in order.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Usage is what the call cost.
	Usage Usage `json:"usage"`
	// StopReason says why the model stopped.
	StopReason StopReason `json:"stopReason"`
	// Model is the model that answered, as the provider names it.
	Model string `json:"model,omitempty"`
	// Provider is the provider that answered ("openai", "anthropic",
	// "gemini"), and DurationMs how long the call took, as the worker's
	// CompleteChat activity measured it: a model call made as a local
	// activity, whose marker names neither, shows them in the task's
	// timeline from its result.
	Provider   string `json:"provider,omitempty"`
	DurationMs int64  `json:"durationMs,omitempty"`
}

// ErrNotConfigured is returned by FromEnv when the environment configures no
// LLM provider.
var ErrNotConfigured = errors.New("no LLM provider is configured: set OPENAI_BASE_URL and/or OPENAI_API_KEY (any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM, llama.cpp), ANTHROPIC_API_KEY or GEMINI_API_KEY, optionally A2AFLOW_LLM_MODEL, and restart the worker")

// ErrInvalidRequest marks a Request that no provider could send, such as a
// message of an unknown role or a schema that is not a JSON object.
var ErrInvalidRequest = errors.New("invalid LLM request")

// APIError is an HTTP error status answered by the provider. Its message is
// the provider's own, with the API key removed.
type APIError struct {
	// Provider is "openai", "anthropic" or "gemini".
	Provider string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the provider's error message.
	Message string
	// RetryAfter is the delay the provider asked for (Retry-After), or 0.
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s API answered %d", e.Provider, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Retryable reports whether a later attempt may succeed: rate limits (429),
// timeouts (408), conflicts (409) and server errors (5xx). Other 4xx, such as
// a bad request or a wrong key, fail the same way every time.
func (e *APIError) Retryable() bool {
	switch {
	case e.StatusCode == 408, e.StatusCode == 409, e.StatusCode == 429:
		return true
	case e.StatusCode >= 500:
		return true
	}
	return false
}

// redact removes secret from s; a short secret is left alone, since
// replacing a few letters everywhere would mangle the message and reveal
// nothing.
func redact(s, secret string) string {
	if len(secret) < 8 {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// parseRetryAfter reads the Retry-After family of headers: retry-after-ms
// (OpenAI), then Retry-After in seconds or as an HTTP date.
func parseRetryAfter(get func(string) string, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(get("Retry-After-Ms")), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := time.Parse(time.RFC1123, v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
