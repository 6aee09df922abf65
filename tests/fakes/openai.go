package fakes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/llmtest"
)

// The fake models of the tests are OpenAI Chat Completions endpoints
// (httptest servers) that decide each answer from the request alone, as a
// real model does. What they share is here: reading a request, writing an
// answer, and pointing a2aflow at them.

// OpenAIKey is the API key the tests give a2aflow for the fake models.
const OpenAIKey = "sk-e2e-secret-0123456789"

// ChatMessage is one message of a Chat Completions request.
type ChatMessage struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
}

// ChatRequest is what the fakes read of a Chat Completions request.
type ChatRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []ChatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"function"`
	} `json:"tools"`
	// Format is response_format: set when a2aflow asks for a JSON answer
	// of a schema (RoutingDecision, FollowUpDecision).
	Format *struct {
		Schema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// Last is the request's last message, the one to answer.
func (req ChatRequest) Last() ChatMessage { return req.Messages[len(req.Messages)-1] }

// ReadChat decodes r's body as a Chat Completions request of at least one
// message; otherwise it answers 400, as OpenAI does, and returns false.
func ReadChat(w http.ResponseWriter, r *http.Request) (ChatRequest, bool) {
	var req ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return req, false
	}
	return req, true
}

// TextMessage is an assistant message that says text.
func TextMessage(text string) string {
	raw, _ := json.Marshal(map[string]any{"role": "assistant", "content": text, "refusal": nil})
	return string(raw)
}

// ToolCallMessage is an assistant message that calls the tool name with
// args (JSON), the call's ID id.
func ToolCallMessage(id, name, args string) string {
	raw, _ := json.Marshal(map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []any{
		map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}},
	}})
	return string(raw)
}

// WriteChat answers a Chat Completions request with message (an assistant
// message's JSON, as TextMessage and ToolCallMessage write it): in the
// streaming wire format, a word a chunk and the tool calls' arguments in
// deltas, when the request asked to stream (stream: true), else whole.
func WriteChat(w http.ResponseWriter, stream bool, id, model, message string, in, out int64) {
	if stream {
		var m struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		_ = json.Unmarshal([]byte(message), &m)
		sc := llmtest.Script{Model: model, InputTokens: in, OutputTokens: out}
		if m.Content != nil && *m.Content != "" {
			sc.Pieces = strings.SplitAfter(*m.Content, " ")
		}
		for _, tc := range m.ToolCalls {
			sc.ToolCalls = append(sc.ToolCalls, llmtest.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		llmtest.WriteOpenAI(w, sc)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"object":"chat.completion","created":1700000000,"model":%q,
		"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":%s}],
		"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, id, model, message, in, out, in+out)
}

// UseOpenAI points the a2aflow processes the test starts after it (they
// inherit its environment) at the OpenAI-compatible endpoint baseURL with
// key, and at model as the default model unless it is "". The provider
// setting and the Anthropic key are cleared: whatever the developer's
// environment holds, OpenAI's is the provider a2aflow finds.
func UseOpenAI(t testing.TB, baseURL, key, model string) {
	t.Setenv("OPENAI_BASE_URL", baseURL+"/v1")
	t.Setenv("OPENAI_API_KEY", key)
	if model != "" {
		t.Setenv("A2AFLOW_LLM_MODEL", model)
	}
	t.Setenv("A2AFLOW_LLM_PROVIDER", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
}
