package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestA2ACLITravel drives the travel agent's whole flow with a2a-go's own
// CLI (github.com/a2aproject/a2a-go/v2/cmd/a2a, the version in go.mod) over
// each of the three bindings: `a2a send` four times (the task's ID from the
// first answer, --task after), then `a2a get task`, with --transport forcing
// the binding (and skipping the card): JSON-RPC and HTTP+JSON at the
// agent's URL, gRPC at --grpc-addr with --insecure and the agent as
// --tenant.
func TestA2ACLITravel(t *testing.T) {
	cli := filepath.Join(t.TempDir(), "a2a")
	build := exec.Command("go", "build", "-o", cli, "github.com/a2aproject/a2a-go/v2/cmd/a2a")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build a2a-go's CLI: %v\n%s", err, out)
	}
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	s := harness.StartServe(t, t.TempDir(), "--grpc-addr", grpcAddr)
	ctx := harness.Context(t)

	for _, b := range []struct {
		transport string
		url       string
		extra     []string
	}{
		{"jsonrpc", s.APIURL + "/agents/travel", nil},
		{"rest", s.APIURL + "/agents/travel", nil},
		{"grpc", grpcAddr, []string{"--insecure", "--tenant", "travel"}},
	} {
		t.Run(b.transport, func(t *testing.T) {
			run := func(args ...string) *a2a.Task {
				t.Helper()
				full := append([]string{"--transport", b.transport, "-o", "json", "--timeout", "60s"}, b.extra...)
				full = append(full, args...)
				cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
				defer cancel()
				cmd := exec.CommandContext(cctx, cli, full...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("a2a %s: %v\nstdout: %s\nstderr: %s", strings.Join(full, " "), err, stdout.String(), stderr.String())
				}
				var task a2a.Task
				if err := json.Unmarshal(stdout.Bytes(), &task); err != nil {
					t.Fatalf("a2a %s printed no task: %v\n%s", strings.Join(full, " "), err, stdout.String())
				}
				return &task
			}
			task := run("send", b.url, "Book a flight")
			steps := []string{string(task.Status.State) + " " + workflows.MessageText(task.Status.Message)}
			for _, answer := range []string{"Lisbon", "2026-12-24", "2"} {
				task = run("send", "--task", string(task.ID), b.url, answer)
				steps = append(steps, string(task.Status.State)+" "+workflows.MessageText(task.Status.Message))
			}
			want := []string{
				"TASK_STATE_INPUT_REQUIRED Where to?",
				"TASK_STATE_INPUT_REQUIRED On which date? (YYYY-MM-DD)",
				"TASK_STATE_INPUT_REQUIRED How many travellers?",
			}
			if strings.Join(steps[:3], "\n") != strings.Join(want, "\n") || !strings.HasPrefix(steps[3], "TASK_STATE_COMPLETED Booked: 2 traveller(s) to Lisbon on 2026-12-24") {
				t.Errorf("the flow over %s:\n%s\nwant:\n%s\nTASK_STATE_COMPLETED Booked: 2 traveller(s) to Lisbon on 2026-12-24...", b.transport, strings.Join(steps, "\n"), strings.Join(want, "\n"))
			}
			got := run("get", "task", b.url, string(task.ID))
			if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || got.Artifacts[0].Name != "booking" {
				t.Errorf("a2a get task over %s: state %s, %d artifacts, want completed with the booking", b.transport, got.Status.State, len(got.Artifacts))
			}
		})
	}
}
