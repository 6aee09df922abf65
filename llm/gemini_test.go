package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGeminiComplete: a conversation with a system prompt, a tool call and
// its result, and tools goes out as Gemini's generateContent request
// (systemInstruction, user/model contents, functionCall and
// functionResponse parts paired by name, functionDeclarations with their
// JSON schema, the key in x-goog-api-key); two function calls of one
// answer, without IDs, come back as two tool calls, with the usage (the
// thinking tokens counted as output).
func TestGeminiComplete(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{"candidates":[{"content":{"role":"model","parts":[
		{"text":"Checking both.","thought":false},{"text":"(thinking)","thought":true},
		{"functionCall":{"name":"clock","args":{"zone":"UTC"}}},{"functionCall":{"name":"calculator","args":{"expression":"6*7"}}}]},
		"finishReason":"STOP","index":0}],
		"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":9,"thoughtsTokenCount":3,"cachedContentTokenCount":8},
		"modelVersion":"gemini-2.5-flash-001"}`, nil)
	p := NewGemini(GeminiConfig{BaseURL: srv.URL, APIKey: testKey, Model: "gemini-2.5-flash"})
	resp, err := p.Complete(context.Background(), Request{
		System: "Be brief.",
		Messages: []Message{
			{Role: RoleUser, Text: "Time and 6*7?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "gemini-call-1", Name: "clock", Arguments: `{"zone":"UTC"}`}}},
			{Role: RoleTool, ToolCallID: "gemini-call-1", Text: `{"time":"12:00"}`},
		},
		Tools: []ToolSpec{{Name: "clock", Description: "The time.", Parameters: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"}}}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{Text: "Checking both.", StopReason: StopToolUse, Model: "gemini-2.5-flash-001",
		Usage: Usage{InputTokens: 40, CachedInputTokens: 8, OutputTokens: 12},
		ToolCalls: []ToolCall{{ID: "gemini-call-1", Name: "clock", Arguments: `{"zone":"UTC"}`},
			{ID: "gemini-call-2", Name: "calculator", Arguments: `{"expression":"6*7"}`}}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got := (*reqs)[0]
	if got.path != "/v1beta/models/gemini-2.5-flash:generateContent" || got.header.Get("X-Goog-Api-Key") != testKey {
		t.Errorf("request to %s with key %q", got.path, got.header.Get("X-Goog-Api-Key"))
	}
	wantBody := jsonOf(t, `{
		"contents":[
			{"role":"user","parts":[{"text":"Time and 6*7?"}]},
			{"role":"model","parts":[{"functionCall":{"name":"clock","args":{"zone":"UTC"}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"clock","response":{"output":{"time":"12:00"}}}}]}],
		"systemInstruction":{"role":"user","parts":[{"text":"Be brief."}]},
		"generationConfig":{},
		"tools":[{"functionDeclarations":[{"name":"clock","description":"The time.",
			"parametersJsonSchema":{"type":"object","properties":{"zone":{"type":"string"}}}}]}]}`)
	if diff := cmp.Diff(wantBody, any(got.body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestGeminiStructuredOutput: a ResponseFormat is Gemini's JSON mode with
// the schema (responseMimeType, responseJsonSchema), and a limit its
// maxOutputTokens.
func TestGeminiStructuredOutput(t *testing.T) {
	srv, reqs := fakeServer(t, 200, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"city\":\"Lisbon\"}"}]},"finishReason":"STOP"}],
		"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4}}`, nil)
	resp, err := NewGemini(GeminiConfig{BaseURL: srv.URL, APIKey: testKey}).Complete(context.Background(), Request{
		Messages:       []Message{{Role: RoleUser, Text: "Where?"}},
		ResponseFormat: &ResponseFormat{Name: "Place", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		MaxTokens:      100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"city":"Lisbon"}` || resp.StopReason != StopEnd || resp.Model != "gemini-2.5-flash" {
		t.Errorf("resp = %+v", resp)
	}
	cfg := (*reqs)[0].body["generationConfig"]
	want := jsonOf(t, `{"responseMimeType":"application/json","maxOutputTokens":100,
		"responseJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`)
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("generationConfig (-want +got):\n%s", diff)
	}
}

// TestGeminiErrors: an HTTP error is an APIError with the provider's
// message, without the key, and with the Retry-After of a 429; a bad
// request is not retryable.
func TestGeminiErrors(t *testing.T) {
	srv, _ := fakeServer(t, 429, `{"error":{"code":429,"message":"Resource exhausted for `+testKey+`","status":"RESOURCE_EXHAUSTED"}}`,
		map[string]string{"Retry-After": "7"})
	_, err := NewGemini(GeminiConfig{BaseURL: srv.URL, APIKey: testKey}).Complete(context.Background(),
		Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter != 7*time.Second || !apiErr.Retryable() ||
		strings.Contains(err.Error(), testKey) || apiErr.Provider != "gemini" {
		t.Fatalf("err = %#v", err)
	}
	srv2, _ := fakeServer(t, 400, `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}`, nil)
	_, err = NewGemini(GeminiConfig{BaseURL: srv2.URL, APIKey: testKey}).CompleteStream(context.Background(),
		Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(string) {})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Retryable() || apiErr.Message != "API key not valid." {
		t.Fatalf("stream err = %#v", err)
	}
}

// TestGeminiFromEnv: GEMINI_API_KEY or GOOGLE_API_KEY configure Gemini
// (GOOGLE_API_KEY wins, as in Google's SDKs), chosen by
// A2AFLOW_LLM_PROVIDER=gemini or when it is the only one.
func TestGeminiFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	p, err := fromEnv(env(map[string]string{"GEMINI_API_KEY": testKey, "A2AFLOW_LLM_MODEL": "gemini-2.5-pro"}))
	if err != nil || p.Name() != "gemini" || p.Model() != "gemini-2.5-pro" {
		t.Fatalf("GEMINI_API_KEY alone: %v, %v", p, err)
	}
	p, err = fromEnv(env(map[string]string{"OPENAI_API_KEY": testKey, "GOOGLE_API_KEY": "g-" + testKey, "A2AFLOW_LLM_PROVIDER": "gemini"}))
	if err != nil || p.Name() != "gemini" || p.(*Gemini).apiKey != "g-"+testKey {
		t.Fatalf("chosen: %v, %v", p, err)
	}
	if _, err := fromEnv(env(map[string]string{"A2AFLOW_LLM_PROVIDER": "gemini", "OPENAI_API_KEY": testKey})); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("chosen but missing: %v", err)
	}
	if all := configuredProviders(env(map[string]string{"GOOGLE_API_KEY": testKey, "ANTHROPIC_API_KEY": testKey})); all["gemini"] == nil || all["anthropic"] == nil {
		t.Fatalf("configured providers: %v", all)
	}
}
