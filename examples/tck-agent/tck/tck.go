// Package tck is the agent the A2A Technology Compatibility Kit (a2aproject/a2a-tck, its 1.0-dev
// branch) expects of a system under test. The TCK drives the agent through the message ID: a
// message whose ID starts with a scenario's prefix makes the agent do what the TCK's Gherkin
// scenarios (scenarios/*.feature) say, on every binding at once. Every task is an ordinary
// a2aflow task: a Temporal workflow, durable across restarts.
package tck

import (
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// StreamingTimeout is the TCK's streaming timeout; the resubscription scenario works for
// twice as long before it completes.
const StreamingTimeout = 2 * time.Second

// Agent returns the TCK's system under test.
func Agent() *workflows.Agent {
	return &workflows.Agent{
		Name:        "tck",
		Description: "The A2A TCK's system under test, served by a2aflow: each task a durable Temporal workflow.",
		Skills: []a2a.AgentSkill{{
			ID:          "tck",
			Name:        "TCK scenarios",
			Description: "Does what the A2A TCK's scenarios ask for, chosen by the message ID's prefix.",
			Tags:        []string{"tck", "conformance"},
		}},
		Handle: handle,
		// The TCK's "Return message instead of task" scenario (DM-MSG-001): a message of
		// prefix tck-message-response is answered with the agent's reply, a Message (A2A
		// §3.1.1), its task unnamed. Every other scenario is answered with its task.
		MessageOnlyFor: func(m *a2a.Message) bool { return match(m.ID) == "tck-message-response" },
	}
}

// scenario is what the agent does for one message.
type scenario func(ctx workflow.Context, t *workflows.Task) error

// scenarios by prefix; the longest matching prefix wins, as in the TCK's own generated agents
// (tck-artifact-file-url before tck-artifact-file).
var scenarios = map[string]scenario{
	"tck-complete-task": func(ctx workflow.Context, t *workflows.Task) error {
		t.Reply("Hello from TCK")
		return nil
	},
	"tck-artifact-text": artifact(a2a.NewTextPart("Generated text content")),
	"tck-artifact-file": artifact(fileBytes()),
	"tck-artifact-file-url": artifact(func() *a2a.Part {
		p := a2a.NewFileURLPart("https://example.com/output.txt", "text/plain")
		p.Filename = "output.txt"
		return p
	}()),
	"tck-artifact-data": artifact(a2a.NewDataPart(map[string]any{"key": "value", "count": 42})),
	// The task completes at once with the TCK's text, which the API answers as a Message
	// (Agent's MessageOnlyFor); the task stays a workflow, unnamed in the answer.
	"tck-message-response": func(ctx workflow.Context, t *workflows.Task) error {
		t.Reply("Direct message response")
		return nil
	},
	"tck-input-required": nil, // handled by handle: the task asks, the answer's prefix decides
	"tck-reject-task": func(ctx workflow.Context, t *workflows.Task) error {
		return workflows.Reject("rejected")
	},
	"tck-stream-001":           stream(a2a.NewTextPart("Stream hello from TCK")),
	"tck-stream-002":           func(ctx workflow.Context, t *workflows.Task) error { return nil },
	"tck-stream-003":           stream(a2a.NewTextPart("Stream task lifecycle")),
	"tck-stream-ordering-001":  stream(a2a.NewTextPart("Ordered output")),
	"tck-stream-artifact-text": stream(a2a.NewTextPart("Streamed text content")),
	"tck-stream-artifact-file": stream(fileBytes()),
	"tck-stream-artifact-chunked": func(ctx workflow.Context, t *workflows.Task) error {
		t.Progress(ctx, "working")
		art := t.Artifact(ctx, &a2a.Artifact{Parts: a2a.ContentParts{a2a.NewTextPart("chunk-1 ")}})
		t.ArtifactChunk(ctx, art.ID, a2a.ContentParts{a2a.NewTextPart("chunk-2")}, true)
		return nil
	},
	"test-resubscribe-message-id": func(ctx workflow.Context, t *workflows.Task) error {
		t.Progress(ctx, "working")
		if err := workflow.Sleep(ctx, 2*StreamingTimeout); err != nil {
			return err
		}
		return nil
	},
}

func handle(ctx workflow.Context, t *workflows.Task) error {
	msg := t.Message()
	for {
		prefix := match(msg.ID)
		if prefix != "tck-input-required" {
			if run := scenarios[prefix]; run != nil {
				return run(ctx, t)
			}
			t.Reply("Unhandled messageId prefix: " + msg.ID)
			return nil
		}
		answer, err := t.Ask(ctx, "input", "Input required: send another message to this task")
		if err != nil {
			return err
		}
		msg = answer
	}
}

// match returns the longest scenario prefix of id, or "".
func match(id string) string {
	best := ""
	for _, p := range prefixes {
		if strings.HasPrefix(id, p) && len(p) > len(best) {
			best = p
		}
	}
	return best
}

// prefixes are the scenarios' keys in a fixed order (workflow code does not range over maps).
var prefixes = func() []string {
	ps := make([]string, 0, len(scenarios))
	for p := range scenarios {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}()

func artifact(p *a2a.Part) scenario {
	return func(ctx workflow.Context, t *workflows.Task) error {
		t.Artifact(ctx, &a2a.Artifact{Parts: a2a.ContentParts{p}})
		return nil
	}
}

// stream is a streaming scenario: working, one artifact, completed.
func stream(p *a2a.Part) scenario {
	return func(ctx workflow.Context, t *workflows.Task) error {
		t.Progress(ctx, "working")
		t.Artifact(ctx, &a2a.Artifact{Parts: a2a.ContentParts{p}})
		return nil
	}
}

func fileBytes() *a2a.Part {
	p := a2a.NewRawPart([]byte("tck"))
	p.Filename = "output.txt"
	p.MediaType = "text/plain"
	return p
}
