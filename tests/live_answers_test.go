package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// checkAnswered checks a whole stream: live chunks came before the final
// message and joined into it, once, and the task keeps the answer once, as
// its message, with no live artifact.
func checkAnswered(t *testing.T, ctx context.Context, c *a2aclient.Client, r *harness.LiveRun, wantRestarts int) {
	t.Helper()
	if r.State != a2a.TaskStateCompleted || r.Final != fakes.LiveAnswerText {
		t.Fatalf("task %s ended %s with %q", r.TaskID, r.State, r.Final)
	}
	if r.BeforeFinal < 5 {
		t.Errorf("%d live chunks before the final message, want the answer's words as they come", r.BeforeFinal)
	}
	if r.Text != fakes.LiveAnswerText || !r.Last {
		t.Errorf("live answer joined = %q (last chunk seen: %v), want %q once", r.Text, r.Last, fakes.LiveAnswerText)
	}
	if r.Restarts != wantRestarts {
		t.Errorf("%d restarts of the live answer, want %d", r.Restarts, wantRestarts)
	}
	if r.OtherArtifacts != 0 {
		t.Errorf("%d other artifact events", r.OtherArtifacts)
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: r.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, m := range task.History {
		if m.Role == a2a.MessageRoleAgent && harness.Text(m) == fakes.LiveAnswerText {
			answers++
		}
		if strings.Contains(harness.Text(m), "Streaming works") && harness.Text(m) != fakes.LiveAnswerText {
			t.Errorf("history holds part of the answer: %q", harness.Text(m))
		}
	}
	if answers != 1 || len(task.Artifacts) != 0 {
		t.Errorf("history has the answer %d times and %d artifacts; want it once, as the final message, and none", answers, len(task.Artifacts))
	}
}

// TestLiveAnswers: the assistant's answer, streamed by a fake OpenAI
// endpoint a word every 40 ms, reaches a2a-go clients as it is written, as
// chunks of a live-answer artifact, before the task's final message, over
// SSE (JSON-RPC, HTTP+JSON) and gRPC, with `serve` and with `api` + `worker` (the
// deltas crossing processes over the Unix sockets beside their SQLite
// database, or PostgreSQL NOTIFY). The history keeps the answer once. A call whose stream is cut
// mid-answer is retried and its answer starts over (append false): joined
// as A2A joins chunks, the client has the answer once. A client that drops
// its stream mid-answer and resubscribes gets the text so far in one chunk,
// then the rest. `a2aflow send --stream` and the REPL print the answer as
// it is written, once.
func TestLiveAnswers(t *testing.T) {
	fake := fakes.NewLiveModel(t, 100*time.Millisecond, 40*time.Millisecond)
	fakes.UseLiveModel(t, fake)
	for _, d := range []struct {
		name  string
		start func(t *testing.T) (apiURL string)
	}{
		{"serve", func(t *testing.T) string {
			return harness.StartServe(t, t.TempDir(), "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))).APIURL
		}},
		{"api+worker", func(t *testing.T) string {
			d := harness.StartSplitDB(t, 1, true, harness.SQLiteHintsDB(t))
			d.APIs[0].WaitOutput("Hints        Unix sockets in ", time.Second)
			return d.APIURLs[0]
		}},
		{"api+worker+postgres", func(t *testing.T) string {
			d := harness.StartSplitDB(t, 1, true, harness.Postgres(t))
			d.APIs[0].WaitOutput("Hints        PostgreSQL LISTEN a2aflow_task_events", time.Second)
			return d.APIURLs[0]
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			url := d.start(t) + "/agents/assistant"
			ctx := harness.Context(t)
			for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC} {
				t.Run(string(binding), func(t *testing.T) {
					c := harness.ClientsOver(t, ctx, url, 1, binding, 4)[0]
					r := harness.StreamLive(t, ctx, c, d.name+" "+string(binding)+": tell me about streaming", 0)
					checkAnswered(t, ctx, c, r, 0)
					t.Logf("first live chunk %v after the send, %d chunks", r.FirstLive.Sub(r.Start).Round(time.Millisecond), r.Chunks)
				})
			}
			c := harness.ClientsOver(t, ctx, url, 1, a2a.TransportProtocolJSONRPC, 4)[0]
			t.Run("retry", func(t *testing.T) {
				r := harness.StreamLive(t, ctx, c, d.name+": cut the first answer", 0)
				checkAnswered(t, ctx, c, r, 1)
			})
			t.Run("cli", func(t *testing.T) {
				// a2aflow send --stream prints the answer as it is written, on
				// one [answer] line, and does not repeat it with the status;
				// the REPL prints it as it is written too, once.
				r := runCLI(t, "send", "--agent", url, "--stream", d.name+": streaming in the terminal")
				wantRun(t, r, 0, "[answer] "+fakes.LiveAnswerText+"\n[status] completed\n")
				if n := strings.Count(r.stdout, fakes.LiveAnswerText); n != 1 {
					t.Errorf("the answer is printed %d times:\n%s", n, r.stdout)
				}
				out, errOut, code := runREPL(t, d.name+": streaming in the REPL\n:quit\n", "--agent", url, "--data-dir", t.TempDir())
				if code != 0 || !strings.Contains(out, "Agent: "+fakes.LiveAnswerText+"\nTask ") || strings.Count(out, fakes.LiveAnswerText) != 1 {
					t.Errorf("repl exit %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
			})
			t.Run("resubscribe", func(t *testing.T) {
				before := harness.StreamLive(t, ctx, c, d.name+": resubscribe mid-answer", 3)
				if before.Chunks != 3 || before.Final != "" {
					t.Fatalf("first stream: %d chunks, final %q", before.Chunks, before.Final)
				}
				time.Sleep(100 * time.Millisecond) // the answer goes on meanwhile
				r := &harness.LiveRun{Start: time.Now(), TaskID: before.TaskID}
				r.Collect(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: before.TaskID}), 0)
				if r.FirstChunk == nil || r.FirstChunk.Append || !strings.HasPrefix(harness.Text(&a2a.Message{Parts: r.FirstChunk.Artifact.Parts}), before.Text) ||
					len(r.FirstChunk.Artifact.Parts[0].Text()) <= len(before.Text) {
					t.Fatalf("resubscribed stream's first live chunk %+v, want the text so far (more than %q), append false", r.FirstChunk, before.Text)
				}
				checkAnswered(t, ctx, c, r, 0)
			})
		})
	}
}
