package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// exitReplayFailed: a history did not replay against this binary's agents.
const exitReplayFailed = 5

// replayConfig is what `replay` reads besides the worker's settings.
type replayConfig struct {
	running bool
	tasks   []string
	save    string
}

func newReplayCmd(app *server.App) *cobra.Command {
	var worker *server.WorkerSettings
	var rc replayConfig
	cmd := &cobra.Command{
		Use:   "replay [FILE...]",
		Short: "Replay recorded task histories against this binary's agents: will parked tasks survive this code?",
		Long: `replay replays recorded runs of tasks against the agents of this binary, the
way a worker running it would when a parked task resumes. A run that replays is
safe to resume on this code; one that does not (a non-determinism error) would
fail on it: guard the change with workflow.GetVersion, or keep the old workers
until those tasks end.

  a2aflow replay testdata/*.history.json     histories saved earlier (Temporal's
                                             JSON: --save, temporal workflow show
                                             -o json, the Web UI's download)
  a2aflow replay --running                   the current run of every running task
  a2aflow replay --task ID [--task ID]       the current runs of these tasks
  a2aflow replay --running --save testdata   and keep them as fixtures

Use the worker's --idle-timeout, --delegation-retry-budget and --payload-store
(or --data-dir), and its --config for the agents its config file defines:
they are part of what a task decides. Exit status 5 when a run does not replay.`,
		RunE: func(cmd *cobra.Command, files []string) error {
			return runReplay(cmd.Context(), cmd.OutOrStdout(), worker, rc, files)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&rc.running, "running", false, "replay the current run of every running task of the namespace")
	fs.StringArrayVar(&rc.tasks, "task", nil, "replay the current run of this task (its ID), repeatable")
	fs.StringVar(&rc.save, "save", "", "also write each fetched history to DIR/TASK_ID.history.json, to replay in CI later")
	worker = server.BindWorkerSettings(cmd, app) // the worker's, and its config file's agents
	return cmd
}

func runReplay(ctx context.Context, out io.Writer, worker *server.WorkerSettings, rc replayConfig, files []string) error {
	fetch := rc.running || len(rc.tasks) > 0
	if !fetch && len(files) == 0 {
		return errors.New("replay: give history files, --task ID or --running")
	}
	if rc.save != "" && !fetch {
		return errors.New("replay: --save writes fetched histories; use it with --task or --running")
	}
	reg, err := worker.Registry()
	if err != nil {
		return err
	}
	opts := engine.ReplayOptions{Workflow: worker.WorkflowOptions()}
	// The payload store only when there is one to read: files replay without
	// one when there is no --payload-store nor <data-dir>/blobs.
	store, err := worker.PayloadStore(fetch)
	if err != nil {
		return err
	}
	if store != nil {
		opts.ExternalStorage = blobstore.ExternalStorage(store)
	}
	replayer, err := engine.NewReplayer(reg, opts)
	if err != nil {
		return err
	}
	replayed, failed := 0, 0
	report := func(name string, err error) {
		replayed++
		switch {
		case err == nil:
			fmt.Fprintf(out, "ok    %s\n", name)
		case engine.IsNondeterminism(err):
			failed++
			fmt.Fprintf(out, "FAIL  %s: this code does not replay it (non-determinism): %v\n", name, err)
		default:
			failed++
			fmt.Fprintf(out, "FAIL  %s: %v\n", name, err)
		}
	}
	for _, f := range files {
		report(f, replayer.ReplayFile(f))
	}
	if fetch {
		c, namespace, err := worker.Dial(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		ids := rc.tasks
		if rc.running {
			running, err := runningTasks(ctx, c, namespace)
			if err != nil {
				return err
			}
			ids = append(ids, running...)
		}
		for _, id := range ids {
			h, err := currentHistory(ctx, c, id)
			if err != nil {
				report("task "+id, err)
				continue
			}
			if rc.save != "" {
				if err := saveHistory(rc.save, id, h); err != nil {
					return err
				}
			}
			report("task "+id, replayer.Replay(h))
		}
	}
	fmt.Fprintf(out, "replayed %d, %d did not replay\n", replayed, failed)
	if failed > 0 {
		return cmdutil.Exit(exitReplayFailed)
	}
	return nil
}

// runningTasks lists the IDs of the running tasks of the namespace.
func runningTasks(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	query := "WorkflowType = " + wire.QuoteQueryValue(wire.TaskWorkflowName) + " AND ExecutionStatus = 'Running'"
	var ids []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: namespace, Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list running tasks: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids, nil
		}
	}
}

// currentHistory fetches the whole history of a task's current run.
func currentHistory(ctx context.Context, c client.Client, id string) (*historypb.History, error) {
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("fetch history: %w", err)
		}
		h.Events = append(h.Events, e)
	}
	if len(h.Events) == 0 {
		return nil, fmt.Errorf("fetch history: task %s has none", id)
	}
	return h, nil
}

// saveHistory writes h as Temporal's history JSON to dir/ID.history.json.
func saveHistory(dir, id string, h *historypb.History) error {
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	name := filepath.Join(dir, filepath.Base(filepath.Clean("/"+id))+".history.json")
	if err := os.WriteFile(name, raw, 0o644); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	return nil
}
