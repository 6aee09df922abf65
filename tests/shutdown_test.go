package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestGracefulShutdown sends SIGTERM to `a2aflow serve` while a subscriber
// follows a task: the stream ends at once and cleanly (no error), the
// process stops taking requests and exits 0 within --shutdown-timeout, and
// after a restart on the same data dir the subscriber resubscribes and gets
// the task as it is and then every later event: nothing is lost.
func TestGracefulShutdown(t *testing.T) {
	const shutdownTimeout = 10 * time.Second
	s := harness.StartServe(t, t.TempDir(), "--shutdown-timeout", shutdownTimeout.String())
	ctx := harness.Context(t)
	driver := streamClient(t, ctx, s.APIURL)
	task := harness.Send(t, ctx, driver, "", "Book a flight")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")

	before := harness.Subscribe(ctx, "before the shutdown", streamClient(t, ctx, s.APIURL), task.ID)
	before.WaitLive(t)
	harness.Send(t, ctx, driver, task.ID, "Lisbon")
	before.WaitEvents(t, 3)

	p := s.Proc()
	sent := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	gotBefore, err := before.Wait(t)
	streamEnded := time.Since(sent)
	if err != nil {
		t.Errorf("the stream ended with %v at the shutdown, want a clean end", err)
	}
	if streamEnded > 2*time.Second {
		t.Errorf("the stream ended %s after SIGTERM, want at once", streamEnded)
	}
	// The listener is closed before the streams end: no new request gets in.
	if resp, err := http.Get(s.APIURL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /healthz after the streams ended answered %d, want a refused connection", resp.StatusCode)
	}
	select {
	case <-p.Done:
	case <-time.After(shutdownTimeout + 10*time.Second):
		t.Fatalf("serve did not exit within %s of SIGTERM", shutdownTimeout+10*time.Second)
	}
	exited := time.Since(sent)
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
	if exited > shutdownTimeout {
		t.Errorf("serve took %s to exit, more than --shutdown-timeout %s", exited, shutdownTimeout)
	}
	t.Logf("SIGTERM with a stream open: the stream ended cleanly after %s, serve exited 0 after %s",
		streamEnded.Round(100*time.Microsecond), exited.Round(time.Millisecond))
	if diff := cmp.Diff(travelEvents[:3], gotBefore); diff != "" {
		t.Errorf("events before the shutdown (-want +got):\n%s", diff)
	}

	// The subscriber resubscribes to the restarted server.
	s.Restart()
	driver = streamClient(t, ctx, s.APIURL)
	after := harness.Subscribe(ctx, "after the restart", streamClient(t, ctx, s.APIURL), task.ID)
	after.WaitLive(t)
	for _, answer := range []string{"2026-12-24", "2"} {
		task = harness.Send(t, ctx, driver, task.ID, answer)
	}
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	gotAfter, err := after.Wait(t)
	if err != nil {
		t.Errorf("subscriber after the restart: %v", err)
	}
	if diff := cmp.Diff(resumedEvents(travelEvents, len(gotBefore), false), gotAfter); diff != "" {
		t.Errorf("events after resubscribing (-want +got):\n%s", diff)
	}
}

// TestWorkerHealthPort starts `a2aflow worker --health-addr` against
// `a2aflow temporal`: /readyz is 200 with the worker polling and Temporal
// reachable, 503 naming "temporal" (and no error text) once Temporal is
// gone while /healthz still answers, and the worker exits 0 on SIGTERM.
func TestWorkerHealthPort(t *testing.T) {
	dataDir := t.TempDir()
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	healthURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	env := []string{"A2AFLOW_TEMPORAL_ADDR=" + temporalAddr, "A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + harness.SecretsKey}
	tp := harness.Start(t, "a2aflow temporal", env, "temporal", "--data-dir", dataDir, "--ui-addr", "")
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	w := harness.Start(t, "a2aflow worker", env, "worker", "--health-addr", strings.TrimPrefix(healthURL, "http://"))
	w.WaitOutput("a2aflow worker is running", time.Minute)

	type readiness struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
		Failed []string          `json:"failed"`
	}
	get := func(path string) (int, readiness, string) {
		t.Helper()
		resp, err := http.Get(healthURL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		var r readiness
		_ = json.Unmarshal(raw, &r)
		return resp.StatusCode, r, string(raw)
	}
	waitReadiness := func(want int) readiness {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			status, r, body := get("/readyz")
			if status == want {
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz is %d %s after 30s, want %d", status, body, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	r := waitReadiness(http.StatusOK)
	if diff := cmp.Diff(map[string]string{"worker": "ok", "temporal": "ok", "namespace": "ok"}, r.Checks); diff != "" {
		t.Errorf("ready worker's checks (-want +got):\n%s", diff)
	}
	// The health port serves the worker's metrics too: the SDK's (its
	// polls), reported every second.
	for deadline := time.Now().Add(15 * time.Second); ; {
		families, body := scrapeMetrics(t, healthURL+"/metrics")
		if hasSeries(families["temporal_worker_start_total"], map[string]string{"worker_type": "WorkflowWorker"}) && hasSeries(families["temporal_long_request_total"], nil) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker's /metrics lacks temporal_worker_start_total or temporal_long_request_total:\n%s", body)
		}
		time.Sleep(300 * time.Millisecond)
	}

	tp.Kill()
	r = waitReadiness(http.StatusServiceUnavailable)
	if diff := cmp.Diff([]string{"temporal"}, r.Failed); diff != "" {
		t.Errorf("failed checks without Temporal (-want +got):\n%s", diff)
	}
	if _, _, body := get("/readyz"); strings.Contains(body, temporalAddr) || strings.Contains(body, "refused") {
		t.Errorf("/readyz shows Temporal's error to an anonymous caller: %s", body)
	}
	if status, _, _ := get("/healthz"); status != http.StatusOK {
		t.Errorf("/healthz = %d without Temporal, want 200 (the process lives)", status)
	}

	sent := time.Now()
	_ = w.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.Done:
	case <-time.After(40 * time.Second):
		t.Fatal("the worker did not exit within 40s of SIGTERM")
	}
	if code := w.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the worker exited %d after SIGTERM, want 0", code)
	}
	t.Logf("worker without Temporal exited 0 %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
}
