package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestNoWorkerAnswersInTime: with Temporal and the API up but no worker, a
// blocking SendMessage answers within the wait bound with a retryable error
// (JSON-RPC -32603 whose data says NO_WORKER; HTTP+JSON 503 with
// Retry-After) instead of hanging; more sends than Temporal's 10 updates in
// flight get the same retryable answer at once; CancelTask is recorded
// through Temporal's cancel request. Once a worker starts, the same request
// (same messageId) is applied exactly once, and the cancel ends the other task.
func TestNoWorkerAnswersInTime(t *testing.T) {
	dataDir := t.TempDir()
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	env := []string{"A2AFLOW_TEMPORAL_ADDR=" + temporalAddr, "A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + harness.SecretsKey}
	tp := harness.Start(t, "a2aflow temporal", env, "temporal", "--ui-addr", "")
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	api := harness.Start(t, "a2aflow api", env, "api", "--http-addr", strings.TrimPrefix(apiURL, "http://"), "--wait-timeout", "2s")
	api.WaitOutput("a2aflow API is serving", time.Minute)
	harness.WaitHealthy(t, apiURL)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, apiURL)

	// A task waiting for an answer; then its worker dies.
	w := harness.Start(t, "a2aflow worker", env, "worker")
	w.WaitOutput("a2aflow worker is running", time.Minute)
	busy := harness.Send(t, ctx, c, "", "Book a flight")
	harness.WantState(t, busy, a2a.TaskStateInputRequired, "Where to?")
	w.Kill()

	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Book a flight"))
	first.ID = "no-worker-1"
	began := time.Now()
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: first})
	took := time.Since(began)
	if !errors.Is(err, a2a.ErrInternalError) || errorData(err)["reason"] != "NO_WORKER" || errorData(err)["retryable"] != true {
		t.Fatalf("SendMessage without a worker: %v (data %v), want a retryable NO_WORKER internal error", err, errorData(err))
	}
	if took > 10*time.Second {
		t.Errorf("the answer took %v, want about the 2s bound", took)
	}
	// Reads are bounded too.
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: busy.ID}); errorData(err)["reason"] != "NO_WORKER" {
		t.Errorf("GetTask without a worker: %v (data %v), want the retryable NO_WORKER answer", err, errorData(err))
	}

	// The same over HTTP+JSON: 503 with Retry-After.
	body, _ := json.Marshal(map[string]any{"message": map[string]any{
		"messageId": "no-worker-rest", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Book a flight"}}}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/message:send", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("HTTP+JSON without a worker: %d (Retry-After %q) %s, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}

	// More messages than Temporal lets wait in flight for one workflow.
	var wg sync.WaitGroup
	var mu sync.Mutex
	reasons := map[string]int{}
	for i := range 14 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("answer %d", i)))
			m.ID, m.TaskID = fmt.Sprintf("busy-answer-%02d", i), busy.ID
			_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			mu.Lock()
			defer mu.Unlock()
			reason, _ := errorData(err)["reason"].(string)
			if err != nil && reason == "" {
				reason = err.Error()
			}
			reasons[reason]++
		}()
	}
	wg.Wait()
	// Past Temporal's 10, the SDK retries ResourceExhausted until the
	// bound: every sender gets the retryable answer within it.
	if reasons["TOO_MANY_UPDATES"]+reasons["NO_WORKER"] != 14 {
		t.Errorf("answers to 14 sends without a worker: %v, want only the retryable NO_WORKER or TOO_MANY_UPDATES", reasons)
	}
	// Cancel still gets through: Temporal records the request.
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: busy.ID}); errorData(err)["reason"] != "NO_WORKER" {
		t.Errorf("CancelTask without a worker: %v (data %v), want the retryable answer", err, errorData(err))
	}

	// A worker comes back; the client sends the same request again.
	w = harness.Start(t, "a2aflow worker", env, "worker")
	w.WaitOutput("a2aflow worker is running", time.Minute)
	task := sendWithRetry(t, ctx, func() *a2aclient.Client { return c }, first, nil)
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if users := countRole(got.History, a2a.MessageRoleUser); users != 1 {
		t.Errorf("the retried first message is in history %d times, want once", users)
	}
	eventually(t, 30*time.Second, func() error {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: busy.ID})
		if err != nil {
			return err
		}
		if got.Status.State != a2a.TaskStateCanceled {
			return fmt.Errorf("the canceled task is %s", got.Status.State)
		}
		return nil
	})
}

func countRole(history []*a2a.Message, role a2a.MessageRole) int {
	n := 0
	for _, m := range history {
		if m.Role == role {
			n++
		}
	}
	return n
}
