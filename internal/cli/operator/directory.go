package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/cli/client"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
)

// directoryFlags open the agent directory (cmdutil.Database) and check
// agents with the client's credential flags.
type directoryFlags struct {
	db     cmdutil.Database
	client client.Flags
}

func (d *directoryFlags) bind(cmd *cobra.Command) {
	d.db.Bind(cmd.Flags())
	d.client.Bind(cmd, false)
}

func (d *directoryFlags) open() (*models.Store, error) { return d.db.Open() }

// directoryOutbound makes the requests of the directory commands. They only
// reach the agents the operator names (trusted), so its policy is the
// default: public addresses only.
var directoryOutbound = sync.OnceValue(func() *outbound.Client { return outbound.New(outbound.Options{}) })

// checkAgent fetches and validates the card at url, an agent the operator
// names: it must parse (A2A 1.0 or 0.3) and offer an interface this client
// can speak. The request goes through the guarded outbound client with the
// agent's host trusted, bounded as every card fetch, the credentials of the
// flags sent only to the hosts they are registered for.
//
// The card's signature is checked too (cardsign.VerifyAt): verified says
// whether it held, notVerified why not; an unverified card is no error.
func (d *directoryFlags) checkAgent(ctx context.Context, url string) (card *a2a.AgentCard, raw json.RawMessage, verified bool, notVerified error, err error) {
	card, raw, err = d.fetchAgent(ctx, url)
	if err != nil {
		return nil, nil, false, nil, err
	}
	clients, err := remote.Endpoint{URL: url, Trusted: true}.Clients(directoryOutbound())
	if err != nil {
		return nil, nil, false, nil, err
	}
	_, notVerified = cardsign.VerifyAt(ctx, clients.Card, url, card)
	return card, raw, notVerified == nil, notVerified, nil
}

func (d *directoryFlags) fetchAgent(ctx context.Context, url string) (*a2a.AgentCard, json.RawMessage, error) {
	creds, err := d.client.Credentials()
	if err != nil {
		return nil, nil, err
	}
	clients, err := remote.Endpoint{URL: url, Trusted: true, Credentials: creds, AuthRef: d.client.AuthRef()}.Clients(directoryOutbound())
	if err != nil {
		return nil, nil, err
	}
	card, err := remote.ResolveCard(ctx, clients.Card, url)
	if err != nil {
		return nil, nil, err
	}
	c, err := remote.NewClient(ctx, clients.Calls, card)
	if err != nil {
		return nil, nil, err
	}
	_ = c.Destroy()
	raw, err := json.Marshal(card)
	if err != nil {
		return nil, nil, fmt.Errorf("encode card of %s: %w", url, err)
	}
	return card, raw, nil
}

func newAgentsCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "agents",
		Short: "The directory of known remote A2A agents: add, list, remove, refresh; OAuth logins to them",
		Long: `The directory of known remote A2A agents: add, list, remove, refresh; and OAuth
logins to agents that ask for a user's authorization (login, logins, logout).

Agents added here (and with serve --peer) are the operator's: shared with every
owner of tasks, and their host is trusted by the outbound policy (reached even on
loopback or a private network). Agents a task remembers (remember_agent) belong
to the task's owner and obey --outbound-allow-hosts; list shows them with their
owner, remove --owner removes one.`,
	}
	root.AddCommand(newAgentsAddCmd(), newAgentsListCmd(), newAgentsRemoveCmd(), newAgentsRefreshCmd(),
		newAgentsLoginCmd(), newAgentsLoginsCmd(), newAgentsLogoutCmd())
	return root
}

func newAgentsAddCmd() *cobra.Command {
	d := &directoryFlags{}
	var name, authRef string
	cmd := &cobra.Command{
		Use:   "add URL [--name N] [--auth-ref CREDENTIAL]",
		Short: "Fetch and validate an agent's card, then add it to the directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := d.client.Context(cmd)
			defer cancel()
			card, raw, verified, notVerified, err := d.checkAgent(ctx, args[0])
			if err != nil {
				return fmt.Errorf("agents add: %w", err)
			}
			if name == "" {
				name = card.Name
			}
			store, err := d.open()
			if err != nil {
				return err
			}
			defer store.Close()
			now := time.Now()
			a := &models.RemoteAgent{Shared: true, Name: name, URL: args[0], Card: raw, AuthRef: authRef, LastSeen: &now, Healthy: true,
				CardVerified: verified}
			if err := store.AddAgent(a); err != nil {
				if errors.Is(err, models.ErrAlreadyExists) {
					return fmt.Errorf("agents add: an agent named %q is already in the directory (remove it first, or pass --name)", name)
				}
				return err
			}
			if d.client.JSON() {
				return cmdutil.PrintJSON(cmd.OutOrStdout(), a)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s (%s): %s\n", a.Name, card.Name, a.URL)
			if verified {
				fmt.Fprintln(cmd.OutOrStdout(), "its card's signature verified")
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "its card's signature did not verify: %v\n", notVerified)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name in the directory; default the card's name")
	cmd.Flags().StringVar(&authRef, "auth-ref", "", "name of the configured credential to call it with (never the credential itself)")
	d.bind(cmd)
	return cmd
}

func newAgentsListCmd() *cobra.Command {
	d := &directoryFlags{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agents of the directory with their health and owner (shared: the operator's)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := d.open()
			if err != nil {
				return err
			}
			defer store.Close()
			agents, err := store.Agents()
			if err != nil {
				return err
			}
			if d.client.JSON() {
				if agents == nil {
					agents = []models.RemoteAgent{}
				}
				return cmdutil.PrintJSON(cmd.OutOrStdout(), agents)
			}
			printAgents(cmd.OutOrStdout(), agents)
			return nil
		},
	}
	d.bind(cmd)
	return cmd
}

func printAgents(out io.Writer, agents []models.RemoteAgent) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tURL\tOWNER\tHEALTHY\tVERIFIED\tLAST SEEN\tAUTH\tERROR")
	for _, a := range agents {
		seen := "never"
		if a.LastSeen != nil {
			seen = a.LastSeen.Local().Format("2006-01-02 15:04:05")
		}
		owner := "(shared)"
		if !a.Shared {
			owner = a.Owner
			if owner == "" {
				owner = "(anonymous)"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%t\t%s\t%s\t%s\n", a.Name, a.URL, owner, a.Healthy, a.CardVerified, seen, a.AuthRef, a.LastError)
	}
	_ = w.Flush()
}

func newAgentsRemoveCmd() *cobra.Command {
	d := &directoryFlags{}
	var owner string
	cmd := &cobra.Command{
		Use:   "remove NAME [--owner PRINCIPAL]",
		Short: "Remove an agent from the directory: a shared one, or with --owner one a task of that owner remembered",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := d.open()
			if err != nil {
				return err
			}
			defer store.Close()
			scope := models.SharedScope
			if cmd.Flags().Changed("owner") {
				scope = models.OwnedBy(owner)
			}
			if err := store.RemoveAgentIn(scope, args[0]); err != nil {
				if errors.Is(err, models.ErrNotFound) {
					return fmt.Errorf("agents remove: no agent named %q in the directory (%s)", args[0], scope)
				}
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s (%s)\n", args[0], scope)
			return nil
		},
	}
	cmd.Flags().StringVar(&owner, "owner", "", `the principal whose remembered agent to remove ("" for tasks without authentication)`)
	d.bind(cmd)
	return cmd
}

func newAgentsRefreshCmd() *cobra.Command {
	d := &directoryFlags{}
	cmd := &cobra.Command{
		Use:   "refresh [NAME]",
		Short: "Fetch the cards of the directory's shared agents (or of one) again and record their health",
		Long: "Fetch the cards of the shared agents (the operator's) again and record their health; exits 1 when an agent is unreachable. " +
			"Agents tasks remembered are refreshed when a task remembers them again, through the outbound policy.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := d.open()
			if err != nil {
				return err
			}
			defer store.Close()
			var agents []models.RemoteAgent
			if len(args) == 1 {
				a, err := store.Agent(args[0])
				if err != nil {
					if errors.Is(err, models.ErrNotFound) {
						return fmt.Errorf("agents refresh: no agent named %q in the directory", args[0])
					}
					return err
				}
				agents = []models.RemoteAgent{*a}
			} else {
				all, err := store.Agents()
				if err != nil {
					return err
				}
				for _, a := range all {
					if a.Shared {
						agents = append(agents, a)
					}
				}
			}
			var updated []models.RemoteAgent
			down := 0
			for _, a := range agents {
				ctx, cancel := d.client.Context(cmd)
				if d.client.Timeout() == 0 {
					// One unreachable agent must not hold up the others.
					cancel()
					ctx, cancel = context.WithTimeout(cmd.Context(), 15*time.Second)
				}
				_, raw, verified, _, err := d.checkAgent(ctx, a.URL)
				cancel()
				if err != nil {
					down++
				}
				u, rerr := store.RecordAgentCheck(a.Name, models.AgentCheck{Card: raw, Err: err, Verified: verified})
				if rerr != nil {
					return rerr
				}
				updated = append(updated, *u)
			}
			if d.client.JSON() {
				if err := cmdutil.PrintJSON(cmd.OutOrStdout(), updated); err != nil {
					return err
				}
			} else {
				printAgents(cmd.OutOrStdout(), updated)
			}
			if down > 0 {
				return fmt.Errorf("agents refresh: %d of %d agents unreachable", down, len(agents))
			}
			return nil
		},
	}
	d.bind(cmd)
	return cmd
}
