package operator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/policies"
)

// newPoliciesCmd returns `a2aflow policies`: the approval policies of
// /policies.
func newPoliciesCmd() *cobra.Command {
	c := &approvalsClient{}
	root := &cobra.Command{
		Use:   "policies",
		Short: "Approval policies: the Cedar rules that decide whether a tool call or an approval step needs people",
		Long: "The approval policies of an a2aflow server (docs/guides/policies.md): Cedar text per scope (server, tenant/NAME,\n" +
			"agent/NAME, tool/NAME), each change a new version with who, when and why, in force at the next gate of every task.\n" +
			"Only operators and tenants' admins (serve --policy-admins) may read or change them.",
	}
	root.AddCommand(policiesListCmd(c), policiesShowCmd(c), policiesSetCmd(c), policiesValidateCmd(c),
		policiesHistoryCmd(c), policiesDiffCmd(c), policiesTryCmd(c))
	return root
}

// bindPolicyClient binds the flags of a policies command.
func bindPolicyClient(c *approvalsClient, cmd *cobra.Command) {
	b := cmdutil.Bind(cmd.Flags())
	b.String(&c.base, "api", cmdutil.EnvAPIURL, cmdutil.LocalServerURL(), "a2aflow API base URL")
	b.String(&c.approver, "as", "A2AFLOW_APPROVER", "", "your name, sent as X-Approver when the server has no auth (the author of a change)")
	b.Secret(&c.apiKey, "api-key", "A2AFLOW_API_KEY", "API key when the server requires one; then it, not --as, names you")
}

func policiesListCmd(c *approvalsClient) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the scopes with policies in force, each its latest version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var out resources.PoliciesResponse
			if err := c.do(cmd.Context(), http.MethodGet, "/policies", nil, &out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "version in force: %d\n", out.Version)
			return printVersions(cmd.OutOrStdout(), out.Scopes)
		},
	}
	bindPolicyClient(c, cmd)
	return cmd
}

func printVersions(out io.Writer, list []models.PolicyVersion) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tSCOPE\tAUTHOR\tWHEN\tPOLICIES\tREASON")
	for _, v := range list {
		n := strings.Count(v.Text, ";") // a rough count: every policy ends with one
		what := strconv.Itoa(n)
		if v.Text == "" {
			what = "removed"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", v.Version, v.Scope, v.Author, v.CreatedAt.UTC().Format(time.RFC3339), what, v.Reason)
	}
	return w.Flush()
}

func policiesShowCmd(c *approvalsClient) *cobra.Command {
	var version int64
	cmd := &cobra.Command{
		Use:   "show SCOPE",
		Short: "Print a scope's policies in force (or at --version): the Cedar text on stdout, its version on stderr",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/policies/" + args[0]
			if version > 0 {
				path += "?version=" + strconv.FormatInt(version, 10)
			}
			var v models.PolicyVersion
			if err := c.do(cmd.Context(), http.MethodGet, path, nil, &v); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: version %d by %s at %s: %s\n", v.Scope, v.Version, v.Author, v.CreatedAt.UTC().Format(time.RFC3339), v.Reason)
			_, err := io.WriteString(cmd.OutOrStdout(), v.Text)
			return err
		},
	}
	cmd.Flags().Int64Var(&version, "version", 0, "the scope's policies as in force at this version")
	bindPolicyClient(c, cmd)
	return cmd
}

// readPolicyFile reads FILE, or stdin for "-".
func readPolicyFile(cmd *cobra.Command, name string) (string, error) {
	var raw []byte
	var err error
	if name == "-" {
		raw, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
	} else {
		raw, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("read the policies: %w", err)
	}
	return string(raw), nil
}

func policiesSetCmd(c *approvalsClient) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "set SCOPE FILE",
		Short: "Make FILE's Cedar text (- for stdin; empty removes them) the scope's policies: a new version, in force at once",
		Long: "Make FILE's Cedar text the policies of SCOPE (server, tenant/NAME, agent/NAME or tool/NAME) from now on: a new version,\n" +
			"which every task's next gate obeys. A text that does not parse or validate is refused with the line and reason of each problem.\n\n" +
			"  a2aflow policies set agent/payables payables.cedar --reason \"finance approves payments over 5,000\"",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := readPolicyFile(cmd, args[1])
			if err != nil {
				return err
			}
			var v models.PolicyVersion
			if err := c.do(cmd.Context(), http.MethodPut, "/policies/"+args[0], resources.PolicyChange{Text: text, Reason: reason}, &v); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: version %d\n", v.Scope, v.Version)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the history")
	bindPolicyClient(c, cmd)
	return cmd
}

func policiesValidateCmd(c *approvalsClient) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate SCOPE FILE",
		Short: "Check FILE's Cedar text (- for stdin) for SCOPE without changing anything; exit 1 with its problems when it would be refused",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := readPolicyFile(cmd, args[1])
			if err != nil {
				return err
			}
			var out resources.PolicyProblems
			if err := c.do(cmd.Context(), http.MethodPost, "/policies/validate", resources.PolicyCheck{Scope: args[0], Text: text}, &out); err != nil {
				return err
			}
			if out.Valid {
				fmt.Fprintln(cmd.OutOrStdout(), "valid")
				return nil
			}
			for _, p := range out.Problems {
				fmt.Fprintf(cmd.OutOrStdout(), "%s:%s\n", args[1], p)
			}
			return cmdutil.Exit(cmdutil.ExitOther)
		},
	}
	bindPolicyClient(c, cmd)
	return cmd
}

func policiesHistoryCmd(c *approvalsClient) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "history [SCOPE]",
		Short: "List the versions of a scope (an operator: of every scope), the latest first, with who, when and why",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{"limit": {strconv.Itoa(limit)}}
			if len(args) == 1 {
				q.Set("scope", args[0])
			}
			var out struct {
				Versions []models.PolicyVersion `json:"versions"`
			}
			if err := c.do(cmd.Context(), http.MethodGet, "/policy-versions?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			return printVersions(cmd.OutOrStdout(), out.Versions)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many versions")
	bindPolicyClient(c, cmd)
	return cmd
}

func policiesDiffCmd(c *approvalsClient) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff V1 [V2]",
		Short: "Show what changed between two versions (one: between it and its scope's version before), as a unified diff",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var nums []int64
			for _, a := range args {
				n, err := strconv.ParseInt(a, 10, 64)
				if err != nil || n < 1 {
					return fmt.Errorf("version %q: want a version number", a)
				}
				nums = append(nums, n)
			}
			get := func(n int64) (models.PolicyVersion, error) {
				var v models.PolicyVersion
				err := c.do(cmd.Context(), http.MethodGet, "/policy-versions/"+strconv.FormatInt(n, 10), nil, &v)
				return v, err
			}
			newer, err := get(nums[len(nums)-1])
			if err != nil {
				return err
			}
			var older models.PolicyVersion
			if len(nums) == 2 {
				if older, err = get(nums[0]); err != nil {
					return err
				}
			} else if older, err = previousVersion(cmd, c, newer); err != nil {
				return err
			}
			label := func(v models.PolicyVersion) string {
				if v.Version == 0 {
					return newer.Scope + " (none)"
				}
				return fmt.Sprintf("%s version %d", v.Scope, v.Version)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), unifiedDiff(label(older), label(newer), older.Text, newer.Text))
			return err
		},
	}
	bindPolicyClient(c, cmd)
	return cmd
}

func policiesTryCmd(c *approvalsClient) *cobra.Command {
	var since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "try SCOPE FILE",
		Short: "Show what FILE's Cedar text (- for stdin), in place of SCOPE's, would have changed in the requests the gates judged since --since",
		Long: "Judge again every request the gates judged since --since (a tenant's admin: its tenant's), under the version it was judged by,\n" +
			"once as it was and once with SCOPE's text replaced by FILE's, and report what would have changed: the requests that would now\n" +
			"run without a person, those that would now be stopped, by agent and tool or step, with examples. Nothing is changed.\n\n" +
			"  a2aflow policies try agent/payables payables.cedar --since 30d",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := readPolicyFile(cmd, args[1])
			if err != nil {
				return err
			}
			var out policies.TryResult
			if err := c.do(cmd.Context(), http.MethodPost, "/policies/try", resources.PolicyTry{Scope: args[0], Text: text, Since: since}, &out); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			return printTry(cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().StringVar(&since, "since", "30d", "how far back: 30d, 12h, or an RFC 3339 time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON")
	bindPolicyClient(c, cmd)
	return cmd
}

// printTry writes what a try would change, a line per kind of change and
// its examples.
func printTry(w io.Writer, r policies.TryResult) error {
	fmt.Fprintf(w, "%d requests since %s: %d would change (%d allowed now, %d stopped now)\n",
		r.Requests, r.Since.UTC().Format(time.RFC3339), r.Changed, r.AllowedNow, r.StoppedNow)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COUNT\tAGENT\tACTION\tNAME\tFROM\tTO\tEXAMPLES")
	for _, g := range r.Groups {
		var ex []string
		for _, e := range g.Examples {
			what := string(e.Arguments)
			if what == "" {
				what = e.Title
			}
			ex = append(ex, fmt.Sprintf("%s %s", e.TaskID, what))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Count, g.Agent, g.Action, g.Name, g.From, g.To, strings.Join(ex, "; "))
	}
	return tw.Flush()
}

// previousVersion is the version of v's scope before v (the zero version
// when v is its first).
func previousVersion(cmd *cobra.Command, c *approvalsClient, v models.PolicyVersion) (models.PolicyVersion, error) {
	var out struct {
		Versions []models.PolicyVersion `json:"versions"`
	}
	q := url.Values{"scope": {v.Scope}, "limit": {"1000"}}
	if err := c.do(cmd.Context(), http.MethodGet, "/policy-versions?"+q.Encode(), nil, &out); err != nil {
		return models.PolicyVersion{}, err
	}
	for _, o := range out.Versions { // the latest first
		if o.Version < v.Version {
			return o, nil
		}
	}
	return models.PolicyVersion{Scope: v.Scope}, nil
}
