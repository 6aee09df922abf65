package taskservice

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// liveEvent is a chunk of a live answer as a stream carries it: an
// artifact-update of the call's live artifact (wire.LiveMetadataKey); or a
// progress message relayed (ch.Status): a status update, state working,
// with the message's text.
func liveEvent(taskID a2a.TaskID, contextID string, ch hints.LiveChunk) a2a.Event {
	if ch.Artifact != nil {
		return relayedArtifactEvent(taskID, contextID, ch)
	}
	if ch.Status {
		meta := map[string]any{wire.LiveMetadataKey: map[string]any{"call": ch.Call, "attempt": ch.Attempt, "relayed": true}}
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, a2a.TaskInfo{TaskID: taskID, ContextID: contextID}, a2a.NewTextPart(ch.Text))
		msg.ID, msg.Metadata = fmt.Sprintf("relay-%s-%d", ch.Call, ch.Attempt), meta
		return &a2a.TaskStatusUpdateEvent{TaskID: taskID, ContextID: contextID, Metadata: meta,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg}}
	}
	meta := map[string]any{wire.LiveMetadataKey: map[string]any{"call": ch.Call, "attempt": ch.Attempt}}
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: taskID, ContextID: contextID, Append: !ch.Restart, LastChunk: ch.Last, Metadata: meta,
		Artifact: &a2a.Artifact{ID: a2a.ArtifactID("live-" + ch.Call), Name: wire.LiveArtifactName,
			Parts: a2a.ContentParts{a2a.NewTextPart(ch.Text)}, Metadata: meta},
	}
}

// yieldLive yields the live chunks that came before the task's message
// msg, then those that end the answers still open (hints.LiveCursor.Finish):
// an answer whose rest had not come yet is completed from msg, so that a
// client joining the chunks has the whole answer even when the message
// overtook its last pieces.
func yieldLive(taskID a2a.TaskID, contextID string, lc *hints.LiveCursor, msg *a2a.Message, yield func(a2a.Event, error) bool) bool {
	chunks, _ := lc.Take()
	var text strings.Builder
	if msg != nil {
		for _, p := range msg.Parts {
			text.WriteString(p.Text())
		}
	}
	for _, ch := range append(chunks, lc.Finish(text.String())...) {
		if !yield(liveEvent(taskID, contextID, ch), nil) {
			return false
		}
	}
	return true
}

// relayedArtifactEvent is a chunk of an artifact relayed live (a remote
// agent's, as the task delegating to it follows it): an artifact-update of
// the artifact's own ID in our task (the ID its durable copy gets), append
// false when the chunk starts the artifact (again: a new version), with
// lastChunk as the remote's; its metadata carries LiveMetadataKey with
// {"call": name, "attempt": generation, "relayed": true}.
func relayedArtifactEvent(taskID a2a.TaskID, contextID string, ch hints.LiveChunk) a2a.Event {
	meta := map[string]any{wire.LiveMetadataKey: map[string]any{"call": ch.Call, "attempt": ch.Attempt, "relayed": true}}
	parts := a2a.ContentParts{}
	for line := range strings.SplitSeq(ch.Text, "\n") {
		if line == "" {
			continue
		}
		var p a2a.Part
		if json.Unmarshal([]byte(line), &p) == nil {
			parts = append(parts, &p)
		}
	}
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: taskID, ContextID: contextID, Append: !ch.Restart, LastChunk: ch.Last, Metadata: meta,
		Artifact: &a2a.Artifact{ID: a2a.ArtifactID(ch.Artifact.ID), Name: ch.Artifact.Name, Parts: parts},
	}
}
