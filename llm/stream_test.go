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

	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/llmtest"
)

// streamingFake answers every request with sc in the wire format of kind
// ("openai" or "anthropic"), and records the request bodies.
func streamingFake(t *testing.T, kind string, sc llmtest.Script) (*httptest.Server, *[]map[string]any) {
	t.Helper()
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		body["path"], body["query"] = r.URL.Path, r.URL.RawQuery
		bodies = append(bodies, body)
		switch kind {
		case "openai":
			llmtest.WriteOpenAI(w, sc)
		case "gemini":
			llmtest.WriteGemini(w, sc)
		default:
			llmtest.WriteAnthropic(w, sc)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

func streamers(url string) map[string]Streamer {
	return map[string]Streamer{
		"openai":    NewOpenAI(OpenAIConfig{BaseURL: url + "/v1", APIKey: testKey, Model: "m"}),
		"anthropic": NewAnthropic(AnthropicConfig{BaseURL: url, APIKey: testKey, Model: "m"}),
		"gemini":    NewGemini(GeminiConfig{BaseURL: url, APIKey: testKey, Model: "m"}),
	}
}

// TestCompleteStream: every provider streams in its wire format; the text
// arrives piece by piece, and the tool calls, streamed as deltas of their
// arguments (Gemini's whole), are assembled, with the usage and the stop
// reason.
func TestCompleteStream(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic", "gemini"} {
		t.Run(kind, func(t *testing.T) {
			sc := llmtest.Script{Model: "m", Pieces: []string{"Let me ", "look ", "that up."},
				ToolCalls: []llmtest.ToolCall{
					{ID: "call_1", Name: "calculator", Arguments: `{"expression":"6*7"}`},
					{ID: "call_2", Name: "clock", Arguments: `{"zone":"UTC"}`},
				}, InputTokens: 31, OutputTokens: 12}
			srv, bodies := streamingFake(t, kind, sc)
			var got []string
			resp, err := streamers(srv.URL)[kind].CompleteStream(context.Background(),
				Request{Messages: []Message{{Role: RoleUser, Text: "What is 6*7?"}}}, func(s string) { got = append(got, s) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sc.Pieces, got); diff != "" {
				t.Errorf("text pieces (-want +got):\n%s", diff)
			}
			want := Response{Text: "Let me look that up.", StopReason: StopToolUse, Model: "m",
				Usage: Usage{InputTokens: 31, OutputTokens: 12},
				ToolCalls: []ToolCall{{ID: "call_1", Name: "calculator", Arguments: `{"expression":"6*7"}`},
					{ID: "call_2", Name: "clock", Arguments: `{"zone":"UTC"}`}}}
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			body := (*bodies)[0]
			if kind == "gemini" {
				if body["path"] != "/v1beta/models/m:streamGenerateContent" || body["query"] != "alt=sse" {
					t.Errorf("request %v?%v, want streamGenerateContent with alt=sse", body["path"], body["query"])
				}
				return
			}
			if body["stream"] != true {
				t.Errorf("request stream = %v, want true", body["stream"])
			}
			if kind == "openai" {
				if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
					t.Errorf("request stream_options = %v, want include_usage", body["stream_options"])
				}
			}
		})
	}
}

// TestCompleteStreamCut: a stream cut mid-answer is an error worth
// retrying (not an APIError, not a short answer).
func TestCompleteStreamCut(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic", "gemini"} {
		t.Run(kind, func(t *testing.T) {
			srv, _ := streamingFake(t, kind, llmtest.Script{Model: "m", Pieces: []string{"a", "b", "c"}, CutAfter: 2})
			var got strings.Builder
			_, err := streamers(srv.URL)[kind].CompleteStream(context.Background(),
				Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(s string) { got.WriteString(s) })
			var apiErr *APIError
			if err == nil || errors.As(err, &apiErr) || errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want a retryable stream failure", err)
			}
			if got.String() != "ab" {
				t.Errorf("text before the cut = %q, want ab", got.String())
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error holds the key: %v", err)
			}
		})
	}
}

// TestCompleteStreamWholeAnswer: a server that answers with one JSON
// document despite stream: true is read whole, its text given at once.
func TestCompleteStreamWholeAnswer(t *testing.T) {
	srv, _ := fakeServer(t, 200, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m",
		"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"Hello.","refusal":null}}],
		"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, nil)
	var got []string
	resp, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m"}).CompleteStream(context.Background(),
		Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(s string) { got = append(got, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello." || resp.StopReason != StopEnd || resp.Usage.OutputTokens != 2 || len(got) != 1 || got[0] != "Hello." {
		t.Errorf("resp = %+v, pieces %q", resp, got)
	}
	srv2, _ := fakeServer(t, 200, `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"end_turn",
		"content":[{"type":"text","text":"Hi there."}],"usage":{"input_tokens":3,"output_tokens":2}}`, nil)
	got = nil
	resp, err = NewAnthropic(AnthropicConfig{BaseURL: srv2.URL, APIKey: testKey}).CompleteStream(context.Background(),
		Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(s string) { got = append(got, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hi there." || resp.StopReason != StopEnd || len(got) != 1 {
		t.Errorf("resp = %+v, pieces %q", resp, got)
	}
}

// TestCompleteStreamErrors: an HTTP error status is the same APIError as
// Complete's, without the key.
func TestCompleteStreamErrors(t *testing.T) {
	srv, _ := fakeServer(t, 429, `{"error":{"message":"slow down `+testKey+`","type":"rate_limit"}}`, map[string]string{"Retry-After": "3"})
	_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testKey}).CompleteStream(context.Background(),
		Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(string) {})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter.Seconds() != 3 || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err = %#v", err)
	}
	srv2, _ := fakeServer(t, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, nil)
	_, err = NewAnthropic(AnthropicConfig{BaseURL: srv2.URL, APIKey: testKey}).CompleteStream(context.Background(),
		Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(string) {})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Message != "bad" {
		t.Fatalf("err = %#v", err)
	}
}
