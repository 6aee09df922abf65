package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// newForkCmd is `fork TASK --at N`: a2aflow's fork extension over the
// agent's HTTP+JSON binding (POST /tasks/{id}:fork).
func newForkCmd() *cobra.Command {
	f := &Flags{}
	var at int
	var contextID string
	cmd := &cobra.Command{
		Use:   "fork [--agent URL] TASK_ID --at N [--context ID]",
		Short: "Fork a task of an a2aflow agent at one of its messages",
		Long: "Fork a task: a new task that holds the original's history up to its N-th message and runs on from there,\n" +
			"reusing every step the original completed before that point (its activities do not run again).\n" +
			"The original is not changed. The fork is answered once it reached the fork point.\n" + clientHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{"atMessage": at}
			if contextID != "" {
				body["contextId"] = contextID
			}
			return f.forkCall(cmd, "fork", args[0], body)
		},
	}
	cmd.Flags().IntVar(&at, "at", 0, "the fork point: the fork holds the original's first N messages (required)")
	cmd.Flags().StringVar(&contextID, "context", "", "the fork's context (default: the original's)")
	_ = cmd.MarkFlagRequired("at")
	f.Bind(cmd, true)
	return cmd
}

// newRetryCmd is `retry TASK`: a fork of a failed task at its end, the
// failed step tried again (POST /tasks/{id}:retry).
func newRetryCmd() *cobra.Command {
	f := &Flags{}
	cmd := &cobra.Command{
		Use:   "retry [--agent URL] TASK_ID",
		Short: "Retry a failed task of an a2aflow agent from the step that failed",
		Long: "Retry a failed task: a new task that reuses every step the original completed and runs the step that\n" +
			"failed again, then goes on. The original is not changed.\n" + clientHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.forkCall(cmd, "retry", args[0], map[string]any{})
		},
	}
	f.Bind(cmd, true)
	return cmd
}

// forkCall POSTs body to the agent's /tasks/{id}:op and prints the task.
func (f *Flags) forkCall(cmd *cobra.Command, op, id string, body map[string]any) error {
	if f.agent == "" {
		return fmt.Errorf("no agent URL: pass --agent URL or set %s", envAgent)
	}
	ctx, cancel := f.Context(cmd)
	defer cancel()
	hc, err := f.client()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(body)
	u := strings.TrimRight(f.agent, "/") + "/tasks/" + url.PathEscape(id) + ":" + op
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(a2a.SvcParamVersion, "1.0")
	resp, err := hc.Do(req)
	if err != nil {
		return f.noAgent(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var status struct {
			Error struct {
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &status) == nil && status.Error.Message != "" {
			msg = status.Error.Message
		}
		return &cmdutil.ExitError{Code: exitA2AError, Err: fmt.Errorf("%s %s: %s (HTTP %d)", op, id, msg, resp.StatusCode)}
	}
	var task a2a.Task
	if err := json.Unmarshal(data, &task); err != nil {
		return fmt.Errorf("%s %s: the answer is no task: %w", op, id, err)
	}
	return f.showTask(cmd.OutOrStdout(), &task, false)
}
