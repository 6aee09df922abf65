package harness

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// LiveRun is what a client saw of a stream: the live answer's chunks,
// joined as A2A joins artifact chunks (append false starts the text over),
// and the task's final message.
type LiveRun struct {
	TaskID         a2a.TaskID
	Start          time.Time                    // when the message was sent
	FirstLive      time.Time                    // when the first live chunk came
	Chunks         int                          // live chunks
	BeforeFinal    int                          // live chunks before the final status event
	Restarts       int                          // chunks with append false after text was shown
	FirstChunk     *a2a.TaskArtifactUpdateEvent // the first live chunk
	Text           string                       // the live answer as joined
	Last           bool                         // a chunk said it was the last
	Final          string                       // the text of the terminal status's message
	State          a2a.TaskState                // the last state seen
	OtherArtifacts int                          // artifact events that are not live chunks
}

// Collect reads a stream until it ends, or until stopAfter live chunks when
// stopAfter > 0.
func (r *LiveRun) Collect(t testing.TB, events iter.Seq2[a2a.Event, error], stopAfter int) {
	t.Helper()
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			r.TaskID, r.State = e.ID, e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			r.TaskID, r.State = e.TaskID, e.Status.State
			if e.Status.State.Terminal() {
				r.Final = Text(e.Status.Message)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if _, live := e.Metadata[wire.LiveMetadataKey]; !live {
				r.OtherArtifacts++
				continue
			}
			if r.Chunks == 0 {
				r.FirstLive, r.FirstChunk = time.Now(), e
			}
			r.Chunks++
			if r.Final == "" {
				r.BeforeFinal++
			}
			if !e.Append {
				if r.Text != "" {
					r.Restarts++
				}
				r.Text = ""
			}
			for _, p := range e.Artifact.Parts {
				r.Text += p.Text()
			}
			r.Last = r.Last || e.LastChunk
			if stopAfter > 0 && r.Chunks >= stopAfter {
				return
			}
		}
	}
}

// StreamLive sends text to the assistant with SendStreamingMessage and
// reads the stream (see Collect).
func StreamLive(t testing.TB, ctx context.Context, c *a2aclient.Client, text string, stopAfter int) *LiveRun {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	r := &LiveRun{Start: time.Now()}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.Collect(t, c.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: msg}), stopAfter)
	return r
}
