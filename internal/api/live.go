package api

import (
	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// liveEvent is a chunk of a live answer as a stream carries it: an
// artifact-update of the call's live artifact (wire.LiveMetadataKey).
func liveEvent(taskID a2a.TaskID, contextID string, ch hints.LiveChunk) *a2a.TaskArtifactUpdateEvent {
	meta := map[string]any{wire.LiveMetadataKey: map[string]any{"call": ch.Call, "attempt": ch.Attempt}}
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: taskID, ContextID: contextID, Append: !ch.Restart, LastChunk: ch.Last, Metadata: meta,
		Artifact: &a2a.Artifact{ID: a2a.ArtifactID("live-" + ch.Call), Name: wire.LiveArtifactName,
			Parts: a2a.ContentParts{a2a.NewTextPart(ch.Text)}, Metadata: meta},
	}
}
