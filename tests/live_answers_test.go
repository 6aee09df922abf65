package tests

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/internal/llmtest"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// liveAnswerText is what the streaming fake answers, a word per token.
const liveAnswerText = "Streaming works: every token reaches the subscriber while the model is still writing the rest of its answer."

// liveFake is a streaming OpenAI-compatible endpoint (stream: true, server
// -sent chat.completion.chunk events, internal/llmtest) for the assistant:
// it answers every request with liveAnswerText, one word per chunk, after
// ttft and with gap between words. A message containing "cut" has its
// first attempt's stream cut mid-answer (the activity is retried). It
// refuses requests that do not ask to stream.
type liveFake struct {
	*httptest.Server
	ttft, gap time.Duration
	mu        sync.Mutex
	attempts  map[string]int
	received  map[string]time.Time // when the last request for a message came
	first     map[string]time.Time // when its answer's first token was written
}

func newLiveFake(t testing.TB, ttft, gap time.Duration) *liveFake {
	f := &liveFake{ttft: ttft, gap: gap, attempts: map[string]int{}, received: map[string]time.Time{}, first: map[string]time.Time{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		req, ok := readChat(w, r)
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
		sc := llmtest.Script{Model: req.Model, TTFT: f.ttft, Gap: f.gap, Pieces: strings.SplitAfter(liveAnswerText, " "),
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

// times returns when the last request for user came and when its answer's
// first token was written.
func (f *liveFake) times(user string) (received, first time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received[user], f.first[user]
}

// useLiveFake points the processes started after it at f.
func useLiveFake(t testing.TB, f *liveFake) {
	useOpenAI(t, f.URL, e2eKey, "fake-model")
}

// liveRun is what a client saw of a stream: the live answer's chunks,
// joined as A2A joins artifact chunks (append false starts the text over),
// and the task's final message.
type liveRun struct {
	taskID       a2a.TaskID
	start        time.Time
	firstLive    time.Time
	chunks       int
	beforeFinal  int // live chunks before the final status event
	restarts     int // chunks with append false after text was shown
	firstChunk   *a2a.TaskArtifactUpdateEvent
	text         string
	last         bool
	final        string
	state        a2a.TaskState
	otherArtifts int
}

// collect reads a stream until it ends, or until stopAfter live chunks when
// stopAfter > 0.
func (r *liveRun) collect(t testing.TB, events iter.Seq2[a2a.Event, error], stopAfter int) {
	t.Helper()
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			r.taskID, r.state = e.ID, e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			r.taskID, r.state = e.TaskID, e.Status.State
			if e.Status.State.Terminal() {
				r.final = messageText(e.Status.Message)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if _, live := e.Metadata[wire.LiveMetadataKey]; !live {
				r.otherArtifts++
				continue
			}
			if r.chunks == 0 {
				r.firstLive, r.firstChunk = time.Now(), e
			}
			r.chunks++
			if r.final == "" {
				r.beforeFinal++
			}
			if !e.Append {
				if r.text != "" {
					r.restarts++
				}
				r.text = ""
			}
			for _, p := range e.Artifact.Parts {
				r.text += p.Text()
			}
			r.last = r.last || e.LastChunk
			if stopAfter > 0 && r.chunks >= stopAfter {
				return
			}
		}
	}
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var s string
	for _, p := range m.Parts {
		s += p.Text()
	}
	return s
}

// streamLive sends text to the assistant with SendStreamingMessage and
// reads the stream (see collect).
func streamLive(t testing.TB, ctx context.Context, c *a2aclient.Client, text string, stopAfter int) *liveRun {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	r := &liveRun{start: time.Now()}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.collect(t, c.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: msg}), stopAfter)
	return r
}

// checkAnswered checks a whole stream: live chunks came before the final
// message and joined into it, once, and the task keeps the answer once, as
// its message, with no live artifact.
func checkAnswered(t *testing.T, ctx context.Context, c *a2aclient.Client, r *liveRun, wantRestarts int) {
	t.Helper()
	if r.state != a2a.TaskStateCompleted || r.final != liveAnswerText {
		t.Fatalf("task %s ended %s with %q", r.taskID, r.state, r.final)
	}
	if r.beforeFinal < 5 {
		t.Errorf("%d live chunks before the final message, want the answer's words as they come", r.beforeFinal)
	}
	if r.text != liveAnswerText || !r.last {
		t.Errorf("live answer joined = %q (last chunk seen: %v), want %q once", r.text, r.last, liveAnswerText)
	}
	if r.restarts != wantRestarts {
		t.Errorf("%d restarts of the live answer, want %d", r.restarts, wantRestarts)
	}
	if r.otherArtifts != 0 {
		t.Errorf("%d other artifact events", r.otherArtifts)
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: r.taskID})
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, m := range task.History {
		if m.Role == a2a.MessageRoleAgent && messageText(m) == liveAnswerText {
			answers++
		}
		if strings.Contains(messageText(m), "Streaming works") && messageText(m) != liveAnswerText {
			t.Errorf("history holds part of the answer: %q", messageText(m))
		}
	}
	if answers != 1 || len(task.Artifacts) != 0 {
		t.Errorf("history has the answer %d times and %d artifacts; want it once, as the final message, and none", answers, len(task.Artifacts))
	}
}

// TestLiveAnswers: the assistant's answer, streamed by a fake OpenAI
// endpoint a word every 40 ms, reaches a2a-go clients as it is written, as
// chunks of a live-answer artifact, before the task's final message, over
// SSE (JSON-RPC, HTTP+JSON) and gRPC, with `serve` and with `api` + `worker` (the
// deltas crossing processes over the Unix sockets beside their SQLite
// database, or PostgreSQL NOTIFY). The history keeps the answer once. A call whose stream is cut
// mid-answer is retried and its answer starts over (append false): joined
// as A2A joins chunks, the client has the answer once. A client that drops
// its stream mid-answer and resubscribes gets the text so far in one chunk,
// then the rest. `a2aflow send --stream` and the REPL print the answer as
// it is written, once.
func TestLiveAnswers(t *testing.T) {
	fake := newLiveFake(t, 100*time.Millisecond, 40*time.Millisecond)
	useLiveFake(t, fake)
	for _, d := range []struct {
		name  string
		start func(t *testing.T) (apiURL string)
	}{
		{"serve", func(t *testing.T) string {
			return startServe(t, t.TempDir(), "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t))).APIURL
		}},
		{"api+worker", func(t *testing.T) string {
			d := startSplitDB(t, 1, true, sqliteHintsDB(t))
			d.apis[0].waitOutput("Hints        Unix sockets in ", time.Second)
			return d.APIURLs[0]
		}},
		{"api+worker+postgres", func(t *testing.T) string {
			d := startSplitDB(t, 1, true, testPostgres(t))
			d.apis[0].waitOutput("Hints        PostgreSQL LISTEN a2aflow_task_events", time.Second)
			return d.APIURLs[0]
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			url := d.start(t) + "/agents/assistant"
			ctx := testContext(t)
			for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC} {
				t.Run(string(binding), func(t *testing.T) {
					c := clientsOver(t, ctx, url, 1, binding, 4)[0]
					r := streamLive(t, ctx, c, d.name+" "+string(binding)+": tell me about streaming", 0)
					checkAnswered(t, ctx, c, r, 0)
					t.Logf("first live chunk %v after the send, %d chunks", r.firstLive.Sub(r.start).Round(time.Millisecond), r.chunks)
				})
			}
			c := clientsOver(t, ctx, url, 1, a2a.TransportProtocolJSONRPC, 4)[0]
			t.Run("retry", func(t *testing.T) {
				r := streamLive(t, ctx, c, d.name+": cut the first answer", 0)
				checkAnswered(t, ctx, c, r, 1)
			})
			t.Run("cli", func(t *testing.T) {
				// a2aflow send --stream prints the answer as it is written, on
				// one [answer] line, and does not repeat it with the status;
				// the REPL prints it as it is written too, once.
				r := runCLI(t, "send", "--agent", url, "--stream", d.name+": streaming in the terminal")
				wantRun(t, r, 0, "[answer] "+liveAnswerText+"\n[status] completed\n")
				if n := strings.Count(r.stdout, liveAnswerText); n != 1 {
					t.Errorf("the answer is printed %d times:\n%s", n, r.stdout)
				}
				out, errOut, code := runREPL(t, d.name+": streaming in the REPL\n:quit\n", "--agent", url, "--data-dir", t.TempDir())
				if code != 0 || !strings.Contains(out, "Agent: "+liveAnswerText+"\nTask ") || strings.Count(out, liveAnswerText) != 1 {
					t.Errorf("repl exit %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
			})
			t.Run("resubscribe", func(t *testing.T) {
				before := streamLive(t, ctx, c, d.name+": resubscribe mid-answer", 3)
				if before.chunks != 3 || before.final != "" {
					t.Fatalf("first stream: %d chunks, final %q", before.chunks, before.final)
				}
				time.Sleep(100 * time.Millisecond) // the answer goes on meanwhile
				r := &liveRun{start: time.Now(), taskID: before.taskID}
				r.collect(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: before.taskID}), 0)
				if r.firstChunk == nil || r.firstChunk.Append || !strings.HasPrefix(messageText(&a2a.Message{Parts: r.firstChunk.Artifact.Parts}), before.text) ||
					len(r.firstChunk.Artifact.Parts[0].Text()) <= len(before.text) {
					t.Fatalf("resubscribed stream's first live chunk %+v, want the text so far (more than %q), append false", r.firstChunk, before.text)
				}
				checkAnswered(t, ctx, c, r, 0)
			})
		})
	}
}
