package operator

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/models"
)

// newDelegationsCmd returns `a2aflow delegations`: an approver's authority
// lent to another person for a period (out of office).
func newDelegationsCmd() *cobra.Command {
	c := &approvalsClient{}
	listRun := func(cmd *cobra.Command, _ []string) error {
		var out struct {
			Delegations []models.Delegation `json:"delegations"`
		}
		if err := c.do(cmd.Context(), http.MethodGet, "/delegations", nil, &out); err != nil {
			return err
		}
		return printDelegations(cmd.OutOrStdout(), out.Delegations)
	}
	root := &cobra.Command{
		Use:   "delegations [list|add|show ID|revoke ID]",
		Short: "Lend an approver's authority to another person for a period (out of office)",
		Long: "Delegations of approvers' authority. Within the period, the delegate decides as the lender would, with\n" +
			"`a2aflow approve ID --for LENDER` (recorded as \"DELEGATE for LENDER\"); outside it, the decision is refused.\n" +
			"Without a subcommand, delegations lists the ones you lent or hold (an operator: everyone's).",
		Args: cobra.NoArgs,
		RunE: listRun,
	}
	c.bind(root)
	list := &cobra.Command{Use: "list", Short: "List the delegations you lent or hold (an operator: everyone's)", Args: cobra.NoArgs, RunE: listRun}
	c.bind(list)
	show := &cobra.Command{
		Use: "show ID", Short: "Show one delegation", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var d models.Delegation
			if err := c.do(cmd.Context(), http.MethodGet, "/delegations/"+url.PathEscape(args[0]), nil, &d); err != nil {
				return err
			}
			return printDelegations(cmd.OutOrStdout(), []models.Delegation{d})
		},
	}
	c.bind(show)
	revoke := &cobra.Command{
		Use: "revoke ID", Short: "End a delegation now (the record stays, with who ended it)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var d models.Delegation
			if err := c.do(cmd.Context(), http.MethodDelete, "/delegations/"+url.PathEscape(args[0]), nil, &d); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "delegation %d from %s to %s: revoked by %s\n", d.ID, d.From, d.To, d.RevokedBy)
			return nil
		},
	}
	c.bind(revoke)
	root.AddCommand(list, newDelegationAddCmd(), show, revoke)
	return root
}

func newDelegationAddCmd() *cobra.Command {
	c := &approvalsClient{}
	var from, to, start, until, reason string
	cmd := &cobra.Command{
		Use:   "add --to NAME --until TIME",
		Short: "Lend your authority (an operator: --from's) to --to until --until",
		Example: "  a2aflow delegations add --as carl --to dana --until 7d --reason \"holiday\"\n" +
			"  a2aflow approve APPROVAL_ID --as dana --for carl",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			req := resources.DelegationRequest{From: from, To: to, Reason: reason}
			end, err := delegationTime(until, now)
			if err != nil {
				return fmt.Errorf("--until: %w", err)
			}
			req.End = end
			if start != "" {
				s, err := delegationTime(start, now)
				if err != nil {
					return fmt.Errorf("--start: %w", err)
				}
				req.Start = &s
			}
			var d models.Delegation
			if err := c.do(cmd.Context(), http.MethodPost, "/delegations", req, &d); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "delegation %d: %s decides for %s from %s until %s\n", d.ID, d.To, d.From,
				d.Start.Format(time.RFC3339), d.End.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "who decides for you (required)")
	cmd.Flags().StringVar(&until, "until", "", "when it ends: an RFC 3339 time, or from now: 7d, 12h, 30m (required)")
	cmd.Flags().StringVar(&start, "start", "", "when it starts (default now): an RFC 3339 time, or from now: 1d")
	cmd.Flags().StringVar(&from, "from", "", "whose authority (default yours; only an operator lends another's)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the record")
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.MarkFlagRequired("until")
	c.bind(cmd)
	return cmd
}

// delegationTime reads an RFC 3339 time, or a span from now: "7d", "12h",
// "30m", "45s".
func delegationTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time or a span (7d, 12h)", s)
		}
		return now.Add(time.Duration(days) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time or a span (7d, 12h)", s)
	}
	return now.Add(d), nil
}

func printDelegations(out io.Writer, list []models.Delegation) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tFROM\tTO\tSTART\tEND\tSTATE\tBY\tREASON")
	now := time.Now()
	for _, d := range list {
		state := "active"
		switch {
		case d.RevokedAt != nil:
			state = "revoked by " + d.RevokedBy
		case now.Before(d.Start):
			state = "future"
		case !now.Before(d.End):
			state = "ended"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.From, d.To, d.Start.Format(time.RFC3339),
			d.End.Format(time.RFC3339), state, d.CreatedBy, d.Reason)
	}
	return w.Flush()
}
