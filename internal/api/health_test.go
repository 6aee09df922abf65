package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/a2aflow/a2aflow/internal/api/guard"
)

// probedTemporal answers CheckHealth and DescribeNamespace with the errors
// it is given, and counts the calls.
type probedTemporal struct {
	client.Client
	health, namespace error
	calls             *atomic.Int32
}

func (p probedTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	p.calls.Add(1)
	if p.health != nil {
		return nil, p.health
	}
	return &client.CheckHealthResponse{}, nil
}

func (p probedTemporal) WorkflowService() workflowservice.WorkflowServiceClient {
	return probedService{namespace: p.namespace, calls: p.calls}
}

type probedService struct {
	workflowservice.WorkflowServiceClient
	namespace error
	calls     *atomic.Int32
}

func (p probedService) DescribeNamespace(context.Context, *workflowservice.DescribeNamespaceRequest, ...grpc.CallOption) (*workflowservice.DescribeNamespaceResponse, error) {
	p.calls.Add(1)
	if p.namespace != nil {
		return nil, p.namespace
	}
	return &workflowservice.DescribeNamespaceResponse{}, nil
}

// secretError is Temporal error text that must reach the log and
// authenticated callers only.
const secretError = "dial tcp 10.1.2.3:7233: connect: connection refused (namespace prod-payments)"

func getHealth(t *testing.T, url, path, apiKey string) (int, ReadinessAnswer, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+path, nil)
	if apiKey != "" {
		req.Header.Set("X-API-Key", apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	var answer ReadinessAnswer
	if err := json.Unmarshal(buf.Bytes(), &answer); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, buf.String())
	}
	return resp.StatusCode, answer, buf.String()
}

// TestHealthAndReadiness checks /healthz (liveness: no Temporal call) and
// /readyz (200 or 503 naming the failed check, its error logged and shown to
// authenticated callers only).
func TestHealthAndReadiness(t *testing.T) {
	workerDown := errors.New("the worker has not started yet")
	tests := []struct {
		name              string
		health, namespace error
		worker            error
		wantStatus        int
		want              ReadinessAnswer
	}{
		{"all ready", nil, nil, nil, http.StatusOK, ReadinessAnswer{
			Status: "ready", Checks: map[string]string{"temporal": "ok", "namespace": "ok", "worker": "ok"}}},
		{"temporal unreachable", errors.New(secretError), nil, nil, http.StatusServiceUnavailable, ReadinessAnswer{
			Status: "unavailable", Failed: []string{"temporal"},
			Checks: map[string]string{"temporal": "failed", "namespace": "skipped", "worker": "ok"}}},
		{"no namespace", nil, serviceerror.NewNamespaceNotFound("prod-payments"), nil, http.StatusServiceUnavailable, ReadinessAnswer{
			Status: "unavailable", Failed: []string{"namespace"},
			Checks: map[string]string{"temporal": "ok", "namespace": "failed", "worker": "ok"}}},
		{"worker not started", nil, nil, workerDown, http.StatusServiceUnavailable, ReadinessAnswer{
			Status: "unavailable", Failed: []string{"worker"},
			Checks: map[string]string{"temporal": "ok", "namespace": "ok", "worker": "failed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncWriter
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			auth, err := guard.NewAuthenticator(t.Context(), guard.AuthConfig{APIKeys: map[string]string{"ops": "ops-key"}})
			if err != nil {
				t.Fatal(err)
			}
			calls := &atomic.Int32{}
			temporal := probedTemporal{health: tt.health, namespace: tt.namespace, calls: calls}
			srv := httptest.NewServer(New(temporal, testRegistry(t), Config{Auth: auth, Logger: logger,
				ReadinessChecks: []Check{{Name: "worker", Run: func(context.Context) error { return tt.worker }}},
			}).Handler())
			t.Cleanup(srv.Close)

			// Liveness calls nothing, whatever Temporal's state.
			status, _, body := getHealth(t, srv.URL, "/healthz", "")
			if status != http.StatusOK || strings.TrimSpace(body) != `{"status":"ok"}` || calls.Load() != 0 {
				t.Errorf("/healthz = %d %s after %d Temporal calls, want 200 {\"status\":\"ok\"} and none", status, body, calls.Load())
			}

			// Anonymous: which check failed, no error text.
			began := time.Now()
			status, got, body := getHealth(t, srv.URL, "/readyz", "")
			if status != tt.wantStatus {
				t.Errorf("/readyz status = %d, want %d", status, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("/readyz answer (-want +got):\n%s", diff)
			}
			if strings.Contains(body, "10.1.2.3") || strings.Contains(body, "prod-payments") {
				t.Errorf("/readyz shows an anonymous caller Temporal's error: %s", body)
			}
			// A second probe within a second reuses the round of checks
			// (the round ended after began: a machine that paused for
			// readinessCacheFor between the two probes proves nothing).
			before := calls.Load()
			getHealth(t, srv.URL, "/readyz", "")
			if took := time.Since(began); took >= readinessCacheFor {
				t.Logf("the two probes took %s, not within readinessCacheFor: reuse not checked", took)
			} else if calls.Load() != before {
				t.Errorf("a second /readyz within a second called Temporal %d more times", calls.Load()-before)
			}
			if len(tt.want.Failed) == 0 {
				return
			}
			// The error is in the log, once.
			failed := tt.want.Failed[0]
			if n := strings.Count(logs.String(), "readiness check failed"); n != 1 || !strings.Contains(logs.String(), "check="+failed) {
				t.Errorf("log has %d readiness failures, want 1 naming %s:\n%s", n, failed, logs.String())
			}
			// An authenticated caller sees it.
			_, got, _ = getHealth(t, srv.URL, "/readyz", "ops-key")
			if got.Errors[failed] == "" {
				t.Errorf("authenticated /readyz has no error for %s: %+v", failed, got)
			}
		})
	}
}

// TestReadinessShuttingDown checks that /readyz answers 503 shutting_down
// once Config.ShuttingDown is closed, while /healthz still answers 200.
func TestReadinessShuttingDown(t *testing.T) {
	draining := make(chan struct{})
	srv := httptest.NewServer(New(probedTemporal{calls: &atomic.Int32{}}, testRegistry(t), Config{ShuttingDown: draining}).Handler())
	t.Cleanup(srv.Close)
	if status, _, _ := getHealth(t, srv.URL, "/readyz", ""); status != http.StatusOK {
		t.Fatalf("/readyz = %d before the shutdown, want 200", status)
	}
	close(draining)
	status, got, _ := getHealth(t, srv.URL, "/readyz", "")
	if status != http.StatusServiceUnavailable || got.Status != "shutting_down" {
		t.Errorf("/readyz = %d %+v while shutting down, want 503 shutting_down", status, got)
	}
	if status, _, _ := getHealth(t, srv.URL, "/healthz", ""); status != http.StatusOK {
		t.Errorf("/healthz = %d while shutting down, want 200", status)
	}
}

// syncWriter is a log destination safe for the server's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
