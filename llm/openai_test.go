package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testKey = "sk-test-0123456789abcdef"

// recorded is one request a fake provider received.
type recorded struct {
	path   string
	header http.Header
	body   map[string]any
}

// fakeServer answers every request with status and body (and headers), and
// records the requests.
func fakeServer(t *testing.T, status int, body string, headers map[string]string) (*httptest.Server, *[]recorded) {
	t.Helper()
	var reqs []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rec := recorded{path: r.URL.Path, header: r.Header.Clone()}
		if err := json.Unmarshal(raw, &rec.body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, raw)
		}
		reqs = append(reqs, rec)
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs
}

// jsonOf re-decodes v so that it compares with a decoded request body.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in test: %v: %s", err, s)
	}
	return v
}

func TestOpenAIToolCalls(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
		"choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null,
			"message": {"role": "assistant", "content": null, "refusal": null, "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"6*7\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]}}],
		"usage": {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43}}`, nil)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "gpt-test"})
	schema, err := SchemaFor[struct {
		Expression string `json:"expression"`
	}]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), Request{
		System: "Be brief.",
		Messages: []Message{
			{Role: RoleUser, Text: "What is 6*7?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_0", Name: "clock", Arguments: "{}"}}},
			{Role: RoleTool, ToolCallID: "call_0", Text: "2026-01-02T03:04:05Z"},
		},
		Tools: []ToolSpec{{Name: "calculator", Description: "Evaluates arithmetic.", Parameters: schema}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		ToolCalls: []ToolCall{
			{ID: "call_1", Name: "calculator", Arguments: `{"expression":"6*7"}`},
			{ID: "call_2", Name: "clock", Arguments: "{}"},
		},
		Usage:      Usage{InputTokens: 31, OutputTokens: 12},
		StopReason: StopToolUse,
		Model:      "gpt-test",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if len(*reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(*reqs))
	}
	got := (*reqs)[0]
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %s, want /v1/chat/completions", got.path)
	}
	if auth := got.header.Get("Authorization"); auth != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the bearer key", auth)
	}
	wantBody := jsonOf(t, `{
		"model": "gpt-test",
		"messages": [
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "What is 6*7?"},
			{"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
			{"role": "tool", "tool_call_id": "call_0", "content": "2026-01-02T03:04:05Z"}
		],
		"tools": [{"type": "function", "function": {"name": "calculator", "description": "Evaluates arithmetic.",
			"parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"], "additionalProperties": false}}}]
	}`)
	if diff := cmp.Diff(wantBody, any(got.body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestOpenAIResponseFormat(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{
		"id": "chatcmpl-2", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
		"choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
			"message": {"role": "assistant", "content": "{\"city\":\"Lisbon\",\"days\":3}", "refusal": null}}],
		"usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}}`, nil)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, Model: "gpt-test"})
	type plan struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	schema, err := SchemaFor[plan]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), Request{
		Model:          "other-model",
		Messages:       []Message{{Role: RoleUser, Text: "Plan a trip"}},
		ResponseFormat: &ResponseFormat{Name: "plan", Schema: schema},
		MaxTokens:      100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Response{Text: `{"city":"Lisbon","days":3}`, Usage: Usage{InputTokens: 20, OutputTokens: 9}, StopReason: StopEnd, Model: "gpt-test"}, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got := (*reqs)[0]
	if auth := got.header.Get("Authorization"); auth != "" {
		t.Errorf("Authorization = %q without a key, want none", auth)
	}
	wantBody := jsonOf(t, `{
		"model": "other-model",
		"max_completion_tokens": 100,
		"messages": [{"role": "user", "content": "Plan a trip"}],
		"response_format": {"type": "json_schema", "json_schema": {"name": "plan",
			"schema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
				"required": ["city", "days"], "additionalProperties": false}}}
	}`)
	if diff := cmp.Diff(wantBody, any(got.body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		headers   map[string]string
		want      APIError
		retryable bool
	}{
		{
			name:      "429 with Retry-After",
			status:    429,
			body:      `{"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}`,
			headers:   map[string]string{"Retry-After": "7"},
			want:      APIError{Provider: "openai", StatusCode: 429, Message: "Rate limit reached", RetryAfter: 7 * time.Second},
			retryable: true,
		},
		{
			name:      "429 with retry-after-ms",
			status:    429,
			body:      `{"error": {"message": "Slow down", "type": "requests", "param": null, "code": null}}`,
			headers:   map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"},
			want:      APIError{Provider: "openai", StatusCode: 429, Message: "Slow down", RetryAfter: 1500 * time.Millisecond},
			retryable: true,
		},
		{
			name:      "500",
			status:    500,
			body:      `{"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}`,
			want:      APIError{Provider: "openai", StatusCode: 500, Message: "The server had an error"},
			retryable: true,
		},
		{
			name:   "400",
			status: 400,
			body:   `{"error": {"message": "Invalid schema for response_format 'plan'", "type": "invalid_request_error", "param": "response_format", "code": null}}`,
			want:   APIError{Provider: "openai", StatusCode: 400, Message: "Invalid schema for response_format 'plan'"},
		},
		{
			name:   "401 echoing the key",
			status: 401,
			body:   `{"error": {"message": "Incorrect API key provided: ` + testKey + `.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`,
			want:   APIError{Provider: "openai", StatusCode: 401, Message: "Incorrect API key provided: [redacted]."},
		},
		{
			name:   "local server's plain error",
			status: 404,
			body:   `{"error": "model 'llama9' not found"}`,
			want:   APIError{Provider: "openai", StatusCode: 404, Message: "model 'llama9' not found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := fakeServer(t, tt.status, tt.body, tt.headers)
			p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: testKey})
			_, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *APIError", err, err)
			}
			if diff := cmp.Diff(tt.want, *apiErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if apiErr.Retryable() != tt.retryable {
				t.Errorf("Retryable() = %v, want %v", apiErr.Retryable(), tt.retryable)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error contains the API key: %v", err)
			}
			// Client-side retries are off: Temporal retries the activity.
			if len(*reqs) != 1 {
				t.Errorf("%d requests, want 1 (no client-side retries)", len(*reqs))
			}
		})
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p := NewOpenAI(OpenAIConfig{BaseURL: url + "/v1?key=" + testKey, APIKey: testKey})
	_, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	var apiErr *APIError
	if err == nil || errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want a connection error", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error contains the API key: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"fraction", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "250", "Retry-After": "3"}, 250 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := parseRetryAfter(h.Get, now); got != tt.want {
				t.Errorf("parseRetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}
