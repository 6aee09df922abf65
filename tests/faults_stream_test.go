package tests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// faultsStream cuts a client's SSE stream (SendStreamingMessage, JSON-RPC)
// mid-answer with a reset on the client ↔ API link, and the client
// resubscribes (SubscribeToTask) as a real one does. The model's answer
// comes slowly: the worker ↔ LLM link is limited to 1 KB/s (a bandwidth
// fault of its own), about 4 s for the answer.
//
// How a resubscribed client misses nothing and sees nothing twice: the
// stream starts with the task re-read (its status, history and finished
// artifacts as of its latest numbered event), then the live answer written
// so far in one chunk (append: false, so the client replaces what it
// had), then every later event, numbered in the workflow, from the one
// after the task it read. The check: the text joined across both streams
// is the model's text exactly (a lost chunk would leave a hole, a repeated
// one a doubled word), the task completes with it, and the model got one
// request (a cut client stream does not touch the task).
func faultsStream(t *testing.T, ctx context.Context, apiURL string, model *faultModel, llm *faultProxy) {
	api := newFaultProxy(t, "api", strings.TrimPrefix(apiURL, "http://"))
	c := harness.ClientsOver(t, ctx, api.URL()+"/agents/assistant", 1, a2a.TransportProtocolJSONRPC, 2)[0]
	cutStream(t, ctx, c, api, "cut: tell me about streaming", model, llm)
}

// faultsGRPCStream is faultsStream over the gRPC binding: the client (the
// official a2a-go client, its gRPC transport) finds serve's gRPC address in
// the agent card, which names grpc (a proxy in front of serve's gRPC
// listener, --grpc-public-addr); the reset breaks the HTTP/2 connection
// the stream runs on, and the client's resubscription dials again.
func faultsGRPCStream(t *testing.T, ctx context.Context, apiURL string, grpc *faultProxy, model *faultModel, llm *faultProxy) {
	c := harness.ClientsOver(t, ctx, apiURL+"/agents/assistant", 1, a2a.TransportProtocolGRPC, 2)[0]
	cutStream(t, ctx, c, grpc, "grpc cut: tell me about streaming", model, llm)
}

// cutStream sends text with SendStreamingMessage through c, resets the
// client's link (api) after two live chunks, resubscribes and checks the
// answer joined across both streams.
func cutStream(t *testing.T, ctx context.Context, c *a2aclient.Client, api *faultProxy, text string, model *faultModel, llm *faultProxy) {
	llm.add("narrow", "bandwidth", "downstream", `{"rate":1}`)
	defer llm.remove("narrow")

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	var id a2a.TaskID
	var before string // the live text the first stream showed
	var cut time.Time
	chunks := 0
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Logf("the first stream ended on: %v", err)
			break
		}
		switch e := ev.(type) {
		case *a2a.Task:
			id = e.ID
		case *a2a.TaskStatusUpdateEvent:
			id = e.TaskID
			if e.Status.State.Terminal() {
				t.Fatalf("task %s ended %s before the cut (%d live chunks, %q): the answer came too fast", id, e.Status.State, chunks, before)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if _, live := e.Metadata[wire.LiveMetadataKey]; !live {
				continue
			}
			if !e.Append {
				before = ""
			}
			for _, p := range e.Artifact.Parts {
				before += p.Text()
			}
			if chunks++; chunks == 2 {
				cut = time.Now()
				// The next bytes to the client reset its connection; the
				// toxic goes once the stream broke.
				api.add("cut", "reset_peer", "downstream", `{"timeout":0}`)
			}
		}
	}
	if !cut.IsZero() {
		api.remove("cut")
	}
	if cut.IsZero() || id == "" {
		t.Fatalf("the stream of task %q ended after %d live chunks, before the cut", id, chunks)
	}
	if !strings.HasPrefix(fakes.LiveAnswerText, before) || before == "" {
		t.Errorf("before the cut the client showed %q, want a start of the model's text", before)
	}

	// Resubscribe, retrying while the link is still cut, as a client does.
	var again harness.LiveRun
	var first time.Time
	for attempt := 1; ; attempt++ {
		time.Sleep(100 * time.Millisecond)
		var err error
		again = harness.LiveRun{}
		for ev, e := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
			if e != nil {
				err = e
				break
			}
			if first.IsZero() {
				first = time.Now()
			}
			again.Collect(t, func(yield func(a2a.Event, error) bool) { yield(ev, nil) }, 0)
		}
		if err == nil {
			break
		}
		if errors.Is(err, a2a.ErrUnsupportedOperation) || attempt == 40 {
			t.Fatalf("resubscribe to %s, attempt %d: %v", id, attempt, err)
		}
		first = time.Time{}
	}
	t.Logf("cut after %d live chunks (%q); resubscribed, the first event %v after the cut", chunks, before, first.Sub(cut).Round(time.Millisecond))
	if again.State != a2a.TaskStateCompleted || again.Final != fakes.LiveAnswerText {
		t.Errorf("after resubscribing: task %s %s with %q, want completed with the model's text", id, again.State, again.Final)
	}
	if again.Text != fakes.LiveAnswerText || !again.Last {
		t.Errorf("the live answer joined across the cut: %q (last chunk %v), want the model's text", again.Text, again.Last)
	}
	if again.FirstChunk == nil || again.FirstChunk.Append || !strings.HasPrefix(again.FirstChunk.Artifact.Parts[0].Text(), before) {
		t.Errorf("the resubscribed stream's first live chunk %+v, want the text so far (append false), holding what the client showed", again.FirstChunk)
	}
	if n := model.count(text); n != 1 {
		t.Errorf("the model got %d requests, want 1: a cut client stream does not touch the task", n)
	}
}
