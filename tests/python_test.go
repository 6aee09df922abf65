package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// pythonSDKVersion is the a2a-sdk version tests/python/requirements.txt pins.
const pythonSDKVersion = "1.3.0"

// pythonVenv is the virtual environment .ci/run installs
// tests/python/requirements.txt into (gitignored).
const pythonVenv = "python/.venv"

// pythonReport is what tests/python/a2a_client.py prints: the travel
// matrix's clientReport and, under "more", the methods beyond it.
type pythonReport struct {
	clientReport
	More pythonMore `json:"more"`
}

type pythonMore struct {
	TaskID    string   `json:"taskId"`
	ListTasks []string `json:"listTasks"`
	// PushTaskID is the task the push configs are made for (the ListTasks
	// task, or another when ListTasks broke off).
	PushTaskID string `json:"pushTaskId"`
	Push       struct {
		ID          string   `json:"id"`
		Created     string   `json:"created"`
		Got         string   `json:"got"`
		Listed      []string `json:"listed"`
		Deleted     bool     `json:"deleted"`
		AfterDelete []string `json:"afterDelete"`
		GetDeleted  string   `json:"getDeleted"`
	} `json:"push"`
	// ContentType names the errors of a message with a part the agent does
	// not take (input) and of acceptedOutputModes it does not produce
	// (output).
	ContentType struct {
		Input  string `json:"input"`
		Output string `json:"output"`
	} `json:"contentType"`
}

// pythonVariants are the variants a2a-sdk speaks: its 1.0 JSON-RPC,
// HTTP+JSON and gRPC transports and its v0.3 compat transports
// (a2a.compat.v0_3) of the three.
var pythonVariants = append(slices.Clone(matrixVariants), grpcVariants...)

// pythonDeviations are a2a-sdk's known departures from wantClientReport's
// errors (see matrixDeviation).
var pythonDeviations = []matrixDeviation{
	{"Python", grpc03, map[string]string{
		errGetUnknown: "gRPC NOT_FOUND (untyped)", errCancelUnknown: "gRPC NOT_FOUND (untyped)",
		errSendUnknown: "gRPC NOT_FOUND (untyped)", errSubscribeUnknown: "gRPC NOT_FOUND (untyped)",
		errCancelCanceled: "gRPC FAILED_PRECONDITION (untyped)", errSendCompleted: "gRPC FAILED_PRECONDITION (untyped)",
		errSubscribeCompleted: "gRPC FAILED_PRECONDITION (untyped)",
	}, "a2a-sdk's 0.3 gRPC client (a2a/compat/v0_3/grpc_transport.py _map_grpc_error) types an error only when the " +
		"status message starts with the SDK's Python class name (\"TaskNotFoundError: ...\"), a convention of its own " +
		"0.3 server that the 0.3 specification does not have; a2aflow answers the 0.3 gRPC status code the " +
		"specification maps the error to, with a plain message"},
}

// pythonREST03PushWhy is why the push config scenario of a2a-sdk's 0.3
// HTTP+JSON client stops after GetTaskPushNotificationConfig.
const pythonREST03PushWhy = "a2a-sdk's 0.3 HTTP+JSON client raises NotImplementedError for " +
	"list_task_push_notification_configs and delete_task_push_notification_config without a request " +
	"(a2a/compat/v0_3/rest_transport.py:256-276 in a2a-sdk 1.3.0), though A2A 0.3's HTTP+JSON binding has both " +
	"(GET and DELETE /v1/tasks/{id}/pushNotificationConfigs[/{configId}]), which a2aflow serves to the Go, JS and Java clients"

// TestPythonClient drives a2aflow with the official A2A Python SDK
// (a2a-sdk, run from tests/python/a2a_client.py in the virtual environment
// .ci/run makes) over six variants: its 1.0 JSON-RPC, HTTP+JSON and gRPC
// transports and its 0.3 compat transports of the three. The travel
// scenarios and their expectations are the Go clients' (compat_test.go);
// ListTasks, the push config methods and an unsupported content type are
// checked here. It skips only when the venv is missing outside CI.
func TestPythonClient(t *testing.T) {
	python := pythonFromVenv(t)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	s := harness.StartServe(t, t.TempDir(), "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)), "--push-allow-hosts", "loopback")
	for _, v := range pythonVariants {
		t.Run("Python "+v.String(), func(t *testing.T) {
			got := runPythonClient(t, python, s.APIURL, v, hook.URL+"/py")
			want := wantFor(t, "Python", v)
			for _, d := range pythonDeviations {
				if d.variant == v {
					for k, e := range d.errors {
						t.Logf("known deviation: Python %s %s answers %q instead of %q: %s", v, k, e, want.Errors[k], d.why)
						want.Errors[k] = e
					}
				}
			}
			want.Card.Interfaces = grpcCardInterfaces
			if v == grpc03 {
				// As for a2a-go's 0.3 gRPC client (TestGoClients).
				t.Logf("known deviation: Python %s GetTask(historyLength=0) answers the whole history: 0.3's proto cannot send 0", v)
				want.GetTask.HistoryLength0 = len(want.GetTask.Roles)
			}
			checkClientReport(t, want, got.clientReport)
			t.Run("more", func(t *testing.T) {
				checkPythonMore(t, v, got, hook.URL+"/py")
			})
		})
	}
}

// checkPythonMore checks the methods beyond the travel matrix.
func checkPythonMore(t *testing.T, v matrixVariant, got pythonReport, hook string) {
	t.Helper()
	m := got.More
	want := pythonMore{TaskID: m.TaskID, ListTasks: []string{m.TaskID}, PushTaskID: m.PushTaskID}
	wantFailures := map[string]string{}
	if v.version == "0.3" {
		// A2A 0.3's JSON-RPC and gRPC have no ListTasks: the SDK's 0.3
		// clients say so without asking.
		want.TaskID, want.ListTasks = "", nil
		wantFailures["ListTasks"] = fmt.Sprintf("NotImplementedError: ListTasks is not supported in A2A v0.3 %s.",
			map[string]string{"JSONRPC": "JSONRPC", "HTTP+JSON": "REST", "GRPC": "gRPC"}[string(v.binding)])
	} else if m.TaskID == "" || m.PushTaskID != m.TaskID {
		t.Errorf("ListTasks' task %q, push configs' task %q: want one task", m.TaskID, m.PushTaskID)
	}
	id := m.Push.ID
	if !strings.HasPrefix(id, "py-") {
		t.Errorf("push config ID %q, want py-...", id)
	}
	want.Push.ID = id
	want.Push.Created = id + " " + m.PushTaskID + " " + hook
	want.Push.Got = want.Push.Created
	want.Push.Listed = []string{id + " " + hook}
	want.Push.Deleted = true
	want.Push.GetDeleted = "TaskNotFound" // A2A names an unknown push config so
	if v == grpc03 {
		want.Push.GetDeleted = "gRPC NOT_FOUND (untyped)" // pythonDeviations
	}
	if v == httpJSON03 {
		t.Logf("known deviation: Python %s lists and deletes no push config: %s", v, pythonREST03PushWhy)
		want.Push.Listed, want.Push.Deleted, want.Push.GetDeleted = nil, false, ""
		wantFailures["PushConfigs"] = "NotImplementedError: list_task_push_notification_configs not supported in v0.3 REST"
	}
	want.ContentType.Input, want.ContentType.Output = "ContentTypeNotSupported", "ContentTypeNotSupported"
	if v == grpc03 {
		want.ContentType.Input, want.ContentType.Output = "gRPC INVALID_ARGUMENT (untyped)", "gRPC INVALID_ARGUMENT (untyped)"
	}
	if diff := cmp.Diff(want, m, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, scenario := range []string{"ListTasks", "PushConfigs", "ContentType"} {
		if got.Failures[scenario] != wantFailures[scenario] {
			t.Errorf("scenario %s: failure %q, want %q", scenario, got.Failures[scenario], wantFailures[scenario])
		}
	}
}

// pythonFromVenv returns the venv's python with a2a-sdk at the pinned
// version. Without the venv it skips, but fails in CI (CI=true), where
// .ci/run must have made it.
func pythonFromVenv(t *testing.T) string {
	t.Helper()
	python, err := filepath.Abs(filepath.Join(pythonVenv, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(python); err != nil {
		const how = "python3 -m venv tests/python/.venv && tests/python/.venv/bin/pip install -r tests/python/requirements.txt (.ci/run does)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Python venv tests/python/.venv is missing: %s", how)
		}
		t.Skipf("the Python venv tests/python/.venv is missing; make it with: %s", how)
	}
	out, err := exec.Command(python, "-c", "from importlib.metadata import version; print(version('a2a-sdk'))").Output()
	if err != nil {
		t.Fatalf("a2a-sdk is not installed in tests/python/.venv (%v): pip install -r tests/python/requirements.txt", err)
	}
	if got := strings.TrimSpace(string(out)); got != pythonSDKVersion {
		t.Fatalf("tests/python/.venv has a2a-sdk %s, want %s: pip install -r tests/python/requirements.txt", got, pythonSDKVersion)
	}
	return python
}

// runPythonClient runs a2a_client.py against baseURL over variant v and
// decodes its report.
func runPythonClient(t *testing.T, python, baseURL string, v matrixVariant, hook string) pythonReport {
	t.Helper()
	var got pythonReport
	runClientReport(t, 2*time.Minute, "a2a_client.py "+v.String(), "python", &got, python, "a2a_client.py", baseURL, string(v.binding), v.version, hook)
	return got
}
