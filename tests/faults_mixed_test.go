package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// splitBehind is a split deployment (temporal, worker, api) whose api and
// worker reach Temporal's frontend through fault proxies.
type splitBehind struct {
	apiURL string
	links  []*faultProxy
}

// startSplitBehind starts `a2aflow temporal` on dataDir, and a worker and
// an api dialing it through a proxy each, with env and their extra args.
func startSplitBehind(t *testing.T, dataDir string, env, workerArgs, apiArgs []string) *splitBehind {
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	env = append([]string{"A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + harness.SecretsKey}, env...)
	tp := harness.Start(t, "a2aflow temporal", append(env, "A2AFLOW_TEMPORAL_ADDR="+temporalAddr), "temporal", "--data-dir", dataDir, "--ui-addr", "")
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	apiLink := newFaultProxy(t, "api-temporal", temporalAddr)
	workerLink := newFaultProxy(t, "worker-temporal", temporalAddr)
	w := harness.Start(t, "a2aflow worker", append(env, "A2AFLOW_TEMPORAL_ADDR="+workerLink.Addr()), append([]string{"worker", "--data-dir", dataDir}, workerArgs...)...)
	w.WaitOutput("a2aflow worker is running", time.Minute)
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	api := harness.Start(t, "a2aflow api", append(env, "A2AFLOW_TEMPORAL_ADDR="+apiLink.Addr()), append([]string{"api", "--http-addr", strings.TrimPrefix(apiURL, "http://")}, apiArgs...)...)
	api.WaitOutput("a2aflow API is serving", time.Minute)
	harness.WaitHealthy(t, apiURL)
	return &splitBehind{apiURL: apiURL, links: []*faultProxy{apiLink, workerLink}}
}

// partition cuts both links for d (data stops both ways; the connections
// close at its end) and returns when it began.
func (s *splitBehind) partition(t *testing.T, d time.Duration) time.Time {
	began := time.Now()
	for _, p := range s.links {
		p.add("partition-up", "timeout", "upstream", fmt.Sprintf(`{"timeout":%d}`, d.Milliseconds()))
		p.add("partition-down", "timeout", "downstream", fmt.Sprintf(`{"timeout":%d}`, d.Milliseconds()))
	}
	time.Sleep(d)
	for _, p := range s.links {
		p.remove("partition-up")
		p.remove("partition-down")
	}
	t.Logf("partitioned from %v for %v", began.Format("15:04:05.000"), d)
	return began
}

// mixedLLM serves two fake models on one OpenAI-compatible URL: the tool
// model (the payables agent's, model "tool-model") and the streaming one
// (the assistant's, every other model).
func mixedLLM(t *testing.T, stream *faultModel, tools *fakeToolLLM) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if bytes.Contains(raw, []byte(`"model":"tool-model"`)) {
			tools.Config.Handler.ServeHTTP(w, r)
			return
		}
		stream.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mixedLoad is the mixed workload's client side: every request is retried
// as a real client does (Unavailable, a retryable error, no answer within
// 10 s, a broken connection), with the same message ID, for up to a
// minute and a half.
type mixedLoad struct {
	t       *testing.T
	ctx     context.Context
	apiURL  string
	retries atomic.Int64
	mu      sync.Mutex
	slowest map[string]time.Duration // each operation's slowest request
}

// retrying runs op (one attempt, bound to 10 s) until it succeeds.
func (m *mixedLoad) retrying(what string, op func(ctx context.Context) error) error {
	began := time.Now()
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(m.ctx, 10*time.Second)
		err := op(actx)
		cancel()
		if err == nil {
			if !strings.HasPrefix(what, "read ") {
				m.mu.Lock()
				m.slowest[what] = max(m.slowest[what], time.Since(began).Round(time.Millisecond))
				m.mu.Unlock()
			}
			return nil
		}
		if !retryable(err) || m.ctx.Err() != nil || time.Since(began) > 90*time.Second {
			return fmt.Errorf("%s, attempt %d: %w", what, attempt+1, err)
		}
		m.retries.Add(1)
		time.Sleep(500 * time.Millisecond)
	}
}

// send sends msg through c until it is answered, and returns the task.
func (m *mixedLoad) send(what string, c *a2aclient.Client, msg *a2a.Message, cfg *a2a.SendMessageConfig) (*a2a.Task, error) {
	var task *a2a.Task
	err := m.retrying(what, func(ctx context.Context) error {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: cfg})
		if err != nil {
			return err
		}
		var ok bool
		if task, ok = res.(*a2a.Task); !ok {
			return fmt.Errorf("SendMessage returned %T", res)
		}
		return nil
	})
	return task, err
}

// mixedMsg is a user message of text s with the given ID, to task (new
// when "").
func mixedMsg(id string, task a2a.TaskID, s string) *a2a.Message {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s))
	msg.ID, msg.TaskID = id, task
	return msg
}

// decide approves approval id through REST as fiona until it is decided:
// 200, or 409 on a retry (the earlier attempt went through).
func (m *mixedLoad) decide(what, id string) error {
	attempts := 0
	return m.retrying(what, func(ctx context.Context) error {
		attempts++
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.apiURL+"/approvals/"+id+"/decision", strings.NewReader(`{"approved":true,"comment":"ok"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Approver", "fiona")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusConflict && attempts > 1:
			return nil
		case resp.StatusCode >= 500:
			return fmt.Errorf("decision: HTTP %d: %w", resp.StatusCode, a2a.ErrServerError)
		}
		return fmt.Errorf("decision: HTTP %d", resp.StatusCode)
	})
}

// until reads task id through c until it is in state.
func (m *mixedLoad) until(c *a2aclient.Client, id a2a.TaskID, state a2a.TaskState) (*a2a.Task, error) {
	var task *a2a.Task
	err := m.retrying("read "+string(id), func(ctx context.Context) error {
		for {
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			if err != nil {
				return err
			}
			if task = got; got.Status.State == state {
				return nil
			}
			if got.Status.State.Terminal() {
				return fmt.Errorf("task %s ended %s, want %s", id, got.Status.State, state)
			}
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	return task, err
}

// approvalOf is the approval ID a waiting task's status message names.
func approvalOf(task *a2a.Task) string {
	if task == nil || task.Status.Message == nil {
		return ""
	}
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.Data().(map[string]any); ok {
			if id, _ := d["approvalId"].(string); id != "" {
				return id
			}
		}
	}
	return ""
}

// faultsMixed runs every kind of work at once through one fault: the 5 s
// partition of the api and the worker from Temporal's frontend (as
// faultsTemporal), with every request retried as a real client does:
//
//   - questions: two travel tasks answered to their booking;
//   - an approval: an expense over the limit, approved through REST;
//   - a gated tool call: the payables agent's pay_invoice of 2,000 (an MCP
//     server counting payments by idempotency key), approved through REST;
//   - a delegation: the router to a remote A2A agent that asks a question;
//   - a streaming answer: the assistant's, over SSE, resubscribed when the
//     stream breaks;
//   - a push subscriber: a travel task whose ten events go to a webhook;
//   - a schedule: echo every 2 s, from before the partition to after it.
//
// Then: every task ends in its state (every run of the schedule too); each message once in its history;
// one decision per approval; one payment; one delegation, one artifact;
// the live answer is the model's text; every push event arrived, each
// first arrival in order.
func faultsMixed(t *testing.T) {
	stream := newFaultModel(t)
	tools := newFakeToolLLM(t)
	llm := mixedLLM(t, stream, tools)
	payments := &mcptest.Payments{}
	mcp := httptest.NewServer(payments.Handler())
	t.Cleanup(mcp.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	payables := strings.Replace(fmt.Sprintf(payablesConfig, mcp.URL+"/mcp"), `provider = "openai"`, "provider = \"openai\"\nmodel = \"tool-model\"", 1)
	if err := os.WriteFile(config, []byte(payables), 0o644); err != nil {
		t.Fatal(err)
	}
	ext := &fakes.ExtAgent{}
	extProxy, _ := serveExtBehind(t, ext)
	recv := newFaultReceiver(t)
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "ext", extProxy.URL())
	env := []string{"OPENAI_BASE_URL=" + llm.URL + "/v1", "OPENAI_API_KEY=" + fakes.OpenAIKey, "A2AFLOW_LLM_MODEL=fake-model", "A2AFLOW_LLM_PROVIDER=", "ANTHROPIC_API_KEY="}
	d := startSplitBehind(t, dataDir, env,
		[]string{"--config", config, "--push-allow-hosts", "loopback", "--push-max-retry-interval", "1s", "--delegation-retry-budget", "60s"},
		[]string{"--config", config, "--approver-groups", "fiona:finance", "--push-allow-hosts", "loopback"})
	ctx := harness.Context(t)
	client := func(agent string) *a2aclient.Client {
		return harness.ClientsOver(t, ctx, d.apiURL+"/agents/"+agent, 1, a2a.TransportProtocolJSONRPC, 4)[0]
	}
	travel := client("travel")
	m := &mixedLoad{t: t, ctx: ctx, apiURL: d.apiURL, slowest: map[string]time.Duration{}}
	ld := &partitionLoad{t: t, ctx: ctx, c: travel, sent: map[a2a.TaskID][]string{}}
	run := "mixed-" + fmt.Sprint(time.Now().UnixNano())

	sched := m.schedule(run)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { ld.drive(i) })
	}
	var pushTask a2a.TaskID
	wg.Go(func() { pushTask = m.pushed(travel, recv, run) })
	var expenseTask, payTask, delegated a2a.TaskID
	var live *harness.LiveRun
	wg.Go(func() { expenseTask = m.approval(client("expenses"), run) })
	wg.Go(func() { payTask = m.gatedCall(client("payables"), run) })
	wg.Go(func() { delegated = m.delegation(client("router"), run) })
	wg.Go(func() { live = m.streamed(client("assistant"), run) })
	time.Sleep(1500 * time.Millisecond)
	d.partition(t, 5*time.Second)
	wg.Wait()

	ld.verify(2)
	m.scheduled(client("echo"), sched)
	var streamed a2a.TaskID
	if live != nil {
		streamed = live.TaskID
	}
	m.verify(map[string]*a2aclient.Client{"travel": travel, "expenses": client("expenses"), "payables": client("payables"), "router": client("router"), "assistant": client("assistant")},
		map[string]a2a.TaskID{"expense": expenseTask, "pay": payTask, "del": delegated, "push": pushTask, "stream": streamed}, run)
	t.Logf("the remote agent started %d task(s) for the delegation (from messages %v)", len(ext.Started(string(delegated))), ext.Started(string(delegated)))
	if paid := payments.Paid(); len(paid) != 1 || paid[0].Invoice != "INV-M1" {
		t.Errorf("the MCP server paid %v, want INV-M1 once", paid)
	}
	// The live text, when the last stream showed it, is the model's whole
	// text (a resubscribed stream starts with the text so far).
	if live != nil && (live.State != a2a.TaskStateCompleted || live.Final != fakes.LiveAnswerText || live.Text != "" && live.Text != fakes.LiveAnswerText) {
		t.Errorf("the streamed answer: task %s %s with %q, the live text %q; want completed with the model's text", live.TaskID, live.State, live.Final, live.Text)
	}
	if live != nil {
		t.Logf("streamed answer: the model got %d requests for it; the live answer started over %d times", stream.count(mixedQuestion), live.Restarts)
	}
	want := travelPushes()
	recv.waitDistinct(t, len(want), 60*time.Second)
	if diff := cmp.Diff(want, recv.distinct()); diff != "" {
		t.Errorf("push events, each once, in order of first arrival (-want +got):\n%s", diff)
	}
	recv.mu.Lock()
	t.Logf("push: %d deliveries of %d events", len(recv.arrivals), len(want))
	recv.mu.Unlock()
	t.Logf("%d requests retried; the slowest of each operation, its retries included: %v", m.retries.Load(), m.slowest)
}

const mixedQuestion = "mixed: tell me about streaming"

// pushed books a trip whose events go to recv, and returns the task.
func (m *mixedLoad) pushed(c *a2aclient.Client, recv *faultReceiver, run string) a2a.TaskID {
	cfg := &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.URL + "/hook", Token: "mixed"}}
	task, err := m.send("push: start", c, mixedMsg(run+"-push-m0", "", "Book a flight"), cfg)
	if err != nil {
		m.t.Error(err)
		return ""
	}
	for n, answer := range []string{"Lisbon", "2026-12-24", "2"} {
		time.Sleep(time.Second)
		got, err := m.send("push: answer", c, mixedMsg(fmt.Sprintf("%s-push-m%d", run, n+1), task.ID, answer), nil)
		if err != nil {
			m.t.Error(err)
			return task.ID
		}
		task = got
	}
	if task.Status.State != a2a.TaskStateCompleted {
		m.t.Errorf("push task %s: %s after its last answer, want completed", task.ID, task.Status.State)
	}
	return task.ID
}

// approval files an expense over the limit and approves it.
func (m *mixedLoad) approval(c *a2aclient.Client, run string) a2a.TaskID {
	task, err := m.send("expense: file", c, mixedMsg(run+"-expense-m0", "", "900 EUR conference ticket"), nil)
	if err == nil && approvalOf(task) == "" {
		err = fmt.Errorf("expense task %s is %s with no approval", task.ID, task.Status.State)
	}
	if err != nil {
		m.t.Error(err)
		return ""
	}
	time.Sleep(1500 * time.Millisecond)
	if err := m.decide("expense: decide", approvalOf(task)); err != nil {
		m.t.Error(err)
	}
	return task.ID
}

// gatedCall asks the payables agent to pay 2,000 (gated above 1,000) and
// approves the call.
func (m *mixedLoad) gatedCall(c *a2aclient.Client, run string) a2a.TaskID {
	time.Sleep(500 * time.Millisecond)
	task, err := m.send("pay: ask", c, mixedMsg(run+"-pay-m0", "", "pay INV-M1 2000"), nil)
	if err == nil && approvalOf(task) == "" {
		err = fmt.Errorf("payables task %s is %s with no approval", task.ID, task.Status.State)
	}
	if err != nil {
		m.t.Error(err)
		return ""
	}
	time.Sleep(time.Second)
	if err := m.decide("pay: decide", approvalOf(task)); err != nil {
		m.t.Error(err)
	}
	return task.ID
}

// delegation has the router delegate to ext, which asks a name, and
// answers it.
func (m *mixedLoad) delegation(c *a2aclient.Client, run string) a2a.TaskID {
	time.Sleep(time.Second)
	task, err := m.send("delegation: ask", c, mixedMsg(run+"-del-m0", "", "@ext mixed ask"), nil)
	if err == nil && (task.Status.State != a2a.TaskStateInputRequired || harness.StatusText(task) != "What is your name?") {
		err = fmt.Errorf("delegating task %s is %s %q, want the remote's question", task.ID, task.Status.State, harness.StatusText(task))
	}
	if err != nil {
		m.t.Error(err)
		return ""
	}
	time.Sleep(time.Second)
	if _, err := m.send("delegation: answer", c, mixedMsg(run+"-del-m1", task.ID, "Grace"), nil); err != nil {
		m.t.Error(err)
	}
	return task.ID
}

// streamed asks the assistant over SSE and follows the answer to its end,
// resubscribing (or reading the task, once it ended) when a stream breaks.
func (m *mixedLoad) streamed(c *a2aclient.Client, run string) *harness.LiveRun {
	time.Sleep(700 * time.Millisecond)
	msg := mixedMsg(run+"-stream-m0", "", mixedQuestion)
	var r harness.LiveRun
	began := time.Now()
	for attempt := 0; time.Since(began) < 90*time.Second; attempt++ {
		r = harness.LiveRun{TaskID: r.TaskID}
		var streamErr error
		sctx, cancel := context.WithTimeout(m.ctx, time.Minute)
		events := c.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: msg})
		if r.TaskID != "" {
			events = c.SubscribeToTask(sctx, &a2a.SubscribeToTaskRequest{ID: r.TaskID})
		}
		for ev, err := range events {
			if err != nil {
				streamErr = err
				break
			}
			r.Collect(m.t, func(yield func(a2a.Event, error) bool) { yield(ev, nil) }, 0)
		}
		cancel()
		if r.State.Terminal() {
			m.mu.Lock()
			m.slowest["stream"] = time.Since(began).Round(time.Millisecond)
			m.mu.Unlock()
			return &r
		}
		if errors.Is(streamErr, a2a.ErrUnsupportedOperation) && r.TaskID != "" {
			// It ended while no stream was open: read it.
			task, err := m.until(c, r.TaskID, a2a.TaskStateCompleted)
			if err != nil {
				m.t.Error(err)
				return nil
			}
			return &harness.LiveRun{TaskID: task.ID, State: task.Status.State, Final: workflows.MessageText(task.Status.Message)}
		}
		m.retries.Add(1)
		time.Sleep(500 * time.Millisecond)
	}
	m.t.Errorf("the streamed answer of task %q did not end within 90 s", r.TaskID)
	return nil
}

// verify reads every task of the mixed workload back.
func (m *mixedLoad) verify(c map[string]*a2aclient.Client, ids map[string]a2a.TaskID, run string) {
	t := m.t
	expense, pay, delegated := ids["expense"], ids["pay"], ids["del"]
	check := func(what string, c *a2aclient.Client, id a2a.TaskID, prefix string, n int) *a2a.Task {
		if id == "" {
			return nil
		}
		task, err := m.until(c, id, a2a.TaskStateCompleted)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return nil
		}
		if err := messagesOnce(task, run+prefix, n); err != nil {
			t.Errorf("%s task %s: %v", what, id, err)
		}
		return task
	}
	if task := check("expense", c["expenses"], expense, "-expense-m", 1); task != nil {
		receipt, _ := task.Artifacts[0].Parts[0].Data().(map[string]any)
		if ds, _ := receipt["decisions"].([]any); len(ds) != 1 {
			t.Errorf("expense task %s has %d decisions, want one: %v", expense, len(ds), receipt)
		}
	}
	if task := check("pay", c["payables"], pay, "-pay-m", 1); task != nil {
		if got := workflows.MessageText(task.Status.Message); !strings.HasPrefix(got, "done: paid invoice INV-M1: 2000.00 EUR") {
			t.Errorf("pay task %s answered %q", pay, got)
		}
	}
	if task := check("delegation", c["router"], delegated, "-del-m", 2); task != nil {
		if len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "Hello, Grace" {
			t.Errorf("delegation task %s: artifacts %v, want the one greeting", delegated, task.Artifacts)
		}
		if dels, _ := task.Metadata["a2aflow.delegations"].([]any); len(dels) != 1 {
			t.Errorf("delegation task %s: delegations %v, want one", delegated, task.Metadata["a2aflow.delegations"])
		}
	}
	check("push", c["travel"], ids["push"], "-push-m", 4)
	check("stream", c["assistant"], ids["stream"], "-stream-m", 1)
}

// scheduleCall sends a request to the schedules API and decodes a 2xx
// answer into out.
func (m *mixedLoad) scheduleCall(ctx context.Context, method, path string, body any, out any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, method, m.apiURL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode >= 500:
		return fmt.Errorf("%s %s: HTTP %d %s: %w", method, path, resp.StatusCode, answer, a2a.ErrServerError)
	case resp.StatusCode >= 300:
		return fmt.Errorf("%s %s: HTTP %d %s", method, path, resp.StatusCode, answer)
	case out != nil:
		return json.Unmarshal(answer, out)
	}
	return nil
}

// schedule creates a schedule of echo every 2 s, and returns its ID.
func (m *mixedLoad) schedule(run string) string {
	var v resources.ScheduleView
	err := m.retrying("schedule: create", func(ctx context.Context) error {
		return m.scheduleCall(ctx, http.MethodPost, "/schedules", resources.ScheduleRequest{Name: run, Agent: "echo",
			Message: resources.ScheduleMessage{Text: "tick"}, Every: "2s"}, &v)
	})
	if err != nil {
		m.t.Fatal(err)
	}
	return v.ID
}

// scheduled pauses schedule id and checks every run it started completed:
// a run due while the worker could not be reached started its task, which
// ran once the partition ended, or was skipped (the schedule's default
// overlap: one run at a time), never left working.
func (m *mixedLoad) scheduled(echo *a2aclient.Client, id string) {
	var v resources.ScheduleView
	err := m.retrying("schedule: pause", func(ctx context.Context) error {
		return m.scheduleCall(ctx, http.MethodPost, "/schedules/"+id+":pause", map[string]string{"note": "done"}, nil)
	})
	if err == nil {
		time.Sleep(500 * time.Millisecond) // a run started at the pause shows
		err = m.retrying("schedule: describe", func(ctx context.Context) error {
			return m.scheduleCall(ctx, http.MethodGet, "/schedules/"+id, nil, &v)
		})
	}
	if err != nil {
		m.t.Error(err)
		return
	}
	seen := map[string]bool{}
	for _, r := range v.RecentRuns {
		if seen[r.TaskID] {
			m.t.Errorf("schedule %s: run task %s twice in its recent runs", id, r.TaskID)
		}
		seen[r.TaskID] = true
		if _, err := m.until(echo, a2a.TaskID(r.TaskID), a2a.TaskStateCompleted); err != nil {
			m.t.Errorf("schedule %s: run %s (due %s): %v", id, r.TaskID, r.ScheduledAt.Format("15:04:05"), err)
		}
	}
	m.t.Logf("schedule every 2 s: %d runs, %d skipped as the previous still worked, %d recent runs all completed", v.Runs, v.SkippedOverlap, len(v.RecentRuns))
	// 4 or 5 fires in the workload's 10 s or so: a run before the
	// partition, the one due in it (held until it ends), which the next
	// due ones skip.
	if v.Runs < 2 || v.Runs+v.SkippedOverlap < 3 || len(v.RecentRuns) == 0 {
		m.t.Errorf("schedule %s: %d runs (%d recent), %d skipped; want 2 runs or more, 3 or more fires in the workload's time", id, v.Runs, len(v.RecentRuns), v.SkippedOverlap)
	}
}
