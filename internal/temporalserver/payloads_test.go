package temporalserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/internal/blobstore"
)

// bigPayloadSize is well over Temporal's 2 MB limit per payload.
const bigPayloadSize = 3 << 20

// bigEchoWorkflow passes its input through an activity and returns the
// activity's result: four big payloads in history (workflow input, activity
// input, activity result, workflow result) of two distinct values.
func bigEchoWorkflow(ctx workflow.Context, in string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, bigEchoActivity, in).Get(ctx, &out)
	return out, err
}

func bigEchoActivity(_ context.Context, in string) (string, error) {
	return "echo:" + in, nil
}

// TestLargePayloadsByReference runs a workflow with a 3 MiB input and
// result through the default codec store (<DataDir>/blobs), checks that
// history holds only references, that the UI's codec endpoint on the UI's
// address resolves them, and that a replay needs the same external storage.
func TestLargePayloadsByReference(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "with codec", Options{
		DataDir:      dir,
		FrontendAddr: "127.0.0.1:0",
		UIAddr:       "127.0.0.1:0",
		Logger:       testLogger(t),
	})
	store, err := blobstore.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{
		HostPort:        s.FrontendAddr(),
		Namespace:       s.Namespace(),
		Logger:          sdklog.NewStructuredLogger(testLogger(t)),
		ExternalStorage: blobstore.ExternalStorage(store),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const taskQueue = "big"
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(bigEchoWorkflow)
	w.RegisterActivity(bigEchoActivity)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := strings.Repeat("0123456789abcdef", bigPayloadSize/16)
	begin := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "big-echo", TaskQueue: taskQueue}, bigEchoWorkflow, in)
	if err != nil {
		t.Fatalf("start workflow with a 3 MiB input: %v", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	t.Logf("workflow with 3 MiB in and out ran in %v", time.Since(begin).Round(time.Millisecond))
	if out != "echo:"+in {
		t.Fatalf("result: %d bytes, want the %d of \"echo:\"+input", len(out), len(in)+5)
	}

	// History holds small references only.
	history := &historypb.History{}
	iter := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		history.Events = append(history.Events, e)
	}
	var refs []*commonpb.Payload
	err = proxy.VisitPayloads(ctx, history, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			for _, p := range ps {
				if size := proto.Size(p); size > 4<<10 {
					t.Errorf("a payload of %d bytes in history; want references of under 4 KiB", size)
				}
				if string(p.GetMetadata()["messageType"]) == "temporal.api.sdk.v1.ExternalStorageReference" {
					refs = append(refs, p)
				}
			}
			return ps, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if size := proto.Size(history); size > 32<<10 {
		t.Errorf("history of %d bytes, want under 32 KiB", size)
	}
	if len(refs) != 4 {
		t.Fatalf("%d references in history, want 4 (workflow input and result, activity input and result)", len(refs))
	}
	// Content addressing: two distinct payloads, two blobs.
	var blobs []string
	_ = filepath.WalkDir(filepath.Join(dir, "blobs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(dir, "blobs"), path)
			blobs = append(blobs, filepath.Dir(filepath.ToSlash(rel)))
		}
		return err
	})
	if diff := cmp.Diff([]string{"default/payloads/big-echo", "default/payloads/big-echo"}, blobs); diff != "" {
		t.Errorf("blob folders (-want +got):\n%s", diff)
	}

	// The UI (through the front proxy) is configured with the codec, and
	// gets the stored size of each reference to show.
	var settings struct{ Codec struct{ Endpoint string } }
	getJSON(t, s.UIURL()+"/api/v1/settings", &settings)
	if settings.Codec.Endpoint != CodecPath {
		t.Errorf("UI settings codec endpoint = %q, want %q", settings.Codec.Endpoint, CodecPath)
	}
	var uiHistory struct {
		History struct {
			Events []struct {
				WorkflowExecutionCompletedEventAttributes *struct {
					Result struct {
						Payloads []struct {
							ExternalPayloads []struct{ SizeBytes string }
						}
					}
				}
			}
		}
	}
	getJSON(t, s.UIURL()+"/api/v1/namespaces/default/workflows/big-echo/history", &uiHistory)
	var sizes []int
	for _, e := range uiHistory.History.Events {
		if a := e.WorkflowExecutionCompletedEventAttributes; a != nil {
			for _, p := range a.Result.Payloads {
				for _, x := range p.ExternalPayloads {
					n, _ := strconv.Atoi(x.SizeBytes)
					sizes = append(sizes, n)
				}
			}
		}
	}
	if len(sizes) != 1 || sizes[0] < bigPayloadSize {
		t.Errorf("UI API: result externalPayloads sizes = %v, want one of over 3 MiB", sizes)
	}

	// The codec resolves the result's reference on the UI's own address.
	result := refs[len(refs)-1]
	cases := []struct {
		name      string
		path      string
		wantBytes int // of the payload's data; 0: the reference itself
	}{
		{"decode", "/decode", len(out) + 2},
		{"UI decode keeps references over 1 MiB", "/decode?preserveStorageRefs=true", 0},
		{"UI download", "/download?preserveStorageRefs=true", len(out) + 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := postPayloads(t, s.UIURL()+CodecPath+tc.path, result)
			if tc.wantBytes == 0 {
				if !proto.Equal(got, result) {
					t.Errorf("got %.200s, want the reference back", got)
				}
				return
			}
			var decoded string
			if err := json.Unmarshal(got.GetData(), &decoded); err != nil || decoded != out {
				t.Errorf("decoded %d bytes (%v), want the workflow's result", len(got.GetData()), err)
			}
		})
	}

	// A replay resolves the references with the same external storage, and
	// fails without it.
	replay := func(opts worker.WorkflowReplayerOptions) error {
		r, err := worker.NewWorkflowReplayerWithOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		r.RegisterWorkflow(bigEchoWorkflow)
		// A clone: the replayer resolves the references in place.
		return r.ReplayWorkflowHistory(nil, proto.Clone(history).(*historypb.History))
	}
	if err := replay(worker.WorkflowReplayerOptions{ExternalStorage: blobstore.ExternalStorage(store)}); err != nil {
		t.Errorf("replay with the payload store: %v", err)
	}
	if err := replay(worker.WorkflowReplayerOptions{}); err == nil || !strings.Contains(err.Error(), "TMPRL1105") {
		t.Errorf("replay without the payload store: %v, want the SDK's TMPRL1105 (no storage driver)", err)
	}
}

// getJSON decodes the JSON at url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %.300s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %.300s", url, err, body)
	}
}

// postPayloads posts p to a codec endpoint as the Web UI does and returns
// the one payload answered.
func postPayloads(t *testing.T, url string, p *commonpb.Payload) *commonpb.Payload {
	t.Helper()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: status %d: %.300s", url, resp.StatusCode, respBody)
	}
	var got commonpb.Payloads
	if err := protojson.Unmarshal(respBody, &got); err != nil || len(got.Payloads) != 1 {
		t.Fatalf("POST %s: %v, %d payloads in %.300s", url, err, len(got.Payloads), respBody)
	}
	return got.Payloads[0]
}
