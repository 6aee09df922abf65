package fakes

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/llmtest"
)

// LiveAnswerText is what the streaming fake answers, a word per token.
const LiveAnswerText = "Streaming works: every token reaches the subscriber while the model is still writing the rest of its answer."

// LiveModel is a streaming OpenAI-compatible endpoint (stream: true, server
// -sent chat.completion.chunk events, internal/llmtest) for the assistant:
// it answers every request with LiveAnswerText, one word per chunk, after
// ttft and with gap between words. A message containing "cut" has its
// first attempt's stream cut mid-answer (the activity is retried). It
// refuses requests that do not ask to stream.
type LiveModel struct {
	*httptest.Server
	ttft, gap time.Duration
	mu        sync.Mutex
	attempts  map[string]int
	received  map[string]time.Time // when the last request for a message came
	first     map[string]time.Time // when its answer's first token was written
}

// NewLiveModel starts a LiveModel, closed when t ends.
func NewLiveModel(t testing.TB, ttft, gap time.Duration) *LiveModel {
	f := &LiveModel{ttft: ttft, gap: gap, attempts: map[string]int{}, received: map[string]time.Time{}, first: map[string]time.Time{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		req, ok := ReadChat(w, r)
		if !ok {
			return
		}
		if !req.Stream {
			http.Error(w, `{"error":{"message":"this fake only streams","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		var user string
		for _, m := range req.Messages {
			if m.Role == "user" {
				user = fmt.Sprint(m.Content)
			}
		}
		f.mu.Lock()
		f.attempts[user]++
		attempt := f.attempts[user]
		f.received[user] = now
		f.mu.Unlock()
		sc := llmtest.Script{Model: req.Model, TTFT: f.ttft, Gap: f.gap, Pieces: strings.SplitAfter(LiveAnswerText, " "),
			InputTokens: 40, OutputTokens: 20, FirstToken: func() {
				f.mu.Lock()
				f.first[user] = time.Now()
				f.mu.Unlock()
			}}
		if strings.Contains(user, "cut") && attempt == 1 {
			sc.CutAfter = 5
		}
		llmtest.WriteOpenAI(w, sc)
	}))
	t.Cleanup(f.Close)
	return f
}

// Times returns when the last request for user came and when its answer's
// first token was written.
func (f *LiveModel) Times(user string) (received, first time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received[user], f.first[user]
}

// UseLiveModel points the processes started after it at f.
func UseLiveModel(t testing.TB, f *LiveModel) {
	UseOpenAI(t, f.URL, OpenAIKey, "fake-model")
}
