package tests

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/llmtest"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// doomedAnswer is what the model writes in the execution of a call whose
// worker is killed: a text other than fakes.LiveAnswerText, so that a stream
// that joined the second execution's text to it would show.
const doomedAnswer = "This first execution of the call dies with its worker before the answer ends, so nobody may read it whole: "

// localCallsFake is a streaming OpenAI-compatible endpoint for the
// assistant. A user message with "ask" gets the ask_user tool call; the
// answer to it, fakes.LiveAnswerText, written the first time as doomedAnswer, a
// word every 150 ms (the test kills the worker meanwhile), then at once. A
// message with "slow" gets fakes.LiveAnswerText after 13 s, longer than a
// workflow task's timeout; any other at once.
type localCallsFake struct {
	*httptest.Server
	mu      sync.Mutex
	answers int           // requests answering the ask_user result
	doomed  chan struct{} // closed once the doomed answer wrote 5 words
}

func newLocalCallsFake(t *testing.T) *localCallsFake {
	f := &localCallsFake{doomed: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := fakes.ReadChat(w, r)
		if !ok {
			return
		}
		if !req.Stream {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		last := req.Last()
		text := fmt.Sprint(last.Content)
		sc := llmtest.Script{Model: req.Model, Pieces: strings.SplitAfter(fakes.LiveAnswerText, " "), Gap: 5 * time.Millisecond, InputTokens: 40, OutputTokens: 20}
		switch {
		case last.Role == "user" && strings.Contains(text, "ask"):
			sc.Pieces = nil
			sc.ToolCalls = []llmtest.ToolCall{{ID: "call_ask", Name: "ask_user", Arguments: `{"question":"Which city are you in?"}`}}
		case last.Role == "tool" && last.ToolCallID == "call_ask":
			f.mu.Lock()
			f.answers++
			first := f.answers == 1
			f.mu.Unlock()
			if first {
				sc.Pieces, sc.Gap = strings.SplitAfter(doomedAnswer+doomedAnswer+doomedAnswer, " "), 150*time.Millisecond
				sc.FirstToken = func() {
					time.AfterFunc(5*150*time.Millisecond, func() { close(f.doomed) })
				}
			}
		case last.Role == "user" && strings.Contains(text, "slow"):
			sc.TTFT = 13 * time.Second
		}
		llmtest.WriteOpenAI(w, sc)
	}))
	t.Cleanup(f.Close)
	return f
}

// taskEvents returns the event types of task id's history, by name, and
// the LLM calls it records as local activities' markers and as
// activities.
func taskEvents(t *testing.T, ctx context.Context, tc client.Client, id a2a.TaskID) (counts map[string]int, total, localCalls, activityCalls int) {
	t.Helper()
	counts = map[string]int{}
	iter := tc.GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		total++
		counts[ev.GetEventType().String()]++
		if localActivityType(ev) == wire.ActivityCompleteChat {
			localCalls++
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == wire.ActivityCompleteChat {
			activityCalls++
		}
	}
	return counts, total, localCalls, activityCalls
}

// TestLocalModelCallsKillAndLongCall: on an `api` and a `worker` (the
// answers' pieces crossing over the Unix sockets beside their SQLite
// database), a task's model call runs as a local activity (a blocking
// SendMessage: TaskInput.LocalModelCalls) and streams its answer to a
// subscriber. The worker is killed (kill -9) mid-answer and started
// again: the new worker calls the model again, from attempt 1, and the
// subscriber sees the answer start over once and ends with one whole
// answer, never the second execution's text joined to the first's. The
// history records the call once, as a marker. Then a call longer than the
// workflow task's timeout (13 s against 10 s) completes, the SDK keeping
// its workflow task alive: the test logs what that costs in events.
func TestLocalModelCallsKillAndLongCall(t *testing.T) {
	fake := newLocalCallsFake(t)
	fakes.UseOpenAI(t, fake.URL, fakes.OpenAIKey, "fake-model")
	d := harness.StartSplitDB(t, 1, false, harness.SQLiteHintsDB(t))
	d.APIs[0].WaitOutput("Hints        Unix sockets in ", time.Second)
	ctx := harness.Context(t)
	url := d.APIURLs[0] + "/agents/assistant"
	c := harness.ClientsOver(t, ctx, url, 1, a2a.TransportProtocolJSONRPC, 4)[0]
	var temporalAddr string
	for _, e := range d.Env {
		if v, ok := strings.CutPrefix(e, "A2AFLOW_TEMPORAL_ADDR="); ok {
			temporalAddr = v
		}
	}
	tc, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)

	task := harness.Send(t, ctx, c, "", "ask: what is the weather?")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Which city are you in?")
	// A subscriber, there before the answer starts.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	r := &harness.LiveRun{Start: time.Now(), TaskID: task.ID}
	var doomedShown bool
	subscribed := make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		var once sync.Once
		for ev, err := range c.SubscribeToTask(sctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			once.Do(func() { close(subscribed) })
			if err != nil {
				ended <- err
				return
			}
			switch e := ev.(type) {
			case *a2a.TaskStatusUpdateEvent:
				r.State = e.Status.State
				if e.Status.State.Terminal() {
					r.Final = harness.Text(e.Status.Message)
				}
			case *a2a.TaskArtifactUpdateEvent:
				if _, live := e.Metadata[wire.LiveMetadataKey]; !live {
					r.OtherArtifacts++
					continue
				}
				r.Chunks++
				if !e.Append {
					if r.Text != "" {
						r.Restarts++
					}
					r.Text = ""
				}
				for _, p := range e.Artifact.Parts {
					r.Text += p.Text()
				}
				doomedShown = doomedShown || strings.HasPrefix(r.Text, "This first execution")
				r.Last = r.Last || e.LastChunk
			}
		}
		ended <- nil
	}()
	<-subscribed
	// The answer, sent by a blocking SendMessage (its call is a local
	// activity), while the subscriber reads.
	go func() {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Lisbon"))
		msg.TaskID = task.ID
		_, _ = c.SendMessage(sctx, &a2a.SendMessageRequest{Message: msg})
	}()
	select {
	case <-fake.doomed:
	case <-time.After(time.Minute):
		t.Fatal("the model never started the first answer")
	}
	time.Sleep(200 * time.Millisecond) // the pieces reach the subscriber
	d.Worker.Kill()
	killed := time.Now()
	d.StartWorker()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("the subscriber's stream: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the subscriber's stream did not end")
	}
	t.Logf("the task completed %v after the kill; the subscriber saw %d live chunks, %d restarts", time.Since(killed).Round(time.Millisecond), r.Chunks, r.Restarts)
	if !doomedShown {
		t.Errorf("the subscriber never saw the first execution's answer live: the kill did not come mid-answer")
	}
	if r.State != a2a.TaskStateCompleted || r.Final != fakes.LiveAnswerText {
		t.Fatalf("task ended %s with %q", r.State, r.Final)
	}
	if r.Text != fakes.LiveAnswerText || !r.Last || r.Restarts != 1 {
		t.Errorf("live answer joined = %q (last chunk: %v, %d restarts), want %q once, after one restart", r.Text, r.Last, r.Restarts, fakes.LiveAnswerText)
	}
	fake.mu.Lock()
	answers := fake.answers
	fake.mu.Unlock()
	if answers != 2 {
		t.Errorf("the model was asked for the answer %d times, want 2 (once more after the kill)", answers)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(harness.Text(got.History[len(got.History)-1]), "Streaming works"); n != 1 || len(got.Artifacts) != 0 {
		t.Errorf("the task's last message %q, %d artifacts: want the answer once, no artifact", harness.Text(got.History[len(got.History)-1]), len(got.Artifacts))
	}
	_, _, local, activities := taskEvents(t, ctx, tc, task.ID)
	if local != 2 || activities != 0 {
		// The question (a local activity: a blocking send) and the answer
		// once (the killed execution recorded nothing).
		t.Errorf("history records %d model calls as markers and %d as activities, want 2 and 0", local, activities)
	}

	// A call longer than the workflow task's timeout, against one that is not.
	quick := harness.Send(t, ctx, c, "", "quick: hello")
	start := time.Now()
	slow := harness.Send(t, ctx, c, "", "slow: hello")
	took := time.Since(start)
	for _, tk := range []*a2a.Task{quick, slow} {
		harness.WantState(t, tk, a2a.TaskStateCompleted, "")
	}
	if harness.StatusText(slow) != fakes.LiveAnswerText {
		t.Errorf("the long call's answer %q", harness.StatusText(slow))
	}
	qc, qn, ql, qa := taskEvents(t, ctx, tc, quick.ID)
	sc, sn, sl, sa := taskEvents(t, ctx, tc, slow.ID)
	if ql != 1 || qa != 0 || sl != 1 || sa != 0 {
		t.Errorf("model calls as markers/activities: quick %d/%d, slow %d/%d; want 1/0 each", ql, qa, sl, sa)
	}
	t.Logf("a plain turn: %d events %v; a 13 s call (the turn took %v): %d events %v", qn, qc, took.Round(time.Millisecond), sn, sc)
	if wft := "WorkflowTaskCompleted"; sc[wft] <= qc[wft] {
		t.Errorf("the long call's history has %d completed workflow tasks, the plain one %d: want the workflow task kept alive", sc[wft], qc[wft])
	}
}

// TestLocalModelCallsEvents: the same turn of the assistant (a blocking
// SendMessage: the context's history read by an activity, one model call,
// the answer) on `serve` with local model calls (the default) and on one
// started with --local-model-calls=false: the model call is one marker
// instead of an activity's three events and the workflow task its result
// starts (three more): five events fewer a model call.
func TestLocalModelCallsEvents(t *testing.T) {
	fake := newLocalCallsFake(t)
	fakes.UseOpenAI(t, fake.URL, fakes.OpenAIKey, "fake-model")
	ctx := harness.Context(t)
	events := map[bool]int{}
	for _, local := range []bool{true, false} {
		s := harness.StartServe(t, t.TempDir(), fmt.Sprintf("--local-model-calls=%v", local))
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
		task := harness.Send(t, ctx, c, "", "quick: hello")
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		tc := dialTemporal(t, s)
		// The workflow completes a moment after the task does.
		var counts map[string]int
		var marked, scheduled int
		waitFor(t, 20*time.Second, func() bool {
			counts, events[local], marked, scheduled = taskEvents(t, ctx, tc, task.ID)
			return counts["WorkflowExecutionCompleted"] == 1
		})
		t.Logf("local model calls %v: %d events %v", local, events[local], counts)
		if wantMarked := map[bool]int{true: 1, false: 0}[local]; marked != wantMarked || scheduled != 1-wantMarked {
			t.Errorf("local model calls %v: the call is %d markers and %d activities", local, marked, scheduled)
		}
		s.Proc().Stop()
	}
	if events[false]-events[true] != 5 {
		t.Errorf("a turn with one model call has %d events with local model calls, %d without: want 5 fewer", events[true], events[false])
	}
}
