package bench

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

const (
	benchRawDelegateWorkflow = "BenchRawDelegate"
	benchRawSendActivity     = "BenchRawSendToRemote"
)

// BenchmarkDelegation measures one delegation through a2aflow: a blocking
// SendMessage "@AGENT TEXT" to the router agent, whose task records its
// route and sends TEXT to the remote agent (a2a-go's own server, which
// completes at once) in one activity that also finds AGENT in the owner's
// directory, then replies with the remote answer. The baseline is the same
// call written with the Temporal SDK alone on the same server: a workflow
// running one activity that sends TEXT with a2a-go's client (a blocking
// SendMessage), started and awaited with ExecuteWorkflow + Get. Both sides
// are interleaved in rounds, sequentially and with 8 concurrent callers,
// for two remote agents: "polled" ("ext", whose card offers no streaming:
// a2aflow's send asks it to return at once and reads the task again) and
// "streamed" ("ext-stream", whose card offers streaming: the send streams
// the task's events).
func BenchmarkDelegation(b *testing.B) {
	ext := &fakes.ExtAgent{}
	remotes := []struct{ name, agent, url string }{
		{"polled", "ext", fakes.ServeExt(b, ext, false).URL},
		{"streamed", "ext-stream", fakes.ServeExt(b, ext, true).URL},
	}
	dataDir := b.TempDir()
	for _, r := range remotes {
		harness.AddAgent(b, dataDir, r.agent, r.url)
	}
	s := harness.StartServe(b, dataDir)
	ctx := benchContext(b)
	a2aSide := newBenchA2A(b, ctx, s.APIURL+"/agents/router", benchConc)
	sum := &benchSummary{}
	var pairs [][2]string
	histories := ""
	for _, r := range remotes {
		raw := newBenchRawDelegate(b, ctx, s, r.url)
		to := a2aSide.delegateTo(r.agent)
		for _, m := range benchModes {
			key := r.name + "/" + m.name
			b.Run(key, func(b *testing.B) {
				benchPair(b, ctx, s, m, to.delegate, raw.delegate, sum, key)
			})
			pairs = append(pairs, [2]string{key + " a2a", key + " raw"})
		}
		histories += benchHistories(b, ctx, raw.c, "of one delegation to the "+r.name+" agent", to.run, raw.delegateRun)
	}
	benchPrint(b, sum.table(pairs)+histories)
}

// benchDelegateTo sends "@AGENT TEXT" to the router: a new task, completed
// with the remote agent's answer.
type benchDelegateTo struct {
	e     *benchA2A
	agent string
}

func (e *benchA2A) delegateTo(agent string) benchDelegateTo { return benchDelegateTo{e, agent} }

func (d benchDelegateTo) delegate(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(d.run).timed(ctx, w)
}

func (d benchDelegateTo) run(ctx context.Context, w int) (string, time.Duration, error) {
	text := fmt.Sprintf("hello from client %d", w)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("@"+d.agent+" "+text))
	t0 := time.Now()
	task, err := d.e.send(ctx, w, msg)
	d0 := time.Since(t0)
	if err != nil {
		return "", 0, err
	}
	if err := benchWantTask(task, a2a.TaskStateCompleted, "done: "+text); err != nil {
		return "", 0, err
	}
	return string(task.ID), d0, nil
}

// benchRawDelegate is the baseline of BenchmarkDelegation: a worker of its
// own with a workflow that sends the text to the remote agent in one
// activity.
type benchRawDelegate struct {
	c     client.Client
	queue string
}

func newBenchRawDelegate(b testing.TB, ctx context.Context, s *harness.Server, remoteURL string) *benchRawDelegate {
	b.Helper()
	raw := newBenchRaw(b, s)
	card, err := agentcard.DefaultResolver.Resolve(ctx, remoteURL)
	if err != nil {
		b.Fatalf("card of %s: %v", remoteURL, err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 4 * benchConc
	b.Cleanup(transport.CloseIdleConnections)
	remote, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: transport, Timeout: time.Minute}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = remote.Destroy() })
	r := &benchRawDelegate{c: raw.c, queue: "bench-delegate-" + uuid.NewString()}
	// It polls like the a2aflow worker, as newBenchRaw's does.
	w := worker.New(raw.c, r.queue, worker.Options{
		MaxConcurrentWorkflowTaskPollers: engine.WorkflowTaskPollers,
		MaxConcurrentActivityTaskPollers: engine.ActivityTaskPollers,
	})
	w.RegisterActivityWithOptions(func(ctx context.Context, text string) (string, error) {
		res, err := remote.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
		if err != nil {
			return "", err
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.Message == nil {
			return "", fmt.Errorf("the remote agent answered %T without a status message", res)
		}
		return workflows.MessageText(task.Status.Message), nil
	}, activity.RegisterOptions{Name: benchRawSendActivity})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, text string) (string, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		var out string
		err := workflow.ExecuteActivity(ctx, benchRawSendActivity, text).Get(ctx, &out)
		return out, err
	}, workflow.RegisterOptions{Name: benchRawDelegateWorkflow})
	if err := w.Start(); err != nil {
		b.Fatalf("start worker: %v", err)
	}
	b.Cleanup(w.Stop)
	return r
}

func (r *benchRawDelegate) delegate(ctx context.Context, w int) (time.Duration, error) {
	return benchIDOp(r.delegateRun).timed(ctx, w)
}

func (r *benchRawDelegate) delegateRun(ctx context.Context, w int) (string, time.Duration, error) {
	text := fmt.Sprintf("hello from client %d", w)
	return benchExecute(ctx, r.c, r.queue, benchRawDelegateWorkflow, text, "done: "+text)
}
