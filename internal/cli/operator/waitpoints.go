package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// newWaitpointCmd returns `a2aflow waitpoint`: show a waitpoint (its token
// too, to the task's owner) and complete it with a JSON payload, through
// the REST API (api/waitpoints.go).
func newWaitpointCmd() *cobra.Command {
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a waitpoint: what it waits for, its schema, its state and payload (and, to the task's owner, its token)",
		Args:  cobra.ExactArgs(1),
	}
	showClient := &approvalsClient{}
	var showToken string
	show.RunE = func(cmd *cobra.Command, args []string) error {
		var w resources.WaitpointView
		if err := doWaitpoint(cmd.Context(), showClient, http.MethodGet, "/waitpoints/"+url.PathEscape(args[0]), showToken, nil, &w); err != nil {
			return err
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(w)
	}
	bindWaitpointToken(show, &showToken, "the waitpoint's token, when you are not the task's owner")
	showClient.bind(show)

	complete := &cobra.Command{
		Use:   "complete ID --token TOKEN --data JSON",
		Short: "Complete a waitpoint with a JSON payload its schema takes (sending the same payload again is safe)",
		Args:  cobra.ExactArgs(1),
	}
	completeClient := &approvalsClient{}
	var token, data string
	complete.RunE = func(cmd *cobra.Command, args []string) error {
		raw, err := payloadArg(data)
		if err != nil {
			return err
		}
		if token == "" {
			return errors.New("--token is required: the task's owner reads it with `a2aflow waitpoint show ID`")
		}
		var w resources.WaitpointView
		if err := doWaitpoint(cmd.Context(), completeClient, http.MethodPost, "/waitpoints/"+url.PathEscape(args[0]), token,
			resources.CompleteWaitpointRequest{Payload: raw}, &w); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s by %s via %s\n", w.ID, w.State, w.CompletedBy, w.Via)
		return nil
	}
	bindWaitpointToken(complete, &token, "the waitpoint's token")
	complete.Flags().StringVar(&data, "data", "", "the payload: JSON, or @FILE to read it from a file, or @- from standard input")
	_ = complete.MarkFlagRequired("data")
	completeClient.bind(complete)

	root := &cobra.Command{Use: "waitpoint", Aliases: []string{"waitpoints"},
		Short: "Waitpoints: tasks waiting for an external system's result (Task.WaitFor)"}
	root.AddCommand(show, complete)
	return root
}

// bindWaitpointToken binds --token, the waitpoint's token.
func bindWaitpointToken(cmd *cobra.Command, p *string, usage string) {
	cmdutil.Bind(cmd.Flags()).String(p, "token", "A2AFLOW_WAITPOINT_TOKEN", "", usage)
}

// payloadArg reads --data: JSON as given, @FILE, or @- for standard input.
func payloadArg(data string) (json.RawMessage, error) {
	raw := []byte(data)
	if path, ok := strings.CutPrefix(data, "@"); ok {
		var err error
		if path == "-" {
			raw, err = io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		} else {
			raw, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
	}
	if !json.Valid(raw) {
		return nil, errors.New("--data is not JSON")
	}
	return raw, nil
}

// doWaitpoint is approvalsClient.do with the waitpoint's token in its header.
func doWaitpoint(ctx context.Context, a *approvalsClient, method, path, token string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.base, "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-A2Aflow-Via", "cli")
	if token != "" {
		req.Header.Set(resources.WaitpointTokenHeader, token)
	}
	if k := a.apiKey.Get(); k != "" {
		req.Header.Set("X-API-Key", k)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	return json.Unmarshal(raw, out)
}
