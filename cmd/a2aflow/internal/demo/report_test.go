package demo_test

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// artifactView is the part of an artifact the report tests compare.
type artifactView struct {
	Name      string
	MediaType string
	Text      string
	Metadata  map[string]any
}

func viewArtifacts(arts []*a2a.Artifact) []artifactView {
	var views []artifactView
	for _, a := range arts {
		v := artifactView{Name: a.Name, Metadata: a.Metadata}
		for _, p := range a.Parts {
			v.Text += p.Text()
			v.MediaType = p.MediaType
		}
		views = append(views, v)
	}
	return views
}

// reportTask is a finished report task as the FetchTask activity returns it:
// decoded from JSON, as it crosses Temporal's data converter.
func reportTask(t *testing.T, id a2a.TaskID, arts ...*a2a.Artifact) *a2a.Task {
	t.Helper()
	raw, err := json.Marshal(&a2a.Task{ID: id, ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	var task a2a.Task
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatal(err)
	}
	return &task
}

func markdown(name, text string, version int) *a2a.Artifact {
	a := workflows.TextArtifact(name, text)
	a.Parts[0].MediaType = "text/markdown"
	a.Metadata = map[string]any{"version": version}
	return a
}

func TestReport(t *testing.T) {
	v2 := "# Q3 review\n\nRevenue grew 12%.\n\n## Revision 2\n\nChurn fell to 2%.\n"
	tests := []struct {
		name       string
		text       string
		refs       []a2a.TaskID
		fetched    map[a2a.TaskID]*a2a.Task // nil entry: not found
		wantStatus statusView
		want       []artifactView
	}{
		{
			name:       "new report",
			text:       "Q3 review\nRevenue grew 12%.",
			wantStatus: statusView{State: a2a.TaskStateCompleted, Message: agent(`Wrote the report (version 1). To refine it, send a message with referenceTaskIds ["task-1"].`)},
			want:       []artifactView{{Name: "report", MediaType: "text/markdown", Text: "# Q3 review\n\nRevenue grew 12%.\n", Metadata: map[string]any{"version": float64(1)}}},
		},
		{
			name:       "one line",
			text:       "Revenue grew 12%.",
			wantStatus: statusView{State: a2a.TaskStateCompleted, Message: agent(`Wrote the report (version 1). To refine it, send a message with referenceTaskIds ["task-1"].`)},
			want:       []artifactView{{Name: "report", MediaType: "text/markdown", Text: "# Report\n\nRevenue grew 12%.\n", Metadata: map[string]any{"version": float64(1)}}},
		},
		{
			name: "refinement continues the latest version",
			text: "EMEA launch moved to November.",
			refs: []a2a.TaskID{"report-0"},
			fetched: map[a2a.TaskID]*a2a.Task{"report-0": reportTask(t, "report-0",
				markdown("report", "# Q3 review\n\nRevenue grew 12%.\n", 1),
				markdown("notes", "other", 1),
				markdown("report", v2, 2))},
			wantStatus: statusView{State: a2a.TaskStateCompleted, Message: agent("Refined the report of task report-0 into version 3.")},
			want: []artifactView{{Name: "report", MediaType: "text/markdown",
				Text:     v2 + "\n## Revision 3\n\nEMEA launch moved to November.\n",
				Metadata: map[string]any{"version": float64(3), "refines": "report-0"}}},
		},
		{
			name:       "referenced task not found",
			text:       "more",
			refs:       []a2a.TaskID{"gone"},
			fetched:    map[a2a.TaskID]*a2a.Task{"gone": nil},
			wantStatus: statusView{State: a2a.TaskStateRejected, Message: agent("Task gone was not found, so there is no report to refine.")},
		},
		{
			name:       "referenced task has no report",
			text:       "more",
			refs:       []a2a.TaskID{"travel-1"},
			fetched:    map[a2a.TaskID]*a2a.Task{"travel-1": reportTask(t, "travel-1", workflows.JSONArtifact("booking", map[string]string{"to": "Lisbon"}))},
			wantStatus: statusView{State: a2a.TaskStateRejected, Message: agent(`None of the referenced tasks [travel-1] has a "report" artifact to refine.`)},
		},
		{
			name:       "no notes",
			text:       "   ",
			wantStatus: statusView{State: a2a.TaskStateRejected, Message: agent("Send the notes for the report as text.")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTaskEnv()
			env.RegisterActivity(&activities.Tasks{})
			for id, task := range tt.fetched {
				call := env.OnActivity((*activities.Tasks)(nil).FetchTask, mock.Anything, wire.FetchTaskInput{TaskID: id})
				if task == nil {
					call.Return(nil, temporal.NewNonRetryableApplicationError("task "+string(id)+" not found", wire.ErrTypeTaskNotFound, nil))
				} else {
					call.Return(task, nil)
				}
			}
			msg := userText(tt.text)
			msg.ReferenceTasks = tt.refs
			env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{Agent: "report", ContextID: "ctx-1", Message: msg})

			final := finalTask(t, env)
			if diff := cmp.Diff(tt.wantStatus, viewStatus(final)); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, viewArtifacts(final.Artifacts)); diff != "" {
				t.Errorf("artifacts (-want +got):\n%s", diff)
			}
			env.AssertExpectations(t)
		})
	}
}
