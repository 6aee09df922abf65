package tests

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// answerHook is an http.ResponseWriter that runs a hook before the first
// write of an answer holding a word: the MCP server did the call, a2aflow
// has not heard so yet.
type answerHook struct {
	http.ResponseWriter
	hook *mcpHook
}

func (w answerHook) Write(p []byte) (int, error) {
	w.hook.fire(p)
	return w.ResponseWriter.Write(p)
}

func (w answerHook) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// mcpHook holds the hooks of the MCP server's answers, by word.
type mcpHook struct {
	mu     sync.Mutex
	before map[string]func()
}

// on runs f (once) before the first answer that holds word is written.
func (h *mcpHook) on(word string, f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before[word] = f
}

func (h *mcpHook) fire(p []byte) {
	h.mu.Lock()
	var run func()
	for word, f := range h.before {
		if bytes.Contains(p, []byte(word)) {
			delete(h.before, word)
			run = f
			break
		}
	}
	h.mu.Unlock()
	if run != nil {
		run()
	}
}

// faultsMCP runs the payables agent of TestGatedToolCalls, whose
// pay_invoice (a tool of an MCP server built with the official Go SDK,
// over streamable HTTP) is gated above 1,000, with its MCP server behind a
// fault proxy:
//
//   - latency 100 ms to 1.9 s on every answer (1 s ± 0.9 s) for a small
//     payment, the session opened and the tools listed through it too;
//   - an approved payment whose answer is lost to a reset after the server
//     paid;
//   - an approved payment whose answer stops (half-open), the connection
//     closed 5 s later.
//
// Each task completes with the model's answer naming its payment, and the
// server's ledger, one payment per idempotency key, holds each payment
// once, though the broken calls reached it twice.
func faultsMCP(t *testing.T) {
	model := newFakeToolLLM(t)
	payments := &mcptest.Payments{}
	hook := &mcpHook{before: map[string]func(){}}
	inner := payments.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(answerHook{w, hook}, r)
	}))
	t.Cleanup(srv.Close)
	proxy := newFaultProxy(t, "mcp", strings.TrimPrefix(srv.URL, "http://"))
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(payablesConfig, proxy.URL()+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-test", "A2AFLOW_LLM_MODEL=gpt-test"}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")
	answer := func(id a2a.TaskID) string {
		t.Helper()
		return workflows.MessageText(waitState(t, ctx, c, id, a2a.TaskStateCompleted).Status.Message)
	}
	approved := func(text string) (*a2a.Task, time.Time) {
		t.Helper()
		task := harness.Send(t, ctx, c, "", text)
		id := pendingApproval(t, task)
		if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"}, map[string]any{"approved": true}, nil); code != 200 {
			t.Fatalf("decision on %s: HTTP %d", id, code)
		}
		return task, time.Now()
	}

	proxy.add("jitter", "latency", "downstream", `{"latency":1000,"jitter":900}`)
	began := time.Now()
	small := harness.Send(t, ctx, c, "", "pay INV-F1 99")
	proxy.remove("jitter")
	if got := workflows.MessageText(small.Status.Message); small.Status.State != a2a.TaskStateCompleted || !strings.HasPrefix(got, "done: paid invoice INV-F1: 99.00 EUR") {
		t.Errorf("under latency: %s %q", small.Status.State, got)
	}
	t.Logf("under latency 100 ms-1.9 s: answered in %v", time.Since(began).Round(time.Millisecond))

	var healed sync.Map // invoice -> time.Time
	breakAnswer := func(invoice, typ, attrs string, hold time.Duration) {
		hook.on("paid invoice "+invoice, func() {
			proxy.add("break", typ, "downstream", attrs)
			time.AfterFunc(hold, func() { proxy.remove("break"); healed.Store(invoice, time.Now()) })
		})
	}
	breakAnswer("INV-F2", "reset_peer", `{"timeout":0}`, 300*time.Millisecond)
	reset, at := approved("pay INV-F2 2000")
	if got := answer(reset.ID); !strings.HasPrefix(got, "done: paid invoice INV-F2: 2000.00 EUR") {
		t.Errorf("reset mid-call: the model answered %q", got)
	}
	t.Logf("reset mid-call: completed %v after the approval", time.Since(at).Round(time.Millisecond))

	breakAnswer("INV-F3", "timeout", `{"timeout":5000}`, 5500*time.Millisecond)
	halfOpen, at := approved("pay INV-F3 3000")
	if got := answer(halfOpen.ID); !strings.HasPrefix(got, "done: paid invoice INV-F3: 3000.00 EUR") {
		t.Errorf("half-open: the model answered %q", got)
	}
	done := time.Now()
	t.Logf("half-open mid-call: completed %v after the approval", done.Sub(at).Round(time.Millisecond))
	if h, ok := healed.Load("INV-F3"); ok {
		t.Logf("half-open mid-call: completed %v after the link healed", done.Sub(h.(time.Time)).Round(time.Millisecond))
	}

	paid := map[string]int{}
	for _, p := range payments.Paid() {
		paid[fmt.Sprintf("%s %.0f", p.Invoice, p.Amount)]++
	}
	if want := map[string]int{"INV-F1 99": 1, "INV-F2 2000": 1, "INV-F3 3000": 1}; fmt.Sprint(paid) != fmt.Sprint(want) {
		t.Errorf("the MCP server paid %v, want %v (each call once)", paid, want)
	}
	if n := payments.Calls(); n < 5 {
		t.Errorf("the MCP server got %d pay_invoice calls, want at least 5 (the two broken calls retried): the faults did not hit", n)
	}
	t.Logf("pay_invoice calls at the server: %d, payments: %d", payments.Calls(), len(payments.Paid()))
}
