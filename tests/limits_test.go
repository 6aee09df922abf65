package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// limitsConfig has an agent on a model limited to 5 calls at once across
// every worker, and one on a model without a limit.
const limitsConfig = `
[[agents]]
name = "busy"
description = "Chats on a limited model."
system-prompt = "You chat."
model = "limited-model-1"

[[agents]]
name = "patient"
description = "Chats on a model that asks to slow down."
system-prompt = "You chat."
model = "retry-model"

[[llm-limits]]
provider = "openai"
model = "limited-model*"
concurrency = 5
`

// limitsFake is an OpenAI Chat Completions endpoint that counts the
// requests in flight for the limited model (each takes callTime), and
// answers the first two requests for retry-model 429 and 503, each with
// Retry-After: 2, noting when each request arrived.
type limitsFake struct {
	mu                      sync.Mutex
	inFlight, most, limited int
	retryTimes              []time.Time
}

const limitsCallTime = 300 * time.Millisecond

func (f *limitsFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &req)
	if strings.HasPrefix(req.Model, "retry-model") {
		f.mu.Lock()
		f.retryTimes = append(f.retryTimes, time.Now())
		n := len(f.retryTimes)
		f.mu.Unlock()
		if n <= 2 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "2")
			if n == 1 {
				w.WriteHeader(http.StatusTooManyRequests)
			} else {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
			return
		}
		fakes.WriteChat(w, req.Stream, "chatcmpl-retry", req.Model, fakes.TextMessage("Thanks for waiting."), 10, 5)
		return
	}
	f.mu.Lock()
	f.inFlight++
	f.limited++
	f.most = max(f.most, f.inFlight)
	f.mu.Unlock()
	time.Sleep(limitsCallTime)
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
	fakes.WriteChat(w, req.Stream, "chatcmpl-limited", req.Model, fakes.TextMessage("Done."), 10, 5)
}

// TestLLMCallLimits: with `a2aflow temporal`, two `a2aflow worker`
// processes and `a2aflow api`, 50 tasks sent at once to an agent whose
// model is limited to 5 concurrent calls ([[llm-limits]]) never have more
// than 5 calls at the provider, although the two workers together run far
// more activities at once; all 50 complete. A 429 and then a 503, each
// with Retry-After: 2, make the next attempts wait that long: at least 2 s,
// and less than the 4 s the retry policy's own backoff would give the
// second retry.
func TestLLMCallLimits(t *testing.T) {
	fake := &limitsFake{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fakes.UseOpenAI(t, srv.URL, "sk-limits-test", "default-model")

	dataDir := t.TempDir()
	path := filepath.Join(dataDir, "a2aflow.toml")
	if err := os.WriteFile(path, []byte(limitsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	env := []string{"A2AFLOW_TEMPORAL_ADDR=" + temporalAddr, "A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir,
		"A2AFLOW_SECRETS_KEY=" + harness.SecretsKey, "A2AFLOW_CONFIG=" + path}
	tp := harness.Start(t, "a2aflow temporal", env, "temporal", "--data-dir", dataDir, "--ui-addr", "")
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	// Two workers sharing the data dir's database, which holds the slots.
	for i := 1; i <= 2; i++ {
		w := harness.Start(t, fmt.Sprintf("a2aflow worker %d", i), env, "worker", "--data-dir", dataDir)
		w.WaitOutput("a2aflow worker is running", time.Minute)
	}
	api := harness.Start(t, "a2aflow api", env, "api", "--http-addr", strings.TrimPrefix(apiURL, "http://"))
	api.WaitOutput("a2aflow API is serving", time.Minute)
	harness.WaitHealthy(t, apiURL)
	ctx := harness.Context(t)

	send := func(agent, msgID string) error {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
			"params": map[string]any{"message": map[string]any{"messageId": msgID, "role": "ROLE_USER",
				"parts": []any{map[string]any{"text": "Hi"}}}}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/agents/"+agent, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out struct {
			Result struct {
				Task struct {
					Status struct{ State string } `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
			return fmt.Errorf("HTTP %d %s", resp.StatusCode, raw)
		}
		return nil
	}

	// The retried calls run meanwhile, on a model without a limit.
	retried := make(chan error, 1)
	go func() { retried <- send("patient", "patient-1") }()

	const tasks = 50
	began := time.Now()
	errs := make(chan error, tasks)
	for i := range tasks {
		go func() { errs <- send("busy", fmt.Sprintf("busy-%d", i)) }()
	}
	for range tasks {
		if err := <-errs; err != nil {
			t.Errorf("a task of the limited agent: %v", err)
		}
	}
	took := time.Since(began)
	fake.mu.Lock()
	most, calls := fake.most, fake.limited
	fake.mu.Unlock()
	t.Logf("%d tasks, %d calls of %v through a limit of 5: at most %d at once at the provider; %v in all (at least %v at 5 at once)",
		tasks, calls, limitsCallTime, most, took.Round(time.Millisecond), limitsCallTime*time.Duration(calls)/5)
	if calls < tasks {
		t.Errorf("the provider got %d calls of the limited model, want at least %d", calls, tasks)
	}
	if most > 5 {
		t.Errorf("the provider had %d calls at once, over the limit of 5", most)
	}
	if most < 3 {
		t.Errorf("the provider had at most %d calls at once: the limit of 5 is not used", most)
	}

	if err := <-retried; err != nil {
		t.Fatalf("the task whose calls were retried: %v", err)
	}
	fake.mu.Lock()
	times := append([]time.Time(nil), fake.retryTimes...)
	fake.mu.Unlock()
	if len(times) != 3 {
		t.Fatalf("retry-model got %d requests, want 3 (429, 503, answer)", len(times))
	}
	first, second := times[1].Sub(times[0]), times[2].Sub(times[1])
	t.Logf("after the 429 (Retry-After: 2) the next attempt came %v later; after the 503 (Retry-After: 2) %v later",
		first.Round(time.Millisecond), second.Round(time.Millisecond))
	if first < 2*time.Second || second < 2*time.Second {
		t.Errorf("an attempt came before the Retry-After of 2 s: %v, %v", first, second)
	}
	if second >= 4*time.Second {
		t.Errorf("the attempt after the 503 came %v later: the retry policy's backoff (4 s), not the Retry-After (2 s)", second)
	}
}
