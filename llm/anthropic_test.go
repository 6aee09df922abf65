package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAnthropicToolUse(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": [
			{"type": "text", "text": "Let me compute that."},
			{"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "6*7"}}
		],
		"stop_reason": "tool_use", "stop_sequence": null,
		"usage": {"input_tokens": 40, "output_tokens": 15}}`, nil)
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testKey, Model: "claude-test"})
	schema, err := SchemaFor[struct {
		Expression string `json:"expression" jsonschema:"description=An arithmetic expression"`
	}]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), Request{
		System: "Be brief.",
		Messages: []Message{
			{Role: RoleUser, Text: "What time is it, and what is 6*7?"},
			{Role: RoleAssistant, Text: "Checking.", ToolCalls: []ToolCall{
				{ID: "toolu_a", Name: "clock", Arguments: "{}"},
				{ID: "toolu_b", Name: "clock", Arguments: "{not json"},
			}},
			// Both results of one assistant turn go in one user turn.
			{Role: RoleTool, ToolCallID: "toolu_a", Text: "2026-01-02T03:04:05Z"},
			{Role: RoleTool, ToolCallID: "toolu_b", Text: "invalid arguments", IsError: true},
		},
		Tools: []ToolSpec{{Name: "calculator", Description: "Evaluates arithmetic.", Parameters: schema}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text:       "Let me compute that.",
		ToolCalls:  []ToolCall{{ID: "toolu_1", Name: "calculator", Arguments: `{"expression": "6*7"}`}},
		Usage:      Usage{InputTokens: 40, OutputTokens: 15},
		StopReason: StopToolUse,
		Model:      "claude-test",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if len(*reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(*reqs))
	}
	got := (*reqs)[0]
	if got.path != "/v1/messages" {
		t.Errorf("path = %s, want /v1/messages", got.path)
	}
	if key := got.header.Get("X-Api-Key"); key != testKey {
		t.Errorf("x-api-key = %q, want the key", key)
	}
	if v := got.header.Get("Anthropic-Version"); v == "" {
		t.Error("no anthropic-version header")
	}
	wantBody := jsonOf(t, `{
		"model": "claude-test",
		"max_tokens": 4096,
		"system": [{"type": "text", "text": "Be brief."}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "What time is it, and what is 6*7?"}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Checking."},
				{"type": "tool_use", "id": "toolu_a", "name": "clock", "input": {}},
				{"type": "tool_use", "id": "toolu_b", "name": "clock", "input": {}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_a", "is_error": false, "content": [{"type": "text", "text": "2026-01-02T03:04:05Z"}]},
				{"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": [{"type": "text", "text": "invalid arguments"}]}]}
		],
		"tools": [{"name": "calculator", "description": "Evaluates arithmetic.",
			"input_schema": {"type": "object", "properties": {"expression": {"type": "string", "description": "An arithmetic expression"}},
				"required": ["expression"], "additionalProperties": false}}]
	}`)
	if diff := cmp.Diff(wantBody, any(got.body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestAnthropicStructuredOutput(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{
		"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
		"content": [{"type": "text", "text": "{\"city\":\"Lisbon\",\"days\":3}"}],
		"stop_reason": "end_turn", "stop_sequence": null,
		"usage": {"input_tokens": 25, "output_tokens": 10}}`, nil)
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testKey, Model: "claude-test", MaxTokens: 512})
	type plan struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	schema, err := SchemaFor[plan]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), Request{
		Messages:       []Message{{Role: RoleUser, Text: "Plan a trip"}},
		ResponseFormat: &ResponseFormat{Name: "plan", Schema: schema},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Response{Text: `{"city":"Lisbon","days":3}`, Usage: Usage{InputTokens: 25, OutputTokens: 10}, StopReason: StopEnd, Model: "claude-test"}, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	wantBody := jsonOf(t, `{
		"model": "claude-test",
		"max_tokens": 512,
		"messages": [{"role": "user", "content": [{"type": "text", "text": "Plan a trip"}]}],
		"output_config": {"format": {"type": "json_schema",
			"schema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
				"required": ["city", "days"], "additionalProperties": false}}}
	}`)
	if diff := cmp.Diff(wantBody, any((*reqs)[0].body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		headers   map[string]string
		want      APIError
		retryable bool
	}{
		{
			name:      "429 with retry-after",
			status:    429,
			body:      `{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}`,
			headers:   map[string]string{"retry-after": "12"},
			want:      APIError{Provider: "anthropic", StatusCode: 429, Message: "Number of request tokens has exceeded your per-minute rate limit", RetryAfter: 12 * time.Second},
			retryable: true,
		},
		{
			name:      "529 overloaded",
			status:    529,
			body:      `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`,
			want:      APIError{Provider: "anthropic", StatusCode: 529, Message: "Overloaded"},
			retryable: true,
		},
		{
			name:   "400",
			status: 400,
			body:   `{"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}}`,
			want:   APIError{Provider: "anthropic", StatusCode: 400, Message: "max_tokens: Field required"},
		},
		{
			name:   "401 echoing the key",
			status: 401,
			body:   `{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key ` + testKey + `"}}`,
			want:   APIError{Provider: "anthropic", StatusCode: 401, Message: "invalid x-api-key [redacted]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := fakeServer(t, tt.status, tt.body, tt.headers)
			p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testKey})
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
			if len(*reqs) != 1 {
				t.Errorf("%d requests, want 1 (no client-side retries)", len(*reqs))
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		wantName  string
		wantModel string
		wantErr   error
	}{
		{name: "nothing", wantErr: ErrNotConfigured},
		{name: "ollama: base URL only", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "A2AFLOW_LLM_MODEL": "llama3.2"}, wantName: "openai", wantModel: "llama3.2"},
		{name: "openai key", env: map[string]string{"OPENAI_API_KEY": testKey}, wantName: "openai", wantModel: "gpt-4o-mini"},
		{name: "anthropic key", env: map[string]string{"ANTHROPIC_API_KEY": testKey}, wantName: "anthropic", wantModel: "claude-sonnet-4-5"},
		{name: "both: openai first", env: map[string]string{"ANTHROPIC_API_KEY": testKey, "OPENAI_API_KEY": testKey}, wantName: "openai", wantModel: "gpt-4o-mini"},
		{name: "both: chosen", env: map[string]string{"ANTHROPIC_API_KEY": testKey, "OPENAI_API_KEY": testKey, "A2AFLOW_LLM_PROVIDER": "anthropic"}, wantName: "anthropic", wantModel: "claude-sonnet-4-5"},
		{name: "chosen but missing", env: map[string]string{"A2AFLOW_LLM_PROVIDER": "anthropic", "OPENAI_API_KEY": testKey}, wantErr: ErrNotConfigured},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := fromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.wantName || p.Model() != tt.wantModel {
				t.Errorf("provider %s model %s, want %s %s", p.Name(), p.Model(), tt.wantName, tt.wantModel)
			}
		})
	}
	if _, err := fromEnv(func(k string) string { return map[string]string{"A2AFLOW_LLM_PROVIDER": "mistral"}[k] }); err == nil || errors.Is(err, ErrNotConfigured) {
		t.Errorf("unknown provider: err = %v, want a configuration error", err)
	}
}
