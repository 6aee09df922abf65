package client

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// newPushCmd returns `push set|list|get|delete`: a task's push notification
// configs (webhooks), through the A2A push config methods of any agent; and
// `push verify`, which checks a notification a webhook received.
func newPushCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "push",
		Short: "Manage a task's push notification webhooks (set, list, get, delete) and verify a notification",
		Long:  "Manage the push notification configs of a task: the webhooks the agent POSTs the task's events to.\n" + clientHelp,
	}
	cmd.AddCommand(newPushSetCmd(), newPushListCmd(), newPushGetCmd(), newPushDeleteCmd(), newPushVerifyCmd())
	return cmd
}

// pushCommand is one push subcommand: connect, then run.
func pushCommand(use, short string, args cobra.PositionalArgs, f *Flags,
	run func(ctx context.Context, cmd *cobra.Command, args []string, c pushClient) error) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: short + ".\n" + clientHelp, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withAgent(cmd, func(ctx context.Context, c *a2aclient.Client, _ *a2a.AgentCard) error {
				return run(ctx, cmd, args, c)
			})
		},
	}
	f.Bind(cmd, true)
	return cmd
}

// pushClient is the part of a2aclient.Client the push commands use.
type pushClient interface {
	CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error)
	GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error)
	ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) ([]*a2a.PushConfig, error)
	DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error
}

func newPushSetCmd() *cobra.Command {
	f := &Flags{}
	var id, scheme string
	var token, credentials cmdutil.Secret
	cmd := pushCommand("set [--agent URL] TASK_ID WEBHOOK_URL [--id ID] [--token T] [--auth-scheme Bearer --auth-credentials C]",
		"Add or replace a webhook of a task", cobra.ExactArgs(2), f,
		func(ctx context.Context, cmd *cobra.Command, args []string, c pushClient) error {
			cfg := &a2a.PushConfig{TaskID: a2a.TaskID(args[0]), URL: args[1], ID: id, Token: token.Get()}
			if scheme != "" || credentials.Get() != "" {
				if scheme == "" {
					return fmt.Errorf("--auth-credentials needs --auth-scheme (e.g. Bearer)")
				}
				cfg.Auth = &a2a.PushAuthInfo{Scheme: scheme, Credentials: credentials.Get()}
			}
			got, err := c.CreateTaskPushConfig(ctx, cfg)
			if err != nil {
				return a2aError("push set", err)
			}
			return printPushConfigs(cmd.OutOrStdout(), f, got)
		})
	cmd.Flags().StringVar(&id, "id", "", "the config's ID, to keep several webhooks or replace one; default chosen by the agent")
	b := cmdutil.Bind(cmd.Flags())
	b.Secret(&token, "token", "A2AFLOW_CLIENT_PUSH_TOKEN", "token the agent sends with each notification, for the webhook to check; prefer the environment variable")
	cmd.Flags().StringVar(&scheme, "auth-scheme", "", "authentication scheme the agent uses to call the webhook, e.g. Bearer")
	b.Secret(&credentials, "auth-credentials", "A2AFLOW_CLIENT_PUSH_CREDENTIALS", "credentials of --auth-scheme; prefer the environment variable")
	return cmd
}

func newPushListCmd() *cobra.Command {
	f := &Flags{}
	return pushCommand("list [--agent URL] TASK_ID", "List the webhooks of a task", cobra.ExactArgs(1), f,
		func(ctx context.Context, cmd *cobra.Command, args []string, c pushClient) error {
			got, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: a2a.TaskID(args[0])})
			if err != nil {
				return a2aError("push list", err)
			}
			return printPushConfigs(cmd.OutOrStdout(), f, got...)
		})
}

func newPushGetCmd() *cobra.Command {
	f := &Flags{}
	return pushCommand("get [--agent URL] TASK_ID CONFIG_ID", "Show one webhook of a task", cobra.ExactArgs(2), f,
		func(ctx context.Context, cmd *cobra.Command, args []string, c pushClient) error {
			got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: a2a.TaskID(args[0]), ID: args[1]})
			if err != nil {
				return a2aError("push get", err)
			}
			return printPushConfigs(cmd.OutOrStdout(), f, got)
		})
}

func newPushDeleteCmd() *cobra.Command {
	f := &Flags{}
	return pushCommand("delete [--agent URL] TASK_ID CONFIG_ID", "Remove a webhook of a task", cobra.ExactArgs(2), f,
		func(ctx context.Context, cmd *cobra.Command, args []string, c pushClient) error {
			if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: a2a.TaskID(args[0]), ID: args[1]}); err != nil {
				return a2aError("push delete", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted push config %s of task %s\n", args[1], args[0])
			return nil
		})
}

// printPushConfigs shows configs as a table, or JSON with --json. Tokens
// and credentials are never printed: an agent may echo them back.
func printPushConfigs(w io.Writer, f *Flags, configs ...*a2a.PushConfig) error {
	shown := make([]*a2a.PushConfig, 0, len(configs))
	for _, c := range configs {
		if c == nil {
			continue
		}
		cp := *c
		if cp.Token != "" {
			cp.Token = "(set)"
		}
		if cp.Auth != nil {
			cp.Auth = &a2a.PushAuthInfo{Scheme: cp.Auth.Scheme}
		}
		shown = append(shown, &cp)
	}
	return f.show(w, shown, func(w io.Writer) error {
		if len(shown) == 0 {
			fmt.Fprintln(w, "No push configs.")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTASK\tURL\tTOKEN\tAUTH")
		for _, c := range shown {
			auth := ""
			if c.Auth != nil {
				auth = c.Auth.Scheme
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.TaskID, c.URL, c.Token, auth)
		}
		return tw.Flush()
	})
}

// extendedCard asks the agent at baseURL for its extended card
// (GetExtendedAgentCard), authenticated with f's credentials. An agent whose
// card does not offer one is an error that says so.
func extendedCard(ctx context.Context, f *Flags, baseURL string, card *a2a.AgentCard) (*a2a.AgentCard, error) {
	if !card.Capabilities.ExtendedAgentCard {
		return nil, &cmdutil.ExitError{Code: exitA2AError, Err: fmt.Errorf("card --extended: agent %s offers no extended card (its card says so)", card.Name)}
	}
	hc, err := f.client()
	if err != nil {
		return nil, err
	}
	forced, err := forceTransport(card, f.binding, f.protocolVersion)
	if err != nil {
		return nil, err
	}
	c, err := f.newClient(ctx, hc, forced)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Destroy() }()
	ext, err := c.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
	if err != nil {
		return nil, a2aError("card --extended", err)
	}
	return ext, nil
}
