package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/rs/zerolog"

	"github.com/a2aflow/a2aflow/internal/llmtest"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// Faults are injected by Toxiproxy (github.com/Shopify/toxiproxy/v2), used
// as a Go library: its proxies and toxics run inside the test process, on
// loopback, with no toxiproxy-server binary to install and no HTTP API to
// drive. It is the proxy that Temporal's and others' fault tests use, it
// speaks plain TCP (so it sits under HTTP/1.1, SSE and gRPC alike), and it
// changes a link's faults on connections already open, which is what a
// fault mid-stream needs. The test adds and removes toxics itself, at the
// moment the workload reaches the point to break.

// faultProxy is one Toxiproxy proxy in front of upstream, on a loopback
// port of its own, stopped when t ends.
type faultProxy struct {
	t     testing.TB
	proxy *toxiproxy.Proxy
}

// newFaultProxy starts a proxy named name to upstream (host:port).
func newFaultProxy(t testing.TB, name, upstream string) *faultProxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	if err := srv.Collection.Add(p, true); err != nil {
		t.Fatalf("toxiproxy %s: %v", name, err)
	}
	t.Cleanup(p.Stop)
	return &faultProxy{t: t, proxy: p}
}

// Addr is where the proxy listens: host:port.
func (f *faultProxy) Addr() string { return f.proxy.Listen }

// URL is the proxy as an http URL.
func (f *faultProxy) URL() string { return "http://" + f.proxy.Listen }

// add adds the toxic typ named name on stream ("upstream", the requests,
// or "downstream", the answers) with attrs (JSON), on every connection,
// those open included.
func (f *faultProxy) add(name, typ, stream, attrs string) {
	f.t.Helper()
	body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, typ, stream, attrs)
	if _, err := f.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		f.t.Errorf("toxic %s on %s: %v", name, f.proxy.Name, err)
	}
}

// remove removes the toxic name.
func (f *faultProxy) remove(name string) {
	if err := f.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
		f.t.Errorf("remove toxic %s from %s: %v", name, f.proxy.Name, err)
	}
}

// faultModel is a streaming OpenAI-compatible model that answers every
// streamed request with fakes.LiveAnswerText, a word every 40 ms, counts
// the requests of each user message (the attempts of its call), and tells
// whoever waits on started(user, attempt) when that attempt's first token
// is written. A request for a JSON answer (the router's follow-up decision)
// gets NEED_HUMAN_INPUT, whole.
type faultModel struct {
	*httptest.Server
	mu       sync.Mutex
	attempts map[string]int
	started  map[string]chan struct{} // user + "#" + attempt
}

func newFaultModel(t *testing.T) *faultModel {
	m := &faultModel{attempts: map[string]int{}, started: map[string]chan struct{}{}}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := fakes.ReadChat(w, r)
		if !ok {
			return
		}
		if req.Format != nil || !req.Stream {
			fakes.WriteChat(w, false, "chatcmpl-faults", req.Model, fakes.TextMessage(`{"decision":"NEED_HUMAN_INPUT","answer":""}`), 10, 5)
			return
		}
		var user string
		for _, msg := range req.Messages {
			if msg.Role == "user" {
				user = fmt.Sprint(msg.Content)
			}
		}
		m.mu.Lock()
		m.attempts[user]++
		first := m.signal(user, m.attempts[user])
		m.mu.Unlock()
		llmtest.WriteOpenAI(w, llmtest.Script{Model: req.Model, TTFT: 50 * time.Millisecond, Gap: 40 * time.Millisecond,
			Pieces: strings.SplitAfter(fakes.LiveAnswerText, " "), InputTokens: 40, OutputTokens: 20,
			FirstToken: func() { close(first) }})
	}))
	t.Cleanup(m.Close)
	return m
}

// signal is the channel closed at attempt's first token; m.mu is held.
func (m *faultModel) signal(user string, attempt int) chan struct{} {
	key := fmt.Sprintf("%s#%d", user, attempt)
	if m.started[key] == nil {
		m.started[key] = make(chan struct{})
	}
	return m.started[key]
}

// firstToken returns a channel closed when the first token of attempt of
// user's call is written.
func (m *faultModel) firstToken(user string, attempt int) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.signal(user, attempt)
}

func (m *faultModel) count(user string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.attempts[user]
}

// usageCalls is GET /usage?by=task: each task's counted LLM calls.
func usageCalls(t *testing.T, apiURL string) map[string]int64 {
	t.Helper()
	var usage struct {
		Totals []struct {
			Key   string
			Calls int64
		}
	}
	if status := getJSON(t, apiURL+"/usage?by=task", &usage); status != http.StatusOK {
		t.Fatalf("GET /usage: HTTP %d", status)
	}
	out := map[string]int64{}
	for _, row := range usage.Totals {
		out[row.Key] = row.Calls
	}
	return out
}

// TestFaults injects network faults with Toxiproxy between a2aflow's parts
// while a workload runs, and checks what each operation became:
//
//   - llm: the worker ↔ LLM provider link (a streaming OpenAI fake) with
//     latency and jitter (100 ms to 1.9 s a chunk), a reset mid-stream and
//     a half-open connection (data stops, the connection closes 5 s later,
//     as a middlebox's idle timeout does): every task completes, its live
//     answer joins into the model's text, the final message is that text,
//     and GET /usage counts each call once however many attempts it took.
//   - delegation: the worker ↔ remote A2A agent link, the reply to a
//     delegation's sends lost to a reset: the delegation completes once.
//   - temporal: the API ↔ Temporal frontend and worker ↔ frontend links of
//     a split deployment partitioned for 5 s while clients send the travel
//     agent's messages, retrying on Unavailable with the same message ID as
//     a real client does: every task ends, each message ID is in its
//     task's history once.
func TestFaults(t *testing.T) {
	model := newFaultModel(t)
	llmProxy := newFaultProxy(t, "llm", strings.TrimPrefix(model.URL, "http://"))
	fakes.UseOpenAI(t, llmProxy.URL(), fakes.OpenAIKey, "fake-model")
	ext := &fakes.ExtAgent{}
	extProxy, extHook := serveExtBehind(t, ext)
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "ext", extProxy.URL())
	// serve's gRPC listener sits behind a proxy its cards name.
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	grpcProxy := newFaultProxy(t, "grpc", grpcAddr)
	s := harness.StartServe(t, dataDir, "--delegation-retry-budget", "30s",
		"--push-allow-hosts", "loopback", "--push-max-retry-interval", "1s",
		"--grpc-addr", grpcAddr, "--grpc-public-addr", grpcProxy.Addr())
	ctx := harness.Context(t)

	t.Run("llm", func(t *testing.T) { faultsLLM(t, ctx, s.APIURL, model, llmProxy) })
	t.Run("delegation", func(t *testing.T) { faultsDelegation(t, ctx, s.APIURL, ext, extProxy, extHook) })
	t.Run("stream", func(t *testing.T) { faultsStream(t, ctx, s.APIURL, model, llmProxy) })
	t.Run("grpc-stream", func(t *testing.T) { faultsGRPCStream(t, ctx, s.APIURL, grpcProxy, model, llmProxy) })
	t.Run("push", func(t *testing.T) { faultsPush(t, ctx, s.APIURL) })
	t.Run("push-slow-close", func(t *testing.T) { faultsPushSlowClose(t, ctx, s.APIURL) })
	t.Run("mcp", faultsMCP)
	t.Run("temporal", faultsTemporal)
	t.Run("mixed", faultsMixed)
	t.Run("disk", faultsDisk)
}

// faultsLLM runs the assistant's streamed answers through llmProxy's faults.
func faultsLLM(t *testing.T, ctx context.Context, apiURL string, model *faultModel, proxy *faultProxy) {
	c := harness.ClientsOver(t, ctx, apiURL+"/agents/assistant", 1, a2a.TransportProtocolJSONRPC, 4)[0]
	type run struct {
		text      string
		attempts  int // the model's requests for it
		restarts  int // live answers started over
		fault     func(text string)
		sawAnswer *harness.LiveRun
	}
	breakAt := func(typ, attrs string) func(string) {
		return func(text string) {
			// At the first attempt's first token, mid-stream, the answers'
			// direction breaks; the toxic goes before the retry, 2 s later.
			go func() {
				select {
				case <-model.firstToken(text, 1):
				case <-ctx.Done():
					return
				}
				time.Sleep(150 * time.Millisecond)
				proxy.add("break", typ, "downstream", attrs)
				time.Sleep(time.Duration(faultHold(typ)) * time.Millisecond)
				proxy.remove("break")
			}()
		}
	}
	runs := []*run{
		{text: "latency one: tell me about streaming", attempts: 1},
		{text: "latency two: tell me about streaming", attempts: 1},
		{text: "reset: tell me about streaming", attempts: 2, restarts: 1, fault: breakAt("reset_peer", `{"timeout":0}`)},
		{text: "half-open: tell me about streaming", attempts: 2, restarts: 1, fault: breakAt("timeout", `{"timeout":5000}`)},
	}
	proxy.add("jitter", "latency", "downstream", `{"latency":1000,"jitter":900}`)
	for _, r := range runs[:2] {
		began := time.Now()
		r.sawAnswer = harness.StreamLive(t, ctx, c, r.text, 0)
		t.Logf("%q under latency 100 ms-1.9 s: answered in %v", r.text, time.Since(began).Round(time.Millisecond))
	}
	proxy.remove("jitter")
	for _, r := range runs[2:] {
		began := time.Now()
		r.fault(r.text)
		r.sawAnswer = harness.StreamLive(t, ctx, c, r.text, 0)
		t.Logf("%q: answered in %v", r.text, time.Since(began).Round(time.Millisecond))
	}
	calls := usageCalls(t, apiURL)
	for _, r := range runs {
		a := r.sawAnswer
		if a.State != a2a.TaskStateCompleted || a.Final != fakes.LiveAnswerText {
			t.Errorf("%q: task %s ended %s with %q, want completed with the model's text", r.text, a.TaskID, a.State, a.Final)
		}
		if a.Text != fakes.LiveAnswerText || !a.Last || a.Restarts != r.restarts {
			t.Errorf("%q: live answer joined %q (last chunk %v, %d restarts), want the model's text, %d restarts", r.text, a.Text, a.Last, a.Restarts, r.restarts)
		}
		if n := model.count(r.text); n != r.attempts {
			t.Errorf("%q: the model got %d requests, want %d (the fault did not hit, or hit twice)", r.text, n, r.attempts)
		}
		if calls[string(a.TaskID)] != 1 {
			t.Errorf("%q: GET /usage counts %d calls of task %s, want 1", r.text, calls[string(a.TaskID)], a.TaskID)
		}
	}
}

// faultHold is how long a fault that breaks a stream stays on the link, in
// ms: long enough to break the attempt's connection (a half-open one closes
// after its 5 s), gone before the activity's retry (its first backoff is
// 2 s).
func faultHold(typ string) int {
	if typ == "timeout" {
		return 5500
	}
	return 500
}

// extHook lets the test act when the remote agent gets a request whose body
// holds a word: before it is served.
type extHook struct {
	mu     sync.Mutex
	before map[string]func()
}

// on runs f (once) before the first request whose body contains word is
// served.
func (h *extHook) on(word string, f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before[word] = f
}

// serveExtBehind serves ext (a remote A2A agent that streams) behind a
// fault proxy, its card naming the proxy's address: every request of
// a2aflow to it crosses the proxy.
func serveExtBehind(t *testing.T, ext *fakes.ExtAgent) (*faultProxy, *extHook) {
	hook := &extHook{before: map[string]func(){}}
	var proxy *faultProxy
	inner := fakes.ExtCard(true, "").Handler(ext, func() string { return proxy.URL() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := readAllBody(r)
			var run func()
			hook.mu.Lock()
			for word, f := range hook.before {
				if err == nil && strings.Contains(body, word) {
					delete(hook.before, word)
					run = f
					break
				}
			}
			hook.mu.Unlock()
			if run != nil {
				run()
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	proxy = newFaultProxy(t, "ext", strings.TrimPrefix(srv.URL, "http://"))
	return proxy, hook
}

// faultsDelegation delegates to ext through its proxy, the reply to the
// first send (which starts the remote task) and to the answer (which
// completes it) lost to a reset: the remote did the work, a2aflow did not
// hear it.
func faultsDelegation(t *testing.T, ctx context.Context, apiURL string, ext *fakes.ExtAgent, proxy *faultProxy, hook *extHook) {
	c, _ := harness.NewClient(t, ctx, apiURL+"/agents/router")
	resetReply := func(name string) func() {
		return func() {
			// The toxic is on before the remote writes its reply: the
			// reply's first bytes reset the connection. It is gone before
			// the retry (the activity's backoff is 1 s).
			proxy.add(name, "reset_peer", "downstream", `{"timeout":0}`)
			time.AfterFunc(300*time.Millisecond, func() { proxy.remove(name) })
		}
	}
	hook.on("faults ask", resetReply("reset-send"))
	task := routerSend(t, ctx, c, "", a2a.NewTextPart("@ext faults ask"))
	harness.WantState(t, task, a2a.TaskStateInputRequired, "What is your name?")
	time.Sleep(400 * time.Millisecond) // the first toxic is gone
	hook.on("Grace", resetReply("reset-answer"))
	task = routerSend(t, ctx, c, task.ID, a2a.NewTextPart("Grace"))
	harness.WantState(t, task, a2a.TaskStateCompleted, "Greeted Grace")
	if len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "Hello, Grace" {
		t.Errorf("artifacts = %v, want the one greeting", task.Artifacts)
	}
	// The reply to the first send was lost: a2aflow cannot know the task it
	// started, and sends again with the same message ID. a2a-go's server
	// does not deduplicate message IDs, so it starts a second task (a
	// limit, in docs/operations.md#faults); one that does would start one.
	started := ext.Started(string(task.ID))
	if len(started) != 2 || started[0] != started[1] {
		t.Errorf("the remote agent started tasks for ours from messages %v, want the one message ID sent twice (the first reply lost)", started)
	}
	dels, _ := task.Metadata["a2aflow.delegations"].([]any)
	if len(dels) != 1 {
		t.Errorf("delegations = %v, want one", task.Metadata["a2aflow.delegations"])
	}
}

// partition is how long faultsTemporal cuts Temporal off: 5 s, or 60 s
// with A2AFLOW_FAULTS_LONG=1 (nightly-size: the subtest then takes about
// 80 s instead of 13).
func partition() time.Duration {
	if os.Getenv("A2AFLOW_FAULTS_LONG") == "1" {
		return time.Minute
	}
	return 5 * time.Second
}

// faultsTemporal partitions the API and the worker from Temporal's
// frontend for 5 s (or 60 s, partition) while clients drive travel tasks.
func faultsTemporal(t *testing.T) {
	d := startSplitBehind(t, t.TempDir(), nil, nil, nil)
	ctx := harness.Context(t)
	c := harness.ClientsOver(t, ctx, d.apiURL+"/agents/travel", 1, a2a.TransportProtocolJSONRPC, 8)[0]

	const tasks = 6
	ld := &partitionLoad{t: t, ctx: ctx, c: c, sent: map[a2a.TaskID][]string{}}
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Go(func() { ld.drive(i) })
	}
	time.Sleep(1500 * time.Millisecond)
	d.partition(t, partition())
	wg.Wait()
	ld.verify(tasks)
}

// partitionLoad drives travel tasks through a partition.
type partitionLoad struct {
	t    *testing.T
	ctx  context.Context
	c    *a2aclient.Client
	mu   sync.Mutex
	sent map[a2a.TaskID][]string // each task's message IDs
	done int                     // tasks completed
	// retries counts attempts that failed and were sent again; slowest is
	// the longest a message took, its retries included.
	retries int
	slowest time.Duration
}

// retryable says whether a client sends a request again: A2A's Unavailable
// (server error: JSON-RPC -32000, HTTP 503, gRPC UNAVAILABLE), an answer
// that says it is retryable, or no answer within the attempt's deadline or
// a broken connection.
func retryable(err error) bool {
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) && a2aErr.Details["retryable"] == true {
		return true
	}
	return errors.Is(err, a2a.ErrServerError) || errors.Is(err, context.DeadlineExceeded) ||
		!errors.As(err, &a2aErr) && !errors.Is(err, a2a.ErrInvalidParams) && !errors.Is(err, a2a.ErrTaskNotFound)
}

// send sends text as message msgID of task (new when "") until it is
// answered, retrying what retryable allows with the same message ID.
func (ld *partitionLoad) send(ctxID string, taskID a2a.TaskID, msgID, text string) (*a2a.Task, error) {
	began := time.Now()
	for attempt := 0; ; attempt++ {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		msg.ID, msg.ContextID, msg.TaskID = msgID, ctxID, taskID
		actx, cancel := context.WithTimeout(ld.ctx, 10*time.Second)
		res, err := ld.c.SendMessage(actx, &a2a.SendMessageRequest{Message: msg})
		cancel()
		if err == nil {
			task, ok := res.(*a2a.Task)
			if !ok {
				return nil, fmt.Errorf("message %s: SendMessage returned %T", msgID, res)
			}
			ld.mu.Lock()
			ld.retries += attempt
			ld.slowest = max(ld.slowest, time.Since(began))
			ld.mu.Unlock()
			return task, nil
		}
		if !retryable(err) || ld.ctx.Err() != nil || time.Since(began) > partition()+time.Minute {
			return nil, fmt.Errorf("message %s, attempt %d: %w", msgID, attempt+1, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// drive books a trip in four messages, 0.5 to 1.5 s apart.
func (ld *partitionLoad) drive(i int) {
	ctxID := fmt.Sprintf("faults-%d-%d", time.Now().UnixNano(), i)
	steps := []struct{ text, next string }{{"Book a flight", "Where to?"}, {"Lisbon", "On which date? (YYYY-MM-DD)"}, {"2026-12-24", "How many travellers?"}, {"2", ""}}
	var id a2a.TaskID
	for n, st := range steps {
		time.Sleep(time.Duration(500+(i*300+n*700)%1000) * time.Millisecond)
		msgID := fmt.Sprintf("%s-m%d", ctxID, n)
		task, err := ld.send(ctxID, id, msgID, st.text)
		if err != nil {
			ld.t.Errorf("task %d: %v", i, err)
			return
		}
		id = task.ID
		ld.mu.Lock()
		ld.sent[id] = append(ld.sent[id], msgID)
		ld.mu.Unlock()
		wantState := a2a.TaskStateInputRequired
		if st.next == "" {
			wantState = a2a.TaskStateCompleted
		}
		if task.Status.State != wantState || (st.next != "" && harness.StatusText(task) != st.next) {
			ld.t.Errorf("task %d after %q: %s %q, want %s %q", i, st.text, task.Status.State, harness.StatusText(task), wantState, st.next)
			return
		}
	}
	ld.mu.Lock()
	ld.done++
	ld.mu.Unlock()
}

// verify reads every task back: completed, each message ID it was sent in
// its history once.
func (ld *partitionLoad) verify(n int) {
	t := ld.t
	if ld.done != n || len(ld.sent) != n {
		t.Errorf("%d of %d tasks completed (%d started)", ld.done, n, len(ld.sent))
	}
	for id, msgIDs := range ld.sent {
		task, err := ld.c.GetTask(ld.ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Errorf("read task %s back: %v", id, err)
			continue
		}
		seen := map[string]int{}
		for _, m := range task.History {
			if m.Role == a2a.MessageRoleUser {
				seen[m.ID]++
			}
		}
		for _, msgID := range msgIDs {
			if seen[msgID] != 1 {
				t.Errorf("task %s: message %s is in its history %d times, want once", id, msgID, seen[msgID])
			}
		}
		if len(seen) != len(msgIDs) {
			t.Errorf("task %s: %d user messages in its history, want %d: %v", id, len(seen), len(msgIDs), seen)
		}
	}
	t.Logf("%d tasks, %d retried attempts; the slowest message took %v, its retries included", n, ld.retries, ld.slowest.Round(time.Millisecond))
	if ld.slowest < 4*time.Second {
		t.Errorf("the slowest message took %v: the partition did not hold up the workload", ld.slowest)
	}
}

// readAllBody reads r's body and puts it back for the handler.
func readAllBody(r *http.Request) (string, error) {
	raw, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return string(raw), err
}
