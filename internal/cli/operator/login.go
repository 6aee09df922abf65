package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/oauthlogin"
	"github.com/a2aflow/a2aflow/internal/remote"
)

// loginFlags are the flags of the login commands: the database and the
// secrets key the logins are sealed with.
type loginFlags struct {
	db  cmdutil.Database
	key cmdutil.Secret
}

func (l *loginFlags) bind(cmd *cobra.Command) {
	l.db.Bind(cmd.Flags())
	cmdutil.Bind(cmd.Flags()).Secret(&l.key, "secrets-key", cmdutil.EnvSecretsKey,
		"base64 secrets key sealing the login's tokens: the key of the servers and workers that call with it; default <data-dir>/secrets.key (serve's)")
}

// loginHTTP reaches the authorization server: its discovery document,
// token and device endpoints, which the operator chose by naming the agent.
var loginHTTP = &http.Client{Timeout: remote.TokenFetchTimeout}

// agentsLogin is agents login: its flags, and what it does.
type agentsLogin struct {
	loginFlags
	name, clientID, issuer string
	clientSecret           cmdutil.Secret
	scopes, hosts          []string
	device, open           bool
	wait                   time.Duration
}

func newAgentsLoginCmd() *cobra.Command {
	l := &agentsLogin{}
	cmd := &cobra.Command{
		Use:   "login URL|NAME --client-id ID [--device] [--open]",
		Short: "Log in to a remote agent with OAuth 2.0 (authorization code + PKCE, or device code) and keep the tokens sealed",
		Long: `Log in to a remote agent as a user, once: a2aflow reads the agent's card, finds the
authorization server its oauth2 scheme (authorizationCode or deviceCode flow) or
openIdConnect scheme names (--issuer when the card names none), and runs the
authorization code flow with PKCE (S256): it prints the URL to open (--open opens
a browser) and waits for the browser to come back to a listener on 127.0.0.1 at a
random port (register http://127.0.0.1/callback, any port, as the client's
redirect URI). --device runs the device code flow instead, when the server
offers it.

The access and refresh tokens are kept sealed with the secrets key in a2aflow's
database, under the login's name: a directory entry whose auth reference is that
name (agents add --auth-ref, or a login made for a directory NAME, which sets it)
and a2aflow send --auth-ref NAME call with the access token, refreshed as it
expires; a rotated refresh token is stored back sealed. When the authorization
server refuses the refresh token (revoked, expired), calls fail saying to run
this command again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return l.run(cmd, args[0]) },
	}
	fs := cmd.Flags()
	fs.StringVar(&l.name, "name", "", "the login's name (its auth reference); default the directory agent's name (which becomes its auth reference), else the card's name")
	b := cmdutil.Bind(fs)
	b.String(&l.clientID, "client-id", "A2AFLOW_LOGIN_CLIENT_ID", "", "OAuth client ID a2aflow is registered as with the authorization server (a public client: PKCE, no secret)")
	b.Secret(&l.clientSecret, "client-secret", "A2AFLOW_LOGIN_CLIENT_SECRET", "client secret, for a confidential client (kept sealed with the login); prefer the environment variable")
	fs.StringSliceVar(&l.scopes, "scopes", nil, "scopes to ask for, comma-separated; default those the card requires (OpenID Connect: openid, offline_access and those)")
	fs.StringSliceVar(&l.hosts, "hosts", nil, "hosts (host or host:port) the access token may be sent to, comma-separated; default the agent's host and port")
	fs.StringVar(&l.issuer, "issuer", "", "OpenID Connect issuer (or discovery URL) to log in with, for an agent whose card names no oauth2 or openIdConnect scheme")
	fs.BoolVar(&l.device, "device", false, "use the device code flow: enter a code on any device instead of a browser on this machine")
	fs.BoolVar(&l.open, "open", false, "open the authorization URL in a browser (xdg-open, open, or start)")
	fs.DurationVar(&l.wait, "timeout", 5*time.Minute, "give up when the login is not done after this long")
	l.bind(cmd)
	return cmd
}

// run logs in to the agent arg names (a directory name, or a URL), keeps
// the login and says how to call with it.
func (l *agentsLogin) run(cmd *cobra.Command, arg string) error {
	if l.clientID == "" {
		return errors.New("agents login: --client-id is required: the OAuth client a2aflow is registered as with the agent's authorization server")
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), l.wait)
	defer cancel()
	logins, closeDB, err := cmdutil.OpenLogins(l.db, l.key.Get(), false)
	if err != nil {
		return fmt.Errorf("agents login: %w", err)
	}
	defer closeDB()
	t, err := l.target(arg)
	if err != nil {
		return err
	}
	clients, err := remote.Endpoint{URL: t.url, Trusted: true}.Clients(directoryOutbound())
	if err != nil {
		return fmt.Errorf("agents login: %w", err)
	}
	card, err := remote.ResolveCard(ctx, clients.Card, t.url)
	if err != nil {
		return fmt.Errorf("agents login: %w", err)
	}
	if t.name == "" {
		t.name = loginName(card)
	}
	p, err := l.provider(ctx, card)
	if err != nil {
		return fmt.Errorf("agents login: %w", err)
	}
	out := cmd.ErrOrStderr()
	f := &oauthlogin.Flow{Provider: p, Client: oauthlogin.Client{ID: l.clientID, Secret: l.clientSecret.Get()}, HTTPClient: loginHTTP, Out: out}
	if l.open {
		f.OpenBrowser = openBrowser
	}
	if from := p.Scheme; from != "" {
		fmt.Fprintf(out, "Logging in to %s (%s) as its card's scheme %s says, at %s\n", card.Name, t.url, from, p.TokenURL)
	}
	run := f.AuthorizationCode
	if l.device {
		run = f.DeviceCode
	}
	tok, err := run(ctx)
	if err != nil {
		return fmt.Errorf("agents login: %w", err)
	}
	if err := logins.Save(ctx, oauthlogin.Login{Name: t.name, AgentURL: t.url, Hosts: l.hosts, Provider: p, Client: f.Client, Token: tok}); err != nil {
		return fmt.Errorf("agents login: %w", err)
	}
	return l.done(cmd.OutOrStdout(), t, tok)
}

// loginTarget is the agent a login is for.
type loginTarget struct {
	name        string // the login's; empty: the card's
	url         string
	entry       string // its directory entry, when the operator named one
	previousRef string // the entry's auth reference before the login
}

// target resolves arg, a directory name or a URL, to the agent to log in to.
func (l *agentsLogin) target(arg string) (loginTarget, error) {
	t := loginTarget{name: l.name, url: arg}
	if strings.Contains(arg, "://") {
		return t, nil
	}
	store, err := l.db.Open()
	if err != nil {
		return t, err
	}
	a, err := store.Agent(arg)
	_ = store.Close()
	if err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return t, fmt.Errorf("agents login: %q is neither a URL nor an agent of the directory", arg)
		}
		return t, err
	}
	t.entry, t.url, t.previousRef = a.Name, a.URL, a.AuthRef
	if t.name == "" {
		t.name = a.Name
	}
	return t, nil
}

// provider is the authorization server to log in with: --issuer's, else
// the one card's scheme names, with --scopes when given.
func (l *agentsLogin) provider(ctx context.Context, card *a2a.AgentCard) (oauthlogin.Provider, error) {
	var p oauthlogin.Provider
	var err error
	if l.issuer != "" {
		p, err = oauthlogin.Discover(ctx, loginHTTP, l.issuer)
	} else {
		p, err = oauthlogin.FromCard(ctx, loginHTTP, card)
		if errors.Is(err, oauthlogin.ErrNoOAuth) {
			err = fmt.Errorf("%w: name the authorization server with --issuer URL (OpenID Connect discovery)", err)
		}
	}
	if err != nil {
		return p, err
	}
	if len(l.scopes) > 0 {
		p.Scopes = l.scopes
	}
	return p, nil
}

// done says what the login holds, makes it the auth reference of the
// directory entry it was made for, and says how to call with it.
func (l *agentsLogin) done(w io.Writer, t loginTarget, tok *oauth2.Token) error {
	fmt.Fprintf(w, "logged in: OAuth login %s for %s, kept sealed in %s\n", t.name, t.url, l.db.Path())
	if tok.RefreshToken == "" {
		fmt.Fprintln(w, "the authorization server gave no refresh token (ask for the offline_access scope?): the login lasts until the access token expires")
	}
	if !tok.Expiry.IsZero() {
		fmt.Fprintf(w, "the access token expires at %s and is refreshed as needed\n", tok.Expiry.UTC().Format(time.RFC3339))
	}
	if t.entry == "" {
		fmt.Fprintf(w, "call with it: %s send --agent %s --auth-ref %s ..., or %s agents add %s --auth-ref %s\n",
			cmdutil.ProgName(), t.url, t.name, cmdutil.ProgName(), t.url, t.name)
		return nil
	}
	store, err := l.db.Open()
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.SetAgentAuthRef(t.entry, t.name); err != nil {
		return err
	}
	fmt.Fprintf(w, "directory agent %s now calls with it (auth reference %s)\n", t.entry, t.name)
	if t.previousRef != "" && t.previousRef != t.name {
		fmt.Fprintf(w, "(its auth reference was %s; an entry %s of a worker's --outbound-credentials file would still win over the login)\n", t.previousRef, t.name)
	}
	return nil
}

// loginName is the default name of a login for card: its name, in one word.
func loginName(card *a2a.AgentCard) string {
	f := strings.FieldsFunc(strings.ToLower(card.Name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	})
	if len(f) == 0 {
		return "login"
	}
	return strings.Join(f, "-")
}

// openBrowser opens u with the desktop's browser.
func openBrowser(u string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.Command("open", u)
	case "windows":
		c = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		c = exec.Command("xdg-open", u)
	}
	return c.Start()
}

func newAgentsLoginsCmd() *cobra.Command {
	l := &loginFlags{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "logins",
		Short: "List the OAuth logins (agents login): agent, token endpoint, expiry, refreshes; never a token",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logins, closeDB, err := cmdutil.OpenLogins(l.db, l.key.Get(), true)
			if err != nil {
				return fmt.Errorf("agents logins: %w", err)
			}
			defer closeDB()
			infos, err := logins.List(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(cmd.OutOrStdout(), infos)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tAGENT\tTOKEN ENDPOINT\tEXPIRES\tREFRESH TOKEN\tREFRESHES")
			for _, i := range infos {
				exp := "-"
				if !i.Expiry.IsZero() {
					exp = i.Expiry.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%d\n", i.Name, i.AgentURL, i.TokenURL, exp, i.HasRefreshToken, i.Refreshes)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts instead of text")
	l.bind(cmd)
	return cmd
}

func newAgentsLogoutCmd() *cobra.Command {
	l := &loginFlags{}
	cmd := &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget an OAuth login: its tokens are revoked at the authorization server (RFC 7009, when it names a revocation endpoint) and deleted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			logins, closeDB, err := cmdutil.OpenLogins(l.db, l.key.Get(), true)
			if err != nil {
				return fmt.Errorf("agents logout: %w", err)
			}
			defer closeDB()
			ok, revoked, err := logins.Logout(cmd.Context(), args[0], loginHTTP)
			if !ok && err == nil {
				return fmt.Errorf("agents logout: no OAuth login named %q", args[0])
			}
			if !ok {
				return fmt.Errorf("agents logout: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "forgot OAuth login %s\n", args[0])
			switch {
			case err != nil:
				return fmt.Errorf("agents logout: its tokens were deleted here, but not revoked at the authorization server: %w", err)
			case revoked:
				fmt.Fprintln(cmd.OutOrStdout(), "its tokens were revoked at the authorization server")
			default:
				fmt.Fprintln(cmd.OutOrStdout(), "the authorization server names no revocation endpoint: its tokens live on there until they expire")
			}
			return nil
		},
	}
	l.bind(cmd)
	return cmd
}
