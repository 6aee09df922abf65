package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/blobstore/s3test"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestLargePayloads sends 3 MiB messages to the report agent and refines
// its report until the artifact holds more than 10 MiB, through a2a-go's
// client, then restarts the server and reads it again. Temporal's 2 MB
// payload limit is met by keeping every payload of 256 KiB or more in the
// payload store: the task's history holds references only. It runs with the
// embedded default (a folder under the data dir) and with an S3-compatible
// store (gofakes3, run as its own process).
func TestLargePayloads(t *testing.T) {
	for _, store := range []string{"file", "s3"} {
		t.Run(store, func(t *testing.T) {
			dataDir := t.TempDir()
			var extra []string
			if store == "s3" {
				endpoint := s3test.Start(t)
				s3test.CreateBucket(t, endpoint, "a2aflow")
				t.Setenv("AWS_ACCESS_KEY_ID", "test")
				t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
				t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
				extra = []string{"--payload-store", "s3://a2aflow/payloads?endpoint=" + endpoint + "&region=us-east-1"}
			}
			s := harness.StartServe(t, dataDir, extra...)
			ctx := harness.Context(t)
			c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/report")

			const noteSize = 3 << 20
			notes := func(i int) string {
				return fmt.Sprintf("Report %d\n", i) + strings.Repeat(fmt.Sprintf("line %d of a long note. ", i), noteSize/24)
			}
			var last *a2a.Task
			var ids []a2a.TaskID
			for i := 1; i <= 4; i++ {
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(notes(i)))
				if last != nil {
					msg.ReferenceTasks = []a2a.TaskID{last.ID}
				}
				res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
				if err != nil {
					t.Fatalf("message %d (%d bytes): %v", i, len(notes(i)), err)
				}
				last = res.(*a2a.Task)
				harness.WantState(t, last, a2a.TaskStateCompleted, "")
				ids = append(ids, last.ID)
			}
			size := artifactBytes(last)
			if size < 10<<20 {
				t.Fatalf("the refined report holds %d bytes, want over 10 MiB", size)
			}
			check := func(when string, c *a2aclient.Client) {
				t.Helper()
				got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: last.ID})
				if err != nil {
					t.Fatalf("%s: GetTask: %v", when, err)
				}
				if artifactBytes(got) != size || len(got.History) == 0 || len(got.History[0].Parts[0].Text()) != len(notes(4)) {
					t.Fatalf("%s: GetTask returned an artifact of %d bytes and a first message of %d bytes, want %d and %d",
						when, artifactBytes(got), len(got.History[0].Parts[0].Text()), size, len(notes(4)))
				}
			}
			check("before the restart", c)

			// History carries references, never the payloads.
			tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				largest := 0
				iter := tc.GetWorkflowHistory(ctx, string(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
				for iter.HasNext() {
					e, err := iter.Next()
					if err != nil {
						t.Fatal(err)
					}
					largest = max(largest, e.Size())
				}
				if largest > 300<<10 {
					t.Errorf("task %s has a history event of %d bytes, want references only (< 300 KiB)", id, largest)
				}
			}
			tc.Close()
			blobs := filepath.Join(dataDir, "blobs")
			if entries, _ := os.ReadDir(blobs); store == "s3" && len(entries) > 0 {
				t.Errorf("with the S3 store, %s holds %d entries, want none", blobs, len(entries))
			}

			s.Proc().Kill()
			s.Restart()
			c2, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/report")
			check("after kill -9 and a restart", c2)
		})
	}
}

func artifactBytes(task *a2a.Task) int {
	n := 0
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			n += len(p.Text())
		}
	}
	return n
}
