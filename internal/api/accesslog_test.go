package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/guard/guardtest"
)

// Secrets the requests of TestAccessLog carry, which no log line may hold.
const (
	logTestAPIKey    = "alice-key-0123456789"
	logTestPushToken = "push-token-must-not-be-logged"
	logTestPushCred  = "push-credentials-must-not-be-logged"
	logTestQuery     = "query-secret-must-not-be-logged"
)

// unavailableTemporal refuses every task write and knows no task: the
// requests of TestAccessLog end in errors after reaching the service.
type unavailableTemporal struct{ healthyTemporal }

func (unavailableTemporal) NewWithStartWorkflowOperation(client.StartWorkflowOptions, any, ...any) client.WithStartWorkflowOperation {
	return nil
}

func (unavailableTemporal) UpdateWithStartWorkflow(context.Context, client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return nil, serviceerror.NewUnavailable("temporal is down")
}

func (unavailableTemporal) UpdateWorkflow(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return nil, serviceerror.NewUnavailable("temporal is down")
}

func (unavailableTemporal) QueryWorkflowWithOptions(context.Context, *client.QueryWorkflowWithOptionsRequest) (*client.QueryWorkflowWithOptionsResponse, error) {
	return nil, serviceerror.NewNotFound("workflow not found")
}

// logBuffer is a goroutine-safe log destination.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines parses every line as a JSON object.
func (l *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.b.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, rec)
	}
	return out
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestAccessLog(t *testing.T) {
	auth, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{
		APIKeys: map[string]string{"alice": logTestAPIKey},
		JWT:     guard.JWTConfig{HS256Secret: []byte(guardtest.Secret), Issuer: guardtest.Issuer, Audience: guardtest.Audience},
	})
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := httptest.NewServer(New(unavailableTemporal{}, testRegistry(t), Config{Auth: auth, Logger: logger, AccessLog: true}).Handler())
	t.Cleanup(srv.Close)
	token := guardtest.Sign(t, jwt.SigningMethodHS256, "", []byte(guardtest.Secret), guardtest.Claims("bob"))

	push := `"taskPushNotificationConfig":{"url":"https://93.184.216.34/hook","token":"` + logTestPushToken +
		`","authentication":{"scheme":"Bearer","credentials":"` + logTestPushCred + `"}}`
	message := `"message":{"messageId":"m-1","role":"ROLE_USER","contextId":"ctx-7","parts":[{"text":"hi"}]}`
	do := func(method, path, body string, header map[string]string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	// JSON-RPC, bearer token, a push config with a token and credentials.
	do("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{`+message+`,"configuration":{`+push+`}}}`, bearer)
	// HTTP+JSON on another agent, API key, a secret in the query string.
	do("GET", "/agents/other/tasks/task-9?historyLength=1&token="+logTestQuery, "", map[string]string{"X-API-Key": logTestAPIKey})
	// A stream: its line is logged once, when it ends.
	do("POST", "/message:stream", `{`+message+`,"configuration":{`+push+`}}`, bearer)
	// Refused credentials.
	do("POST", "/", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t"}}`, map[string]string{"Authorization": "Bearer " + token + "x"})
	srv.Close() // every request has ended, and logged

	out := logs.String()
	if strings.Contains(out, "panic") {
		t.Fatalf("a request panicked:\n%s", out)
	}
	for _, secret := range []string{token, logTestAPIKey, logTestPushToken, logTestPushCred, logTestQuery, "Authorization", "X-Api-Key"} {
		if strings.Contains(out, secret) {
			t.Errorf("the logs hold %q:\n%s", secret, out)
		}
	}
	var access []map[string]any
	for _, rec := range logs.lines(t) {
		if rec["msg"] == "http request" {
			access = append(access, rec)
		}
	}
	want := []map[string]any{
		{"method": "POST", "path": "/", "a2a_method": "SendMessage", "binding": "jsonrpc", "a2a_version": "1.0",
			"status": 200.0, "principal": "bob", "agent": "echo", "context_id": "ctx-7"},
		{"method": "GET", "path": "/agents/other/tasks/task-9", "a2a_method": "GetTask", "binding": "http+json", "a2a_version": "1.0",
			"status": 404.0, "principal": "alice", "agent": "other", "task_id": "task-9"},
		{"method": "POST", "path": "/message:stream", "a2a_method": "SendStreamingMessage", "binding": "http+json",
			"principal": "bob", "agent": "echo", "context_id": "ctx-7"},
		{"method": "POST", "path": "/", "status": 401.0},
	}
	if len(access) != len(want) {
		t.Fatalf("%d access lines, want %d (one per request):\n%s", len(access), len(want), out)
	}
	for i, w := range want {
		got := access[i]
		for k, v := range w {
			if got[k] != v {
				t.Errorf("access line %d: %s = %v, want %v", i, k, got[k], v)
			}
		}
		if d, ok := got["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("access line %d: duration_ms = %v", i, got["duration_ms"])
		}
		if b, ok := got["bytes"].(float64); !ok || b <= 0 {
			t.Errorf("access line %d: bytes = %v", i, got["bytes"])
		}
		if got["level"] != "INFO" || got["remote"] == nil {
			t.Errorf("access line %d: level %v, remote %v", i, got["level"], got["remote"])
		}
	}
	if _, ok := access[3]["principal"]; ok {
		t.Errorf("a refused request has a principal: %v", access[3])
	}
}

func TestAccessLogOff(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := httptest.NewServer(New(unavailableTemporal{}, testRegistry(t), Config{Logger: logger}).Handler())
	resp, err := http.Get(srv.URL + "/agents")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	if strings.Contains(logs.String(), "http request") {
		t.Errorf("access lines without Config.AccessLog:\n%s", logs.String())
	}
}

// TestAccessLogBounds: what the client chooses (path, JSON-RPC method, task
// ID) is bounded on the access line.
func TestAccessLogBounds(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := New(unavailableTemporal{}, testRegistry(t), Config{Logger: logger, AccessLog: true}).Handler()
	long := strings.Repeat("x", 5000)
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+long+`","params":{}}`)),
		httptest.NewRequest("GET", "/tasks/"+long, nil),
		httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+long+`"}}`)),
	} {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	lines := logs.lines(t)
	if len(lines) < 3 {
		t.Fatalf("%d lines:\n%s", len(lines), logs.String())
	}
	for _, rec := range lines {
		for _, k := range []string{"path", "a2a_method", "task_id"} {
			if v, _ := rec[k].(string); len(v) > 600 {
				t.Errorf("%s has %d bytes", k, len(v))
			}
		}
	}
}
