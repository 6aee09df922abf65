package tests

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// jsMoreReport is what tests/js/more_methods.mjs prints.
type jsMoreReport struct {
	TaskID    string   `json:"taskId"`
	ListTasks []string `json:"listTasks"`
	Push      struct {
		ID          string   `json:"id"`
		Created     string   `json:"created"`
		Got         string   `json:"got"`
		Listed      []string `json:"listed"`
		Deleted     bool     `json:"deleted"`
		AfterDelete []string `json:"afterDelete"`
		EmptyList   string   `json:"emptyList"`
	} `json:"push"`
	ExtendedCard struct {
		Name      string `json:"name"`
		Principal string `json:"principal"`
	} `json:"extendedCard"`
	Failures map[string]string `json:"failures"`
}

// TestJSMoreMethods drives the methods the travel matrix leaves out with
// @a2a-js/sdk over the four variants, authenticated with an API key:
// ListTasks finds the caller's new task (in 0.3 over HTTP+JSON too; 0.3's
// JSON-RPC has no tasks/list), the push config methods create, read, list
// and delete a config (0.3's included), and the extended card names the
// caller.
func TestJSMoreMethods(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; .ci/run installs Node.js to run the JavaScript client tests")
	}
	requireNode20(t, node)
	dir := ensureJSDeps(t)
	const key = "js-more-key"
	s := harness.StartServe(t, t.TempDir(), "--api-keys", "alice="+key, "--push-allow-hosts", "loopback")
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	for _, v := range matrixVariants {
		t.Run("JS "+v.String(), func(t *testing.T) {
			var got jsMoreReport
			runClientReport(t, 2*time.Minute, "node more_methods.mjs "+v.String(), dir, &got, node, "more_methods.mjs", s.APIURL, string(v.binding), v.version, key, hook.URL+"/js")
			want := jsMoreReport{TaskID: got.TaskID, ListTasks: []string{got.TaskID}, Failures: map[string]string{}}
			want.Push.ID = got.Push.ID
			want.Push.Created = got.Push.ID + " " + got.TaskID + " " + hook.URL + "/js"
			want.Push.Got = want.Push.Created
			want.Push.Listed = []string{got.Push.ID + " " + hook.URL + "/js"}
			want.Push.Deleted, want.Push.EmptyList = true, "list"
			want.ExtendedCard.Name, want.ExtendedCard.Principal = "travel", "alice"
			switch v {
			case jsonRPC03:
				// A2A 0.3's JSON-RPC has no tasks/list: the server answers
				// -32601, which the SDK's 0.3 client reports.
				want.ListTasks = nil
				want.Failures["ListTasks"] = "JsonRpcTransportError: Method not found: tasks/list"
				// a2a-go's 0.3 JSON-RPC server (a2av0) answers an empty list
				// of push configs with a null result, not []: the SDK's 0.3
				// client fails on it. Create, get, list and delete pass.
				if f := got.Failures["PushConfigs"]; strings.Contains(f, "Cannot read properties of null") {
					t.Logf("known deviation: JS %s ListTaskPushNotificationConfigs of no config: %s (a2a-go's 0.3 JSON-RPC server answers null, not [])", v, f)
					want.Push.EmptyList = ""
					want.Failures["PushConfigs"] = f
				}
			case httpJSON03:
				want.ListTasks = nil
				want.Failures["ListTasks"] = "UnsupportedOperationError: tasks/list has no equivalent in v0.3 HTTP+JSON"
				// The SDK posts the config itself (the 0.3 proto's body:
				// "config"), which a2aflow takes beside a2a-go's whole
				// CreateTaskPushNotificationConfigRequest (api/validate.go).
			}
			if got.TaskID == "" {
				t.Errorf("no task in the report: %+v", got)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
