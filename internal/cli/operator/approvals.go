package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// approvalsClient talks to the approvals REST API of an a2aflow server.
type approvalsClient struct {
	base     string
	approver string
	apiKey   cmdutil.Secret
	http     *http.Client
}

func (a *approvalsClient) bind(cmd *cobra.Command) {
	b := cmdutil.Bind(cmd.Flags())
	b.String(&a.base, "api", cmdutil.EnvAPIURL, cmdutil.LocalServerURL(), "a2aflow API base URL")
	b.String(&a.approver, "as", "A2AFLOW_APPROVER", "", "approver name sent as X-Approver when the server has no auth")
	b.Secret(&a.apiKey, "api-key", "A2AFLOW_API_KEY", "API key when the server requires one; then it, not --as, names you")
}

func (a *approvalsClient) do(ctx context.Context, method, path string, body, out any) error {
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
	if a.approver != "" {
		req.Header.Set(guard.ApproverHeader, a.approver)
	}
	if k := a.apiKey.Get(); k != "" {
		req.Header.Set("X-API-Key", k)
	}
	client := a.http
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
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

func newApprovalsCmd() *cobra.Command {
	c := &approvalsClient{}
	var group, agent, contextID string
	var decided bool
	listRun := func(cmd *cobra.Command, _ []string) error {
		q := url.Values{}
		for k, v := range map[string]string{"group": group, "agent": agent, "context": contextID} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if decided {
			q.Set("state", "decided")
		}
		var out struct {
			Approvals []resources.ApprovalView `json:"approvals"`
		}
		if err := c.do(cmd.Context(), http.MethodGet, "/approvals?"+q.Encode(), nil, &out); err != nil {
			return err
		}
		w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tSTATE\tGROUPS\tAGENT\tTITLE")
		for _, a := range out.Approvals {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", a.ID, a.State, strings.Join(a.Groups, ","), a.Agent, a.Request.Title)
		}
		return w.Flush()
	}
	// listFlags binds list's flags: on list, and on approvals itself, which
	// lists too.
	listFlags := func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&group, "group", "", "only approvals for this group")
		cmd.Flags().StringVar(&agent, "agent", "", "only approvals of this agent")
		cmd.Flags().StringVar(&contextID, "context", "", "only approvals in this A2A context")
		cmd.Flags().BoolVar(&decided, "decided", false, "list decided approvals instead of pending ones")
		c.bind(cmd)
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List approvals waiting for a decision (or, with --decided, recent decisions)",
		Args:  cobra.NoArgs,
		RunE:  listRun,
	}
	listFlags(list)

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show an approval: the request, its state and every decision",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var a resources.ApprovalView
			if err := c.do(cmd.Context(), http.MethodGet, "/approvals/"+url.PathEscape(args[0]), nil, &a); err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(a)
		},
	}
	c.bind(show)

	root := &cobra.Command{
		Use:   "approvals [list|show ID]",
		Short: "Human approvals: list (the default) and show; decide with `a2aflow approve` / `a2aflow reject`",
		Long: "Human approvals. Without a subcommand, approvals lists the approvals waiting for a decision, as approvals list does, with its flags.\n" +
			"Decide with `a2aflow approve ID` or `a2aflow reject ID`.",
		Args: cobra.NoArgs,
		RunE: listRun,
	}
	listFlags(root)
	root.AddCommand(list, show)
	return root
}

// newDecideCmd returns `a2aflow approve` or `a2aflow reject`.
func newDecideCmd(approve bool) *cobra.Command {
	c := &approvalsClient{}
	var comment, arguments, onBehalfOf string
	var grant bool
	verb := map[bool]string{true: "approve", false: "reject"}[approve]
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a pending approval",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := resources.DecisionRequest{Approved: &approve, Comment: comment, Grant: grant, OnBehalfOf: onBehalfOf}
			if arguments != "" {
				if !json.Valid([]byte(arguments)) {
					return fmt.Errorf("--arguments: not JSON: %s", arguments)
				}
				req.Arguments = json.RawMessage(arguments)
			}
			var a resources.ApprovalView
			err := c.do(cmd.Context(), http.MethodPost, "/approvals/"+url.PathEscape(args[0])+"/decision", req, &a)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", a.ID, a.State)
			return nil
		},
	}
	cmd.Flags().StringVar(&comment, "comment", "", "why; kept in the audit trail")
	cmd.Flags().StringVar(&onBehalfOf, "for", "", "decide for this approver, who lent you their authority for now (a2aflow delegations add)")
	if approve {
		cmd.Flags().StringVar(&arguments, "arguments", "", `approve these arguments (a JSON object) instead of the proposed ones: a gated tool call's, e.g. '{"amount": 900}'`)
		cmd.Flags().BoolVar(&grant, "grant", false, "also approve the request's tool for the rest of the task")
	}
	c.bind(cmd)
	return cmd
}
