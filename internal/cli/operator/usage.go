package operator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// newUsageCmd returns `a2aflow usage`: the LLM usage totals of GET /usage.
func newUsageCmd() *cobra.Command {
	c := &approvalsClient{}
	var by, agent, contextID, task, since, until string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "LLM tokens and cost, totalled by agent, context, owner (tenant), task or model",
		Long: "LLM tokens and cost of the tasks you own (all tasks without authentication), from the server's GET /usage:\n" +
			"the calls the workers recorded, priced by their [[llm-prices]] table, each call counted once.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{"by": {by}}
			for k, v := range map[string]string{"agent": agent, "context": contextID, "task": task, "since": since, "until": until} {
				if v != "" {
					q.Set(k, v)
				}
			}
			var out resources.UsageResponse
			if err := c.do(cmd.Context(), http.MethodGet, "/usage?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(w, "%s\tCALLS\tINPUT\tCACHED\tOUTPUT\tUSD\t\n", map[string]string{"agent": "AGENT", "context": "CONTEXT",
				"owner": "OWNER", "task": "TASK", "model": "MODEL"}[out.By])
			for _, t := range append(out.Totals, out.Total) {
				key := t.Key
				if key == "" {
					key = "-"
				}
				fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%.6f\t\n", key, t.Calls, t.InputTokens, t.CachedInputTokens, t.OutputTokens, t.CostUSD)
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&by, "by", "agent", "group the totals by agent, context, owner, task or model")
	f.StringVar(&agent, "agent", "", "only this agent's calls")
	f.StringVar(&contextID, "context", "", "only calls in this A2A context")
	f.StringVar(&task, "task", "", "only this task's calls")
	f.StringVar(&since, "since", "", "only calls at or after this time (RFC 3339)")
	f.StringVar(&until, "until", "", "only calls before this time (RFC 3339)")
	f.BoolVar(&asJSON, "json", false, "print the answer as JSON")
	b := cmdutil.Bind(f)
	b.String(&c.base, "api", cmdutil.EnvAPIURL, cmdutil.LocalServerURL(), "a2aflow API base URL")
	b.Secret(&c.apiKey, "api-key", "A2AFLOW_API_KEY", "API key when the server requires one")
	return cmd
}
