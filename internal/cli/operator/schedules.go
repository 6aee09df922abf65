package operator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// bindAPI binds --api and --api-key: the schedules commands speak to the
// REST API as the caller its key names (no --as: a schedule's owner is
// the authenticated caller).
func (a *approvalsClient) bindAPI(cmd *cobra.Command) {
	b := cmdutil.Bind(cmd.Flags())
	b.String(&a.base, "api", cmdutil.EnvAPIURL, cmdutil.LocalServerURL(), "a2aflow API base URL")
	b.Secret(&a.apiKey, "api-key", "A2AFLOW_API_KEY", "API key when the server requires one: the schedule's owner")
}

// newSchedulesCmd returns `a2aflow schedules`: recurring tasks on Temporal
// Schedules through the REST API (api/schedules.go).
func newSchedulesCmd() *cobra.Command {
	root := &cobra.Command{Use: "schedules", Aliases: []string{"schedule"},
		Short: "Schedules: tasks started on a timetable (cron or interval, on Temporal Schedules), each run an ordinary task of yours"}
	root.AddCommand(newScheduleCreateCmd(), newScheduleListCmd(), newScheduleDescribeCmd())
	for _, verb := range []struct{ use, short string }{
		{"pause", "Pause a schedule: no run starts until it is unpaused"},
		{"unpause", "Unpause a schedule"},
		{"trigger", "Start a run now, under the schedule's overlap policy"},
	} {
		root.AddCommand(newScheduleVerbCmd(verb.use, verb.short))
	}
	root.AddCommand(newScheduleDeleteCmd())
	return root
}

func newScheduleCreateCmd() *cobra.Command {
	var req resources.ScheduleRequest
	var data, metadata, start, end, pushURL string
	var pushToken cmdutil.Secret
	c := &approvalsClient{}
	cmd := &cobra.Command{
		Use:   "create --agent AGENT --text TEXT (--cron EXPR | --every DURATION)",
		Short: "Create a schedule: AGENT gets TEXT (and --data) as a new task at each time of --cron (in --time-zone) or every --every",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if data != "" {
				if req.Message.Data, err = jsonObjectArg("--data", data); err != nil {
					return err
				}
			}
			if metadata != "" {
				if req.Message.Metadata, err = jsonObjectArg("--metadata", metadata); err != nil {
					return err
				}
			}
			if req.Start, err = timeArg("--start", start); err != nil {
				return err
			}
			if req.End, err = timeArg("--end", end); err != nil {
				return err
			}
			if pushURL != "" {
				req.PushConfig = &a2a.PushConfig{URL: pushURL, Token: pushToken.Get()}
			}
			var out resources.ScheduleView
			if err := c.do(cmd.Context(), http.MethodPost, "/schedules", req, &out); err != nil {
				return err
			}
			return printSchedule(cmd, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "your name for the schedule, unique among yours: creating it again with the same settings is safe")
	f.StringVar(&req.Agent, "agent", "", "the agent that runs each task")
	f.StringVar(&req.Message.Text, "text", "", "the message's text")
	f.StringVar(&data, "data", "", "a JSON object sent as the message's data part")
	f.StringVar(&metadata, "metadata", "", "a JSON object: the message's metadata")
	f.StringVar(&req.Cron, "cron", "", `a cron expression: minute hour day-of-month month day-of-week (e.g. "0 9 * * MON"), or @daily, @weekly...`)
	f.StringVar(&req.Every, "every", "", "an interval instead of --cron (e.g. 2s, 1h, 168h)")
	f.StringVar(&req.TimeZone, "time-zone", "", "the IANA time zone --cron reads in (e.g. Europe/Paris; default UTC)")
	f.StringVar(&req.Jitter, "jitter", "", "delay each run by a random duration up to this (e.g. 30s)")
	f.StringVar(&start, "start", "", "no run before this time (RFC 3339)")
	f.StringVar(&end, "end", "", "no run after this time (RFC 3339)")
	f.StringVar(&req.Overlap, "overlap", "skip", "a run due while the previous one works: skip, buffer-one (starts after it) or cancel-previous")
	f.StringVar(&req.CatchupWindow, "catchup-window", "1m", "how late a run missed while the server was down still starts once it is back (at least 10s; longer ago: skipped)")
	f.StringVar(&req.ContextID, "context-id", "", "the A2A context of every run's task (default: one new context for the schedule)")
	f.BoolVar(&req.Paused, "paused", false, "create the schedule paused")
	f.StringVar(&req.Note, "note", "", "a note shown with the schedule")
	f.StringVar(&pushURL, "push-url", "", "a webhook every run's task notifies of its progress and results")
	cmdutil.Bind(f).Secret(&pushToken, "push-token", "A2AFLOW_PUSH_TOKEN", "the token the webhook gets with each notification")
	_ = cmd.MarkFlagRequired("agent")
	c.bindAPI(cmd)
	return cmd
}

func newScheduleListCmd() *cobra.Command {
	var agent string
	var asJSON bool
	c := &approvalsClient{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your schedules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if agent != "" {
				q.Set("agent", agent)
			}
			var out resources.ScheduleList
			if err := c.do(cmd.Context(), http.MethodGet, "/schedules?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tAGENT\tWHEN\tSTATE\tNEXT RUN")
			for _, s := range out.Schedules {
				when := s.Every
				if s.Cron != "" {
					when = s.Cron
					if s.TimeZone != "" {
						when += " " + s.TimeZone
					}
				} else {
					when = "every " + when
				}
				state, next := "active", ""
				if s.Paused {
					state = "paused"
				}
				if len(s.NextRuns) > 0 {
					next = s.NextRuns[0].Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.Agent, when, state, next)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "only this agent's schedules")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	c.bindAPI(cmd)
	return cmd
}

func newScheduleDescribeCmd() *cobra.Command {
	c := &approvalsClient{}
	cmd := &cobra.Command{
		Use:   "describe ID",
		Short: "Show a schedule: what it starts, when, its policy, its recent, running and next runs (JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out resources.ScheduleView
			if err := c.do(cmd.Context(), http.MethodGet, "/schedules/"+url.PathEscape(args[0]), nil, &out); err != nil {
				return err
			}
			return printSchedule(cmd, out)
		},
	}
	c.bindAPI(cmd)
	return cmd
}

func newScheduleVerbCmd(verb, short string) *cobra.Command {
	c := &approvalsClient{}
	var note string
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var body any
			if note != "" {
				body = map[string]string{"note": note}
			}
			var out resources.ScheduleView
			if err := c.do(cmd.Context(), http.MethodPost, "/schedules/"+url.PathEscape(args[0])+":"+verb, body, &out); err != nil {
				return err
			}
			state := "active"
			if out.Paused {
				state = "paused"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %d runs\n", out.ID, state, out.Runs)
			return nil
		},
	}
	if verb != "trigger" {
		cmd.Flags().StringVar(&note, "note", "", "why (shown with the schedule)")
	}
	c.bindAPI(cmd)
	return cmd
}

func newScheduleDeleteCmd() *cobra.Command {
	c := &approvalsClient{}
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a schedule (its tasks stay; a run under way goes on)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out map[string]any
			if err := c.do(cmd.Context(), http.MethodDelete, "/schedules/"+url.PathEscape(args[0]), nil, &out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: deleted\n", args[0])
			return nil
		},
	}
	c.bindAPI(cmd)
	return cmd
}

func printSchedule(cmd *cobra.Command, v resources.ScheduleView) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func jsonObjectArg(flag, s string) (map[string]any, error) {
	raw, err := payloadArg(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s must be a JSON object", flag)
	}
	return m, nil
}

func timeArg(flag, s string) (*time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("%s %q: want an RFC 3339 time (e.g. 2027-01-04T09:00:00+01:00)", flag, s)
	}
	return &t, nil
}
