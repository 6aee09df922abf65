package llm_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
)

// TestWorkerFetchesFileURIs: a file part given by URI is fetched by the
// FetchFile activity (through the guarded outbound client) and reaches the
// model as the file's content; a host the policy forbids fails the task
// without calling the model.
func TestWorkerFetchesFileURIs(t *testing.T) {
	pdf := []byte("%PDF-1.4\n%%EOF\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	}))
	t.Cleanup(srv.Close)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Summarise this."),
		&a2a.Part{Content: a2a.URL(srv.URL + "/r.pdf"), Filename: "r.pdf"})

	for _, tc := range []struct {
		name   string
		allow  []string
		state  a2a.TaskState
		want   []llm.File
		status string
	}{
		{name: "allowed", allow: []string{"loopback"}, state: a2a.TaskStateCompleted,
			want: []llm.File{{Name: "r.pdf", MediaType: "application/pdf", Data: pdf, URI: srv.URL + "/r.pdf"}}},
		{name: "refused", state: a2a.TaskStateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &scripted{answer: func(int, llm.Request) (llm.Response, error) { return text("A one-page PDF."), nil }}
			env := newEnv(t, p)
			policy, err := outbound.ParsePolicy(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			files := &activities.Files{Client: outbound.New(outbound.Options{Policy: policy}).HTTPClient(activities.FileUse(0))}
			env.RegisterActivityWithOptions(files.FetchFile, activity.RegisterOptions{Name: wire.ActivityFetchFile})
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "loop", Message: msg})
			task := finalTask(t, env)
			if task.Status.State != tc.state {
				t.Fatalf("state = %s (%q), want %s", task.Status.State, statusText(task), tc.state)
			}
			reqs := p.requests()
			if tc.want == nil {
				if len(reqs) != 0 {
					t.Errorf("the model was called %d times for a file it could not see", len(reqs))
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("%d model calls, want 1", len(reqs))
			}
			if diff := cmp.Diff(tc.want, reqs[0].Messages[0].Files); diff != "" {
				t.Errorf("files given to the model (-want +got):\n%s", diff)
			}
		})
	}
}
