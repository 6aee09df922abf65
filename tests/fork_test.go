package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	_ "modernc.org/sqlite"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// forkOrigin reads a fork's a2aflow.fork metadata.
func forkOrigin(task *a2a.Task) map[string]any {
	o, _ := task.Metadata["a2aflow.fork"].(map[string]any)
	return o
}

// TestFork: the travel task forked at its first answer takes another city
// (one booking in the original, one in the fork: BookTrip ran twice in all,
// not three times), forked at its end it completes at once with the
// original's booking (BookTrip not run), over HTTP+JSON, JSON-RPC's
// ForkTask and the CLI; an expense forked after its approval is not asked
// again, forked before it is; a task that continued as new forks whole;
// retry refuses a task that did not fail. Temporal suggests continue-as-new
// every 60 events, so long tasks continue.
func TestFork(t *testing.T) {
	dataDir := t.TempDir()
	s := harness.StartServe(t, dataDir, "--temporal-dynamic-config", "limit.historyCount.suggestContinueAsNew=60")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)

	orig := harness.TravelBooking(t, ctx, c)
	origBooking := harness.ForkBooking(t, orig)
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: orig.ID})
	if err != nil {
		t.Fatal(err)
	}
	total := len(full.History)

	t.Run("travel at its first answer", func(t *testing.T) {
		fork := harness.ForkREST(t, s.APIURL, orig.ID, 2)
		harness.WantState(t, fork, a2a.TaskStateInputRequired, "Where to?")
		if o := forkOrigin(fork); o["from"] != string(orig.ID) {
			t.Errorf("fork metadata %v, want from %s", fork.Metadata, orig.ID)
		}
		if fork.ContextID != orig.ContextID {
			t.Errorf("fork context %s, want the original's %s", fork.ContextID, orig.ContextID)
		}
		if len(fork.History) == 0 || !containsTask(fork.History[0].ReferenceTasks, orig.ID) {
			t.Errorf("the fork's first message does not list the original in referenceTaskIds: %+v", fork.History)
		}
		task := harness.Send(t, ctx, c, fork.ID, "Porto")
		harness.WantState(t, task, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
		task = harness.Send(t, ctx, c, fork.ID, "2026-12-24")
		harness.WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
		task = harness.Send(t, ctx, c, fork.ID, "2")
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		if b := harness.ForkBooking(t, task); b.Destination != "Porto" || b.Reference == origBooking.Reference {
			t.Errorf("the fork booked %+v, want Porto with its own reference", b)
		}
		again, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: orig.ID})
		if err != nil {
			t.Fatal(err)
		}
		if b := harness.ForkBooking(t, again); b != origBooking || len(again.History) != total {
			t.Errorf("the original changed: booking %+v, %d messages (was %+v, %d)", b, len(again.History), origBooking, total)
		}
	})

	t.Run("travel at its end", func(t *testing.T) {
		fork := harness.ForkREST(t, s.APIURL, orig.ID, total)
		harness.WantState(t, fork, a2a.TaskStateCompleted, "")
		if b := harness.ForkBooking(t, fork); b != origBooking {
			t.Errorf("the fork at the end has booking %+v, want the original's recorded %+v", b, origBooking)
		}
		books := harness.Bookings(t, dataDir)
		n := 0
		for _, refs := range books {
			n += len(refs)
		}
		if n != 2 || len(books[string(orig.ID)]) != 1 || len(books[string(fork.ID)]) != 0 {
			t.Errorf("bookings %v: want BookTrip to have run twice in all (the original, the Porto fork), not for the fork at the end", books)
		}
	})

	t.Run("JSON-RPC ForkTask and the card", func(t *testing.T) {
		var card struct {
			Capabilities struct {
				Extensions []struct{ URI string } `json:"extensions"`
			} `json:"capabilities"`
		}
		getJSON(t, s.APIURL+"/.well-known/agent-card.json", &card)
		found := false
		for _, e := range card.Capabilities.Extensions {
			found = found || e.URI == "urn:a2aflow:ext:fork:v1"
		}
		if !found {
			t.Errorf("the card declares no fork extension: %+v", card.Capabilities.Extensions)
		}
		code, body := harness.ForkCall(t, s.APIURL+"/", map[string]any{"jsonrpc": "2.0", "id": 7, "method": "ForkTask",
			"params": map[string]any{"id": orig.ID, "atMessage": 4}})
		var resp struct {
			Result *a2a.Task `json:"result"`
		}
		if err := json.Unmarshal(body, &resp); code != http.StatusOK || err != nil || resp.Result == nil {
			t.Fatalf("ForkTask: HTTP %d %s", code, body)
		}
		harness.WantState(t, resp.Result, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
		code, body = harness.ForkCall(t, s.APIURL+"/", map[string]any{"jsonrpc": "2.0", "id": 8, "method": "RetryTask",
			"params": map[string]any{"id": orig.ID}})
		if !strings.Contains(string(body), `"code":-31409`) || !strings.Contains(string(body), "only a failed task is retried") {
			t.Errorf("RetryTask of a completed task: HTTP %d %s, want the refusal -31409", code, body)
		}
		code, body = harness.ForkCall(t, s.APIURL+"/tasks/"+string(orig.ID)+":fork", map[string]any{"atMessage": total + 1})
		if code != http.StatusBadRequest {
			t.Errorf("fork past the end: HTTP %d %s, want 400", code, body)
		}
		code, body = harness.ForkCall(t, s.APIURL+"/tasks/no-such-task:fork", map[string]any{"atMessage": 1})
		if code != http.StatusNotFound {
			t.Errorf("fork of an unknown task: HTTP %d %s, want 404", code, body)
		}
	})

	t.Run("CLI", func(t *testing.T) {
		r := runCLI(t, "fork", "--agent", s.APIURL, string(orig.ID), "--at", "2")
		if r.code != 2 || !strings.Contains(r.stdout, "Where to?") {
			t.Errorf("a2aflow fork: exit %d, stdout %q, stderr %q; want exit 2 and the first question", r.code, r.stdout, r.stderr)
		}
		r = runCLI(t, "retry", "--agent", s.APIURL, string(orig.ID))
		if r.code != 4 || !strings.Contains(r.stderr, "only a failed task is retried") {
			t.Errorf("a2aflow retry of a completed task: exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("expenses around the approval", func(t *testing.T) {
		ec, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
		task, approvalID := expense(t, ctx, ec, "640 EUR team offsite")
		if code := postJSON(t, s.APIURL+"/approvals/"+approvalID+"/decision", map[string]string{"X-Approver": "fiona"},
			map[string]any{"approved": true, "comment": "ok"}, nil); code != http.StatusOK {
			t.Fatalf("approve %s: HTTP %d", approvalID, code)
		}
		done := waitTaskState(t, ctx, ec, task.ID, a2a.TaskStateCompleted)
		n := len(done.History)

		after := harness.ForkREST(t, s.APIURL+"/agents/expenses", task.ID, n)
		if after.Status.State != a2a.TaskStateCompleted {
			t.Errorf("forked after its approval: %s %q, want completed without asking again", after.Status.State, harness.StatusText(after))
		} else if ok, who, _, _ := lastDecision(t, receiptOf(t, after)); !ok || who != "fiona" {
			t.Errorf("the fork's receipt: approved %v by %q, want fiona's recorded approval", ok, who)
		}

		before := harness.ForkREST(t, s.APIURL+"/agents/expenses", task.ID, 2)
		if before.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("forked before its approval: %s %q, want waiting for approval", before.Status.State, harness.StatusText(before))
		}
		var view map[string]any
		forkApproval := string(before.ID) + "-approval-1"
		if code := getJSON(t, s.APIURL+"/approvals/"+forkApproval, &view); code != http.StatusOK || view["state"] != "pending" {
			t.Errorf("GET /approvals/%s = %d %v, want the approval asked again, pending", forkApproval, code, view)
		}
	})

	t.Run("a task that continued as new", func(t *testing.T) {
		task := harness.Send(t, ctx, c, "", "Book a flight")
		task = harness.Send(t, ctx, c, task.ID, "Faro")
		for i := 0; i < 30; i++ {
			task = harness.Send(t, ctx, c, task.ID, "not a date")
		}
		task = harness.Send(t, ctx, c, task.ID, "2026-12-24")
		task = harness.Send(t, ctx, c, task.ID, "3")
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		// Visibility lists the runs a moment after they close.
		var runs int
		for deadline := time.Now().Add(10 * time.Second); runs < 2 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			runs = len(listRuns(t, ctx, s.TemporalAddr, task.ID))
		}
		if runs < 2 {
			t.Fatalf("the task had %d runs, want it to have continued as new", runs)
		}
		full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		booked := harness.ForkBooking(t, task)
		before := len(harness.Bookings(t, dataDir))
		fork := harness.ForkREST(t, s.APIURL, task.ID, len(full.History))
		harness.WantState(t, fork, a2a.TaskStateCompleted, "")
		if b := harness.ForkBooking(t, fork); b != booked {
			t.Errorf("the fork of the continued task booked %+v, want the recorded %+v", b, booked)
		}
		if after := len(harness.Bookings(t, dataDir)); after != before {
			t.Errorf("bookings went from %d to %d: the fork booked again", before, after)
		}
		// In the middle: waiting for a date again, after some invalid ones.
		mid := harness.ForkREST(t, s.APIURL, task.ID, 10)
		if mid.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("the fork at message 10: %s %q", mid.Status.State, harness.StatusText(mid))
		}
	})
}

func containsTask(ids []a2a.TaskID, id a2a.TaskID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// waitTaskState reads task id until it is in state.
func waitTaskState(t testing.TB, ctx context.Context, c interface {
	GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error)
}, id a2a.TaskID, state a2a.TaskState) *a2a.Task {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State == state {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s after 30s, want %s", id, task.Status.State, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRetryFailedLLMStep: the assistant's last model call fails while the
// provider is down (503, ten attempts), which fails the task; once the
// provider is back, retry forks the failed task at its end: the model calls
// and the user's answer before the failed call are not made again (counted
// at the fake provider), the failed call is, and the task completes. The
// original stays failed. Then the agent changes: a config agent's system
// prompt is edited and serve restarted; a fork of its task made before is
// refused with a clear error (409) before any model call runs.
func TestRetryFailedLLMStep(t *testing.T) {
	fake := newFakeOpenAI(t)
	var down atomic.Bool
	var refused atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []fakes.ChatMessage `json:"messages"`
		}
		_ = json.Unmarshal(raw, &req)
		if n := len(req.Messages); down.Load() && n > 0 && req.Messages[n-1].ToolCallID == "call_calc" {
			refused.Add(1)
			w.Header().Set("Retry-After-Ms", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"the provider is down","type":"server_error"}}`)
			return
		}
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, fake.URL+r.URL.Path, bytes.NewReader(raw))
		out.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	fakes.UseOpenAI(t, proxy.URL, fakes.OpenAIKey, "fake-model")
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	writeHelper := func(prompt string) {
		if err := os.WriteFile(config, []byte(`
[[agents]]
name = "helper"
description = "Answers with a calculator."
system-prompt = "`+prompt+`"
tools = ["calculator", "ask_user"]
`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeHelper("You are a concise helper.")
	s := harness.StartServe(t, t.TempDir(), "--config", config)
	ctx := harness.Context(t)
	agentURL := s.APIURL + "/agents/assistant"
	c, _ := harness.NewClient(t, ctx, agentURL)

	down.Store(true)
	task := harness.Send(t, ctx, c, "", "What is 6*7, and where am I?")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Which city are you in?")
	task = harness.Send(t, ctx, c, task.ID, "Lisbon")
	if task.Status.State != a2a.TaskStateFailed {
		task = waitTaskState(t, ctx, c, task.ID, a2a.TaskStateFailed)
	}
	if refused.Load() == 0 {
		t.Fatalf("the provider refused no call; the task is %s: %q", task.Status.State, harness.StatusText(task))
	}
	fake.mu.Lock()
	before := len(fake.calls)
	fake.mu.Unlock()

	down.Store(false)
	code, body := harness.ForkCall(t, agentURL+"/tasks/"+string(task.ID)+":retry", map[string]any{})
	if code != http.StatusOK {
		t.Fatalf("retry: HTTP %d %s", code, body)
	}
	var retried a2a.Task
	if err := json.Unmarshal(body, &retried); err != nil {
		t.Fatal(err)
	}
	if retried.Status.State != a2a.TaskStateCompleted {
		retried = *waitTaskState(t, ctx, c, retried.ID, a2a.TaskStateCompleted)
	}
	if o := forkOrigin(&retried); o["from"] != string(task.ID) || o["retry"] != true {
		t.Errorf("the retry's metadata %v, want a retry of %s", retried.Metadata, task.ID)
	}
	fake.mu.Lock()
	calls := slices.Clone(fake.calls)
	fake.mu.Unlock()
	if len(calls) != before+1 || !strings.HasPrefix(calls[len(calls)-1], "tool:") {
		t.Errorf("the provider got %d calls before the retry and %v in all: want the failed call only, once more", before, calls)
	}
	orig, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || orig.Status.State != a2a.TaskStateFailed {
		t.Errorf("the original after the retry: %v %v, want it failed still", orig, err)
	}
	// The retry's history replays; with A2AFLOW_RECORD_HISTORY=1 it is
	// cmd/a2aflow/internal/demo/testdata/assistant-retry.history.json.
	replayAndRecord(t, ctx, s, retried.ID, "assistant-retry.history.json")

	// The agent changes.
	helperURL := s.APIURL + "/agents/helper"
	hc, _ := harness.NewClient(t, ctx, helperURL)
	ht := harness.Send(t, ctx, hc, "", "What is 6*7, and where am I?")
	harness.WantState(t, ht, a2a.TaskStateInputRequired, "Which city are you in?")
	s.Proc().Stop()
	writeHelper("You are a verbose helper.")
	s.Restart()
	fake.mu.Lock()
	before = len(fake.calls)
	fake.mu.Unlock()
	code, body = harness.ForkCall(t, helperURL+"/tasks/"+string(ht.ID)+":fork", map[string]any{"atMessage": 2})
	if code != http.StatusConflict || !strings.Contains(string(body), "the agent changed since task "+string(ht.ID)+" ran") ||
		!strings.Contains(string(body), "CompleteChat") {
		t.Errorf("fork after the agent changed: HTTP %d %s, want 409 naming the changed call", code, body)
	}
	fake.mu.Lock()
	after := len(fake.calls)
	fake.mu.Unlock()
	if after != before {
		t.Errorf("the refused fork called the provider %d times", after-before)
	}
}
