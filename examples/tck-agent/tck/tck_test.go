package tck

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows/workflowstest"
)

func run(t *testing.T, id string) (*workflowstest.Env, *a2a.Task) {
	t.Helper()
	env := workflowstest.New(t, Agent())
	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	first.ID = id
	return env, env.Run("tck", first)
}

func statusText(task *a2a.Task) string {
	if task.Status.Message == nil || len(task.Status.Message.Parts) == 0 {
		return ""
	}
	return task.Status.Message.Parts[0].Text()
}

func TestScenarios(t *testing.T) {
	cases := []struct {
		id    string
		state a2a.TaskState
		text  string               // the final status message's text, if any
		part  func(*a2a.Part) bool // the one artifact's one part, if any
	}{
		{id: "tck-complete-task-1", state: a2a.TaskStateCompleted, text: "Hello from TCK"},
		{id: "tck-artifact-text-1", state: a2a.TaskStateCompleted, part: func(p *a2a.Part) bool { return p.Text() == "Generated text content" }},
		{id: "tck-artifact-file-1", state: a2a.TaskStateCompleted, part: func(p *a2a.Part) bool {
			return string(p.Raw()) == "tck" && p.Filename == "output.txt" && p.MediaType == "text/plain"
		}},
		{id: "tck-artifact-file-url-1", state: a2a.TaskStateCompleted, part: func(p *a2a.Part) bool {
			return string(p.URL()) == "https://example.com/output.txt" && p.Filename == "output.txt"
		}},
		{id: "tck-artifact-data-1", state: a2a.TaskStateCompleted, part: func(p *a2a.Part) bool {
			d, ok := p.Data().(map[string]any)
			return ok && d["key"] == "value" && d["count"] == float64(42)
		}},
		{id: "tck-message-response-1", state: a2a.TaskStateCompleted, text: "Direct message response"},
		{id: "tck-reject-task-1", state: a2a.TaskStateRejected},
		{id: "tck-stream-001-x", state: a2a.TaskStateCompleted, part: func(p *a2a.Part) bool { return p.Text() == "Stream hello from TCK" }},
		{id: "tck-stream-002-x", state: a2a.TaskStateCompleted},
		{id: "tck-stream-artifact-file-x", state: a2a.TaskStateCompleted, part: func(p *a2a.Part) bool { return p.Filename == "output.txt" }},
		{id: "test-resubscribe-message-id-1", state: a2a.TaskStateCompleted},
		{id: "something-else", state: a2a.TaskStateCompleted, text: "Unhandled messageId prefix: something-else"},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			_, task := run(t, c.id)
			if task.Status.State != c.state {
				t.Fatalf("state %s, want %s", task.Status.State, c.state)
			}
			if c.text != "" && statusText(task) != c.text {
				t.Fatalf("status message %q, want %q", statusText(task), c.text)
			}
			if c.part == nil {
				if len(task.Artifacts) != 0 {
					t.Fatalf("artifacts %v, want none", task.Artifacts)
				}
				return
			}
			if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 || !c.part(task.Artifacts[0].Parts[0]) {
				t.Fatalf("artifacts %+v", task.Artifacts)
			}
		})
	}
}

func TestChunkedArtifact(t *testing.T) {
	_, task := run(t, "tck-stream-artifact-chunked-1")
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("task %+v", task)
	}
	var text string
	for _, p := range task.Artifacts[0].Parts {
		text += p.Text()
	}
	if text != "chunk-1 chunk-2" {
		t.Fatalf("artifact text %q", text)
	}
}

// The input-required scenario waits for the next message, whose own prefix says what comes next.
func TestInputRequired(t *testing.T) {
	answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("more"))
	answer.ID = "tck-complete-task-2"
	env := workflowstest.New(t, Agent())
	env.Look(30*time.Second, func(task *a2a.Task) {
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("before the answer the task is %s, want input-required", task.Status.State)
		}
	})
	env.AnswerMessage(time.Minute, answer)
	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	first.ID = "tck-input-required-1"
	task := env.Run("tck", first)
	if task.Status.State != a2a.TaskStateCompleted || statusText(task) != "Hello from TCK" {
		t.Fatalf("task %s %q", task.Status.State, statusText(task))
	}
}

func TestLongestPrefixWins(t *testing.T) {
	if got := match("tck-artifact-file-url-7"); got != "tck-artifact-file-url" {
		t.Fatalf("match = %q", got)
	}
	if got := match("tck-artifact-file-7"); got != "tck-artifact-file" {
		t.Fatalf("match = %q", got)
	}
}

// TestMessageResponseIsAMessage: only the TCK's message-response scenario is answered with a
// Message (DM-MSG-001), whatever its ID's suffix; every other scenario with its task.
func TestMessageResponseIsAMessage(t *testing.T) {
	picks := Agent().MessageOnlyFor
	if picks == nil {
		t.Fatal("the agent has no MessageOnlyFor: tck-message-response is answered with a task")
	}
	for id, want := range map[string]bool{
		"tck-message-response-1a2b3c4d":   true,
		"tck-message-response-1a2b3c4d-7": true,
		"tck-complete-task-1a2b3c4d":      false,
		"tck-input-required-1a2b3c4d":     false,
		"tck-stream-001-1a2b3c4d":         false,
		"something-else":                  false,
	} {
		if got := picks(&a2a.Message{ID: id}); got != want {
			t.Errorf("MessageOnlyFor(%q) = %t, want %t", id, got, want)
		}
	}
}
