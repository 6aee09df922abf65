package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestJSONLogs runs a travel task on `serve --log-format json --log-level
// info` with an API key and a push config token, and reads the logs: every
// log line is JSON, the lines of the task (the activity's, the access
// lines of its requests) carry its task_id, the access lines have status
// and duration, the SDK's info lines stay out, and no line holds a secret.
func TestJSONLogs(t *testing.T) {
	const (
		apiKey    = "alice-key-logs-e2e-0123456789"
		pushToken = "push-token-logs-e2e-secret"
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(hook.Close)
	s := harness.StartServe(t, t.TempDir(), "--log-format", "json", "--log-level", "info",
		"--api-keys", "alice="+apiKey, "--push-allow-hosts", "loopback")

	send := func(message string) (id, contextID, state string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.APIURL+"/", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":`+message+`,`+
				`"configuration":{"taskPushNotificationConfig":{"url":"`+hook.URL+`","token":"`+pushToken+`"}}}}`))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result struct {
				Task struct {
					ID        string `json:"id"`
					ContextID string `json:"contextId"`
					Status    struct {
						State string `json:"state"`
					} `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &out); err != nil || out.Result.Task.ID == "" {
			t.Fatalf("SendMessage: %s %s", resp.Status, raw)
		}
		return out.Result.Task.ID, out.Result.Task.ContextID, out.Result.Task.Status.State
	}
	text := func(taskID, text string) string {
		task := ""
		if taskID != "" {
			task = `"taskId":"` + taskID + `",`
		}
		return `{"messageId":"` + a2a.NewMessageID() + `",` + task + `"role":"ROLE_USER","parts":[{"text":"` + text + `"}]}`
	}
	taskID, contextID, _ := send(text("", "Book a flight"))
	for _, answer := range []string{"Lisbon", "2026-12-24", "2"} {
		_, _, state := send(text(taskID, answer))
		if answer == "2" && state != "TASK_STATE_COMPLETED" {
			t.Fatalf("task %s is %s, want completed", taskID, state)
		}
	}

	// The logs of the task: JSON lines; the other lines are what serve
	// prints on standard output ("a2aflow is serving...").
	type line = map[string]any
	read := func() (access, activity []line) {
		for l := range strings.Lines(s.Proc().Out.String()) {
			if !strings.HasPrefix(l, "{") {
				continue
			}
			var rec line
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("a log line is not JSON: %q", l)
			}
			if rec["level"] == "INFO" && rec["component"] == "temporal-sdk" {
				t.Errorf("the SDK's info lines are logged at --log-level info: %v", rec)
			}
			if rec["task_id"] != taskID {
				continue
			}
			switch {
			case rec["msg"] == "http request":
				access = append(access, rec)
			case rec["component"] == "activity":
				activity = append(activity, rec)
			}
		}
		return access, activity
	}
	// The access line is logged once the answer is written.
	waitFor(t, 10*time.Second, func() bool { access, _ := read(); return len(access) == 4 })
	access, activity := read()
	for _, rec := range access {
		for k, v := range map[string]any{"method": "POST", "path": "/", "a2a_method": "SendMessage", "binding": "jsonrpc",
			"a2a_version": "1.0", "status": 200.0, "principal": "alice", "agent": "travel", "context_id": contextID, "level": "INFO"} {
			if rec[k] != v {
				t.Errorf("access line %v: %s = %v, want %v", rec, k, rec[k], v)
			}
		}
		if d, ok := rec["duration_ms"].(float64); !ok || d <= 0 {
			t.Errorf("access line %v: no duration", rec)
		}
	}
	booked := false
	for _, rec := range activity {
		if rec["msg"] == "trip booked" {
			booked = true
			if rec["context_id"] != contextID || rec["agent"] != "travel" || rec["ActivityType"] == nil {
				t.Errorf("activity line %v: want the task's context_id and agent, and the SDK's fields", rec)
			}
		}
	}
	if !booked {
		t.Errorf("no \"trip booked\" line with task_id %s:\n%s", taskID, s.Proc().Out.String())
	}
	out := s.Proc().Out.String()
	for _, secret := range []string{apiKey, pushToken} {
		if strings.Contains(out, secret) {
			t.Errorf("the logs hold the secret %q", secret)
		}
	}
}
