package taskservice

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestRelayedArtifactEvent: a chunk of a relayed artifact is an
// artifact-update of that artifact's ID in our task, its JSON lines as
// parts, append unless it starts the artifact (again), lastChunk as the
// chunk's, marked relayed.
func TestRelayedArtifactEvent(t *testing.T) {
	art := &hints.LiveArtifact{ID: "t1-remote-ab", Name: "report"}
	ev := liveEvent("t1", "c1", hints.LiveChunk{Call: "artifact-t1-remote-ab", Attempt: 2, Restart: true,
		Text: "{\"text\":\"Hello, \"}\n{\"data\":{\"n\":1}}\n", Artifact: art})
	e, ok := ev.(*a2a.TaskArtifactUpdateEvent)
	if !ok {
		t.Fatalf("event %T, want an artifact update", ev)
	}
	if e.TaskID != "t1" || e.ContextID != "c1" || e.Append || e.LastChunk || e.Artifact.ID != "t1-remote-ab" || e.Artifact.Name != "report" {
		t.Errorf("event %+v, want artifact t1-remote-ab starting over, not last", e)
	}
	if len(e.Artifact.Parts) != 2 || e.Artifact.Parts[0].Text() != "Hello, " || e.Artifact.Parts[1].Data() == nil {
		t.Errorf("parts %+v, want the text and the data part", e.Artifact.Parts)
	}
	live, _ := e.Metadata[wire.LiveMetadataKey].(map[string]any)
	if live["relayed"] != true || live["attempt"] != int32(2) {
		t.Errorf("metadata %v, want relayed, generation 2", e.Metadata)
	}
	ev = liveEvent("t1", "c1", hints.LiveChunk{Call: "artifact-t1-remote-ab", Attempt: 2, Last: true, Artifact: art})
	if e := ev.(*a2a.TaskArtifactUpdateEvent); !e.Append || !e.LastChunk || len(e.Artifact.Parts) != 0 {
		t.Errorf("last chunk %+v, want an append without parts, last", e)
	}
}
