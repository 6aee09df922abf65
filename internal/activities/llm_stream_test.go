package activities_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/llmtest"
	"github.com/a2aflow/a2aflow/llm"
)

// recordLive keeps the deltas it is given.
type recordLive struct {
	mu     sync.Mutex
	deltas []hints.Delta
}

func (r *recordLive) Live(d hints.Delta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deltas = append(r.deltas, d)
}

// TestCompleteChatStreams: with a Live notifier, CompleteChat streams the
// answer and sends each piece as a delta naming the task (the workflow
// ID), the call, the attempt and its offset, then one marking it done;
// the activity's result is the whole answer. A call with a ResponseFormat
// is not streamed (its text is JSON for the program).
func TestCompleteChatStreams(t *testing.T) {
	var streamed []bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		stream := strings.Contains(string(body), `"stream":true`)
		streamed = append(streamed, stream)
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","logprobs":null,
				"message":{"role":"assistant","content":"{\"ok\":true}","refusal":null}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
			return
		}
		llmtest.WriteOpenAI(w, llmtest.Script{Model: "m", Pieces: []string{"One ", "two ", "three."}})
	}))
	defer srv.Close()
	live := &recordLive{}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.LLM{Provider: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m"}), Live: live})
	v, err := env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "count"}}})
	if err != nil {
		t.Fatal(err)
	}
	var resp llm.Response
	if err := v.Get(&resp); err != nil || resp.Text != "One two three." {
		t.Fatalf("response %+v, %v", resp, err)
	}
	if len(live.deltas) != 4 {
		t.Fatalf("deltas %+v, want 3 pieces and done", live.deltas)
	}
	offset := 0
	for i, d := range live.deltas {
		if d.Task == "" || d.Call != live.deltas[0].Call || d.Attempt != 1 || d.Offset != offset || d.Done != (i == 3) {
			t.Errorf("delta %d: %+v (offset want %d)", i, d, offset)
		}
		offset += len(d.Text)
	}
	// Structured output is not streamed.
	live.deltas = nil
	_, err = env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "json"}},
		ResponseFormat: &llm.ResponseFormat{Name: "x", Schema: []byte(`{"type":"object"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(live.deltas) != 0 || len(streamed) != 2 || !streamed[0] || streamed[1] {
		t.Errorf("structured call: deltas %+v, streamed %v", live.deltas, streamed)
	}
}
