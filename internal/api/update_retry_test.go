package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// notReadyTemporal answers the first message update of a task with the
// error Temporal gives an update whose workflow task failed (it continued
// as new while another message came), and then with firstThen.
type notReadyTemporal struct {
	unavailableTemporal
	firstThen error
	mu        sync.Mutex
	updates   []string // update IDs, in order
}

func (f *notReadyTemporal) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, o.UpdateID)
	if len(f.updates) == 1 {
		return nil, serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to unexpected workflow task failure.")
	}
	return nil, f.firstThen
}

// TestSendRetriesUpdateOfFailedWorkflowTask: a message whose update reached
// a workflow task that then failed was not recorded, and Temporal does not
// retry it: the API sends it again, with the same update ID (the message
// ID), instead of answering an internal error. Other errors are not retried.
func TestSendRetriesUpdateOfFailedWorkflowTask(t *testing.T) {
	fake := &notReadyTemporal{firstThen: serviceerror.NewNotFound("workflow not found")}
	srv := httptest.NewServer(New(fake, testRegistry(t), Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler())
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER",` +
		`"taskId":"0b6b2f4e-5d1c-4a53-9a0e-2f1d8c1e7a10","parts":[{"text":"hello"}]}}}`
	req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.updates) != 2 || fake.updates[0] != "m-1" || fake.updates[1] != "m-1" {
		t.Fatalf("updates sent %v, want the message's twice (the failed workflow task's, then once more)", fake.updates)
	}
	// The second answer (the task is gone) is the caller's error, not retried.
	if !strings.Contains(string(out), "-32001") {
		t.Errorf("answer %s, want TaskNotFound (-32001)", out)
	}
}
