package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// usageConfig is an LLM agent priced by the file's [[llm-prices]].
const usageConfig = `
[[agents]]
name = "chat"
description = "Chats."
system-prompt = "You chat."
model = "chat-model-1"

[[llm-prices]]
provider = "openai"
model = "chat-model*"
input = 2.0
cached-input = 0.5
output = 10
`

// usageCallCost is what one answer of newFakePricedLLM costs by
// usageConfig: 600 uncached, 400 cached prompt tokens and 200 answer tokens.
const usageCallCost = (600*2.0 + 400*0.5 + 200*10.0) / 1e6

// newFakePricedLLM is an OpenAI Chat Completions endpoint whose every
// answer used 1,000 prompt tokens (400 cached) and 200 answer tokens; its
// first request is answered 429 (Retry-After 1 s), so the first call is
// retried by Temporal.
func newFakePricedLLM(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
			return
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-usage","object":"chat.completion","created":1700000000,"model":"chat-model-1-2026",
			"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":%s}],
			"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200,"prompt_tokens_details":{"cached_tokens":400}}}`,
			fakes.TextMessage("Hello!"))
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// TestLLMUsageAndCost: every LLM call's tokens and cost (by the config
// file's price table) are recorded in the task's metadata and memo, and
// totalled per agent, context, owner and task by GET /usage and `a2aflow
// usage`, each tenant seeing its own only; /metrics has the cost by agent
// and tenant. A call answered 429 and retried counts once.
func TestLLMUsageAndCost(t *testing.T) {
	fake, requests := newFakePricedLLM(t)
	fakes.UseOpenAI(t, fake.URL, "sk-usage-test", "default-model")
	dir := t.TempDir()
	path := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(path, []byte(usageConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{"alice": "alice-key-0123456789", "bob": "bob-key-0123456789"}
	s := harness.StartServe(t, filepath.Join(dir, "data"), "--config", path, "--api-keys", "alice="+keys["alice"]+",bob="+keys["bob"])
	ctx := harness.Context(t)

	do := func(who, method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequestWithContext(ctx, method, s.APIURL+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		if who != "" {
			req.Header.Set("X-API-Key", keys[who])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	type task struct {
		ID, ContextID string
		Metadata      map[string]json.RawMessage
	}
	send := func(who, msgID, text string) task {
		t.Helper()
		status, raw := do(who, http.MethodPost, "/agents/chat", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
			"params": map[string]any{"message": map[string]any{"messageId": msgID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}})
		var out struct {
			Result struct {
				Task struct {
					ID        string                     `json:"id"`
					ContextID string                     `json:"contextId"`
					Metadata  map[string]json.RawMessage `json:"metadata"`
					Status    struct{ State string }     `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("SendMessage as %s: HTTP %d %s", who, status, raw)
		}
		return task{ID: out.Result.Task.ID, ContextID: out.Result.Task.ContextID, Metadata: out.Result.Task.Metadata}
	}
	type usage struct {
		InputTokens, CachedInputTokens, OutputTokens, Calls int64
		CostUSD                                             float64
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

	a1 := send("alice", "alice-1", "Hi")
	a2 := send("alice", "alice-2", "Hi again")
	b1 := send("bob", "bob-1", "Hello")
	if n := requests.Load(); n != 4 {
		t.Errorf("the provider got %d requests, want 4 (one 429, then three answers)", n)
	}

	// The task's metadata: the call's tokens and cost, once, although the
	// first call was retried.
	var u usage
	if err := json.Unmarshal(a1.Metadata["a2aflow.llmUsage"], &u); err != nil {
		t.Fatalf("alice's first task metadata %s: %v", a1.Metadata, err)
	}
	if u.Calls != 1 || u.InputTokens != 1000 || u.CachedInputTokens != 400 || u.OutputTokens != 200 || !near(u.CostUSD, usageCallCost) {
		t.Errorf("task usage = %+v, want 1 call of 1000 (400 cached) + 200 tokens costing %v", u, usageCallCost)
	}

	// The memo shows the same in the Temporal UI.
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	d, err := tc.DescribeWorkflowExecution(ctx, a1.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var memo usage
	if p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()["a2aflow.llmUsage"]; p == nil {
		t.Errorf("the memo has no a2aflow.llmUsage: %v", d.GetWorkflowExecutionInfo().GetMemo())
	} else if err := converter.GetDefaultDataConverter().FromPayload(p, &memo); err != nil || memo != u {
		t.Errorf("memo usage = %+v (%v), want %+v", memo, err, u)
	}

	// GET /usage: each tenant its own, by every key.
	totals := func(who, query string) (int, map[string]usage, usage) {
		t.Helper()
		status, raw := do(who, http.MethodGet, "/usage?"+query, nil)
		if status != http.StatusOK {
			return status, nil, usage{}
		}
		var out struct {
			Totals []struct {
				Key string
				usage
			}
			Total usage
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("/usage?%s: %s", query, raw)
		}
		m := map[string]usage{}
		for _, row := range out.Totals {
			m[row.Key] = row.usage
		}
		return status, m, out.Total
	}
	_, byOwner, total := totals("alice", "by=owner")
	if len(byOwner) != 1 || byOwner["alice"].Calls != 2 || !near(byOwner["alice"].CostUSD, 2*usageCallCost) || total.Calls != 2 {
		t.Errorf("alice's usage by owner = %+v (total %+v), want hers only: 2 calls", byOwner, total)
	}
	_, byTask, _ := totals("alice", "by=task")
	if len(byTask) != 2 || byTask[a1.ID].Calls != 1 || byTask[a2.ID].Calls != 1 || byTask[b1.ID].Calls != 0 {
		t.Errorf("alice's usage by task = %+v", byTask)
	}
	_, byContext, _ := totals("bob", "by=context")
	if len(byContext) != 1 || byContext[b1.ContextID].Calls != 1 || byContext[b1.ContextID].CachedInputTokens != 400 {
		t.Errorf("bob's usage by context = %+v", byContext)
	}
	if _, byTask, _ := totals("bob", "by=task&task="+a1.ID); len(byTask) != 0 {
		t.Errorf("bob reads alice's task usage: %+v", byTask)
	}
	_, byAgent, _ := totals("bob", "by=agent")
	if byAgent["chat"].Calls != 1 || !near(byAgent["chat"].CostUSD, usageCallCost) {
		t.Errorf("bob's usage by agent = %+v", byAgent)
	}
	if status, _, _ := totals("", "by=agent"); status != http.StatusUnauthorized {
		t.Errorf("/usage without credentials: HTTP %d, want 401", status)
	}
	if status, _, _ := totals("alice", "by=nonsense"); status != http.StatusBadRequest {
		t.Errorf("/usage?by=nonsense: HTTP %d, want 400", status)
	}
	if status, _, _ := totals("alice", "since=yesterday"); status != http.StatusBadRequest {
		t.Errorf("/usage?since=yesterday: HTTP %d, want 400", status)
	}

	// a2aflow usage prints the same table.
	r := runCLI(t, "usage", "--api", s.APIURL, "--api-key", keys["alice"], "--by", "owner")
	if r.code != 0 || !strings.Contains(r.stdout, "alice") || strings.Contains(r.stdout, "bob") || !strings.Contains(r.stdout, fmt.Sprintf("%.6f", 2*usageCallCost)) {
		t.Errorf("a2aflow usage --by owner as alice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// /metrics: the cost by provider, model, agent and tenant.
	_, metrics := do("", http.MethodGet, "/metrics", nil)
	want := fmt.Sprintf(`a2aflow_llm_cost_usd_total{agent="chat",model="chat-model-1",provider="openai",tenant="alice"} %g`, 2*usageCallCost)
	if !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "a2aflow_llm_"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
