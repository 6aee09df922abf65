package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/remote"
)

// Exit codes of the client commands (card, send, get, list, cancel,
// subscribe), so that a script can branch on them without parsing output.
const (
	// exitOK: the command succeeded; a task it shows is completed (or still
	// working, for a non-blocking result).
	exitOK = 0
	// exitOther: any error without an A2A meaning (bad flags, network...).
	exitOther = cmdutil.ExitOther
	// exitWaiting: the task waits for the user (input-required or auth-required).
	exitWaiting = 2
	// exitTaskFailed: the task ended failed, rejected or canceled.
	exitTaskFailed = 3
	// exitA2AError: the agent answered with an A2A error (task not found,
	// not cancelable, unsupported operation, auth...).
	exitA2AError = 4
)

// a2aError wraps err with its A2A meaning (remote.Meaning) and exit code 4,
// or with exit code 1 when it is not an A2A error.
func a2aError(op string, err error) error {
	if m := remote.Meaning(err); m != "" {
		return &cmdutil.ExitError{Code: exitA2AError, Err: fmt.Errorf("%s: %s (%w)", op, m, err)}
	}
	return &cmdutil.ExitError{Code: exitOther, Err: fmt.Errorf("%s: %w", op, err)}
}

// Flags are the flags every client command shares (and agents add, which
// checks an agent as delegation will call it): how to reach the agent and
// how to authenticate to it. Credentials are only ever sent, never
// printed; secrets are not flag defaults (--help would print them): they
// come from the flag or, preferably, from their environment variable.
type Flags struct {
	agent     string
	agentFlag *pflag.Flag // --agent, to tell whether it is the default
	json      bool
	timeout   time.Duration

	// binding and protocolVersion force one transport (transport.go).
	binding         string
	protocolVersion string

	// Inline credentials, any combination (remote.Credentials).
	apiKey             cmdutil.Secret
	apiKeyIn           string
	apiKeyName         string
	bearer             cmdutil.Secret
	basicUser          string
	basicPassword      cmdutil.Secret
	oauth2TokenURL     string
	oauth2ClientID     string
	oauth2ClientSecret cmdutil.Secret
	oauth2Scopes       []string

	// credentialsFile is a keyring file (remote.LoadKeyring); authRef names
	// the entry to use. authRefFlag is set instead when the command defines
	// --auth-ref itself (agents add stores it in the directory): that entry
	// is then used when a keyring is given. credentialsFlag likewise when
	// the command defines --outbound-credentials itself.
	credentialsFile string
	credentialsFlag *pflag.Flag
	authRef         string
	authRefFlag     *pflag.Flag

	// The HTTP client is built once from the flags, so that an OAuth2 token
	// is fetched once per command (or REPL session).
	once  sync.Once
	hc    *http.Client
	hcErr error
}

// Bind binds the flags on cmd; withAgent adds --agent, for the commands
// that talk to one agent.
func (f *Flags) Bind(cmd *cobra.Command, withAgent bool) {
	fs := cmd.Flags()
	b := cmdutil.Bind(fs)
	if withAgent {
		f.bindAgent(fs, "base URL of the A2A agent, where its card is; default the local a2aflow server")
	}
	b.Secret(&f.apiKey, "api-key", "A2AFLOW_CLIENT_API_KEY", "API key sent to the agent; prefer the environment variable")
	b.String(&f.apiKeyIn, "api-key-in", "A2AFLOW_CLIENT_API_KEY_IN", remote.InHeader, "where --api-key goes: header, query or cookie")
	b.String(&f.apiKeyName, "api-key-name", "A2AFLOW_CLIENT_API_KEY_NAME", "",
		"header, query parameter or cookie name of --api-key; default X-API-Key in a header, api_key in a query or cookie",
		cmdutil.Formerly("api-key-header", "A2AFLOW_CLIENT_API_KEY_HEADER"))
	b.Secret(&f.bearer, "bearer", "A2AFLOW_CLIENT_BEARER", "bearer token sent as Authorization: Bearer; prefer the environment variable")
	b.String(&f.basicUser, "basic-user", "A2AFLOW_CLIENT_BASIC_USER", "", "user name of HTTP basic authentication")
	b.Secret(&f.basicPassword, "basic-password", "A2AFLOW_CLIENT_BASIC_PASSWORD", "password of HTTP basic authentication; prefer the environment variable")
	b.String(&f.oauth2TokenURL, "oauth2-token-url", "A2AFLOW_CLIENT_OAUTH2_TOKEN_URL", "", "token endpoint of the OAuth2 client credentials grant; the token is sent as a bearer token")
	b.String(&f.oauth2ClientID, "oauth2-client-id", "A2AFLOW_CLIENT_OAUTH2_CLIENT_ID", "", "OAuth2 client ID")
	b.Secret(&f.oauth2ClientSecret, "oauth2-client-secret", "A2AFLOW_CLIENT_OAUTH2_CLIENT_SECRET", "OAuth2 client secret; prefer the environment variable")
	b.StringSlice(&f.oauth2Scopes, "oauth2-scopes", "A2AFLOW_CLIENT_OAUTH2_SCOPES", nil, "OAuth2 scopes to ask for, comma-separated")
	if fl := fs.Lookup("outbound-credentials"); fl != nil {
		f.credentialsFlag = fl // the command's own (a worker's keyring): the same file
	} else {
		cmdutil.BindOutboundCredentials(fs, &f.credentialsFile,
			`JSON file of named credentials for calling agents, {"name": {"apiKey"|"bearer"|"basic"|"oauth2": ...}}, "env:VAR" values read from the environment; used with --auth-ref`)
	}
	if fl := fs.Lookup("auth-ref"); fl != nil {
		f.authRefFlag = fl
	} else {
		b.String(&f.authRef, "auth-ref", "A2AFLOW_CLIENT_AUTH_REF", "", "call the agent with the credentials of this name in the --outbound-credentials file, or without a file with the OAuth login of this name (agents login; the database and secrets key of $A2AFLOW_DATA_DIR, $A2AFLOW_DATABASE, $A2AFLOW_SECRETS_KEY)")
	}
	b.String(&f.binding, "binding", "A2AFLOW_CLIENT_BINDING", "", "use only this protocol binding of the agent's card: jsonrpc, rest or grpc; default the card's first interface the client speaks, gRPC included")
	b.String(&f.protocolVersion, "protocol-version", "A2AFLOW_CLIENT_PROTOCOL_VERSION", "", "use only this A2A protocol version of the agent's card: 1.0 or 0.3; default the client's choice")
	fs.BoolVar(&f.json, "json", false, "print JSON for scripts instead of text")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after this long; 0 waits as long as the agent takes")
}

// envAgent names the agent of the client commands without --agent.
const envAgent = "A2AFLOW_AGENT"

// bindAgent binds --agent: the agent's URL, else $A2AFLOW_AGENT, else the
// local a2aflow server ($A2AFLOW_API_URL, else where serve listens by
// default: http://localhost:8080, or the port of $A2AFLOW_HTTP_ADDR).
func (f *Flags) bindAgent(fs *pflag.FlagSet, usage string) {
	local := os.Getenv(cmdutil.EnvAPIURL)
	if local == "" {
		local = cmdutil.LocalServerURL()
	}
	cmdutil.Bind(fs).String(&f.agent, "agent", envAgent, local, usage, cmdutil.Formerly("", "A2AFLOW_CLIENT_AGENT"))
	f.agentFlag = fs.Lookup("agent")
}

// agentDefaulted reports whether --agent is the local server's default:
// neither given nor set in the environment.
func (f *Flags) agentDefaulted() bool {
	if f.agentFlag == nil || f.agentFlag.Changed {
		return false
	}
	_, _, set := cmdutil.EnvValue(f.agentFlag)
	return !set
}

// noAgent explains a failure to reach the agent at --agent's default: no
// local server answers there, and how to name another agent.
func (f *Flags) noAgent(err error) error {
	if !f.agentDefaulted() {
		return err
	}
	return fmt.Errorf("no A2A agent answers at %s, where the local a2aflow server listens (%w): start one (%s serve), or name the agent with --agent URL or %s=URL",
		f.agent, err, cmdutil.ProgName(), envAgent)
}

// Credentials returns the credentials the flags describe: the --auth-ref
// entry of the --outbound-credentials file, or the inline flags; nil when there are
// none. They are validated.
func (f *Flags) Credentials() (*remote.Credentials, error) {
	inline, set := f.inlineCredentials()
	file := f.credentialsFile
	if f.credentialsFlag != nil {
		file = f.credentialsFlag.Value.String()
	}
	ref := f.authRef
	if f.authRefFlag != nil {
		// The command's own --auth-ref (agents add): use it when a keyring
		// is given, to check the agent with the credentials it will be
		// called with; without one it is only a name to record.
		ref = f.authRefFlag.Value.String()
		if file == "" {
			ref = ""
		}
	}
	if ref == "" {
		if len(set) == 0 {
			return nil, nil
		}
		if err := inline.Validate(); err != nil {
			return nil, fmt.Errorf("client credentials (%s): %w", strings.Join(set, ", "), err)
		}
		return inline, nil
	}
	if file == "" {
		if len(set) > 0 {
			return nil, fmt.Errorf("--auth-ref %s names an OAuth login: do not also set %s", ref, strings.Join(set, ", "))
		}
		return loginCredentials(ref)
	}
	if len(set) > 0 {
		return nil, fmt.Errorf("--auth-ref %s takes the credentials from %s: do not also set %s", ref, file, strings.Join(set, ", "))
	}
	k, err := remote.LoadKeyring(file)
	if err != nil {
		return nil, err
	}
	c, err := k.Credentials(ref)
	if err != nil {
		if names := k.Names(); len(names) > 0 {
			return nil, fmt.Errorf("%w; %s has %s", err, file, strings.Join(names, ", "))
		}
		return nil, err
	}
	return c, nil
}

// loginCredentials are the credentials of the OAuth login ref (a2aflow
// agents login) in the database of $A2AFLOW_DATABASE, else
// $A2AFLOW_DATA_DIR (./data), sealed with $A2AFLOW_SECRETS_KEY or that data
// dir's key. The database stays open for the command, which may refresh
// the tokens.
func loginCredentials(ref string) (*remote.Credentials, error) {
	db := cmdutil.Database{DataDir: cmdutil.DataDir(), DSN: os.Getenv(cmdutil.EnvDatabase)}
	logins, _, err := cmdutil.OpenLogins(db, "", true)
	if err != nil {
		return nil, fmt.Errorf("--auth-ref %s without --outbound-credentials names an OAuth login (%s agents login), but: %w", ref, cmdutil.ProgName(), err)
	}
	c, ok, err := logins.LoginCredentials(ref)
	if err != nil {
		return nil, fmt.Errorf("--auth-ref %s: %w", ref, err)
	}
	if !ok {
		return nil, fmt.Errorf("--auth-ref %s: no OAuth login of that name in %s (%s agents login), and no --outbound-credentials FILE given", ref, db.Path(), cmdutil.ProgName())
	}
	return c, nil
}

// JSON reports whether --json asks for JSON output.
func (f *Flags) JSON() bool { return f.json }

// Timeout is --timeout; 0 waits as long as the agent takes.
func (f *Flags) Timeout() time.Duration { return f.timeout }

// AuthRef names the credentials the flags use, for messages.
func (f *Flags) AuthRef() string {
	if f.authRefFlag != nil {
		return f.authRefFlag.Value.String()
	}
	if f.authRef != "" {
		return f.authRef
	}
	return "given with the flags"
}

// inlineCredentials builds the credentials of the inline flags and names
// the flags that are set (never their values).
func (f *Flags) inlineCredentials() (*remote.Credentials, []string) {
	c := &remote.Credentials{}
	var set []string
	if v := f.apiKey.Get(); v != "" {
		c.APIKey = &remote.APIKey{Value: v, In: f.apiKeyIn, Name: f.apiKeyName}
		set = append(set, "--api-key")
	}
	if v := f.bearer.Get(); v != "" {
		c.Bearer = v
		set = append(set, "--bearer")
	}
	if pass := f.basicPassword.Get(); f.basicUser != "" || pass != "" {
		c.Basic = &remote.Basic{Username: f.basicUser, Password: pass}
		set = append(set, "--basic-user/--basic-password")
	}
	if secret := f.oauth2ClientSecret.Get(); f.oauth2TokenURL != "" || f.oauth2ClientID != "" || secret != "" {
		c.OAuth2 = &remote.OAuth2{TokenURL: f.oauth2TokenURL, ClientID: f.oauth2ClientID, ClientSecret: secret, Scopes: f.oauth2Scopes}
		set = append(set, "--oauth2-*")
	}
	return c, set
}

// client returns the HTTP client of every outbound call, built once from
// the flags, or why the flags give none. It has no overall timeout because a
// stream or a blocking send may last long; the command context (--timeout,
// Ctrl-C) bounds it instead.
func (f *Flags) client() (*http.Client, error) {
	f.once.Do(func() {
		c, err := f.Credentials()
		switch {
		case err != nil:
			f.hcErr = err
			f.hc = &http.Client{Transport: failingTransport{err: err}}
		case c == nil:
			f.hc = remote.PlainClient()
		default:
			f.hc = c.HTTPClient()
		}
	})
	return f.hc, f.hcErr
}

// httpClient is client for the callers that only need the client: when the
// flags are wrong, every request through it fails with the reason.
func (f *Flags) httpClient() *http.Client {
	hc, _ := f.client()
	return hc
}

// failingTransport fails every request with err, sending nothing.
type failingTransport struct{ err error }

func (t failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return nil, t.err
}

// Context returns the command context bounded by --timeout.
func (f *Flags) Context(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if f.timeout > 0 {
		return context.WithTimeout(cmd.Context(), f.timeout)
	}
	return context.WithCancel(cmd.Context())
}

// resolveCard fetches the agent card at baseURL, in A2A 1.0 or 0.3 form.
func resolveCard(ctx context.Context, hc *http.Client, baseURL string) (*a2a.AgentCard, error) {
	if baseURL == "" {
		return nil, errors.New("no agent URL: pass --agent URL or set " + envAgent)
	}
	if ft, ok := hc.Transport.(failingTransport); ok {
		return nil, ft.err // the credential flags are wrong: say so plainly
	}
	return remote.ResolveCard(ctx, hc, baseURL)
}

// newA2AClient returns an a2a-go client for card: A2A 1.0 or 0.3, JSON-RPC
// or HTTP+JSON, whichever the card offers (the factory's choice).
func newA2AClient(ctx context.Context, hc *http.Client, card *a2a.AgentCard) (*a2aclient.Client, error) {
	return remote.NewClient(ctx, hc, card)
}

// newClient is newA2AClient for the agent at --agent, speaking the gRPC
// binding too (remote.NewGRPCClient): the client takes the card's first
// interface it speaks, so gRPC when the card prefers it, and --binding grpc
// forces it. gRPC is plaintext when --agent is http://, TLS when https://,
// and carries the same credentials as metadata.
func (f *Flags) newClient(ctx context.Context, hc *http.Client, card *a2a.AgentCard) (*a2aclient.Client, error) {
	creds, err := f.Credentials()
	if err != nil {
		return nil, err
	}
	return remote.NewGRPCClient(ctx, hc, card, remote.GRPCDialOptions(f.agent, creds))
}

// connect resolves the card at --agent and returns a client for it.
func (f *Flags) connect(ctx context.Context) (*a2aclient.Client, *a2a.AgentCard, error) {
	hc, err := f.client()
	if err != nil {
		return nil, nil, err
	}
	card, err := resolveCard(ctx, hc, f.agent)
	if err != nil {
		return nil, nil, f.noAgent(err)
	}
	forced, err := forceTransport(card, f.binding, f.protocolVersion)
	if err != nil {
		return nil, nil, err
	}
	c, err := f.newClient(ctx, hc, forced)
	if err != nil {
		return nil, nil, err
	}
	return c, card, nil
}

// withAgent runs call with a client of the agent at --agent, as every
// client verb does: in the command's context bounded by --timeout, with the
// card resolved and the a2a-go client made (connect), and the client closed
// when call returns.
func (f *Flags) withAgent(cmd *cobra.Command, call func(ctx context.Context, c *a2aclient.Client, card *a2a.AgentCard) error) error {
	ctx, cancel := f.Context(cmd)
	defer cancel()
	c, card, err := f.connect(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Destroy() }()
	return call(ctx, c, card)
}

// show prints an answer of the agent, v: as JSON with --json, else with
// text.
func (f *Flags) show(w io.Writer, v any, text func(io.Writer) error) error {
	if f.json {
		return cmdutil.PrintJSON(w, v)
	}
	return text(w)
}

// showTask shows task (show; with its messages when withHistory) and
// returns the exit status its state gives (stateExitCode).
func (f *Flags) showTask(w io.Writer, task *a2a.Task, withHistory bool) error {
	err := f.show(w, task, func(w io.Writer) error {
		printTask(w, task, f.agent)
		if withHistory && len(task.History) > 0 {
			fmt.Fprintln(w, "History:")
			printHistory(w, task)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return cmdutil.Exit(stateExitCode(task.Status.State))
}

// stateName is the short spelling of a task state: "input-required".
func stateName(s a2a.TaskState) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(string(s), "TASK_STATE_"), "_", "-"))
}

// parseState accepts "input-required", "INPUT_REQUIRED" or
// "TASK_STATE_INPUT_REQUIRED".
func parseState(s string) (a2a.TaskState, error) {
	if s == "" {
		return a2a.TaskStateUnspecified, nil
	}
	for _, st := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
		a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled} {
		if strings.EqualFold(s, string(st)) || strings.EqualFold(s, stateName(st)) ||
			strings.EqualFold(strings.ReplaceAll(s, "_", "-"), stateName(st)) {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown task state %q: use submitted, working, input-required, auth-required, completed, failed, rejected or canceled", s)
}

// stateExitCode is the exit code a task in state s gives send, get and subscribe.
func stateExitCode(s a2a.TaskState) int {
	switch s {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return exitWaiting
	case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
		return exitTaskFailed
	}
	return exitOK
}

// partsText renders parts for a human: text as is, data as compact JSON,
// files by name or URL.
func partsText(parts a2a.ContentParts) string {
	var out []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch {
		case p.Text() != "":
			out = append(out, p.Text())
		case p.Data() != nil:
			raw, err := json.Marshal(p.Data())
			if err != nil {
				raw = []byte(fmt.Sprint(p.Data()))
			}
			out = append(out, string(raw))
		case p.URL() != "":
			out = append(out, "[file "+string(p.URL())+"]")
		case len(p.Raw()) > 0:
			out = append(out, fmt.Sprintf("[file, %d bytes]", len(p.Raw())))
		}
	}
	return strings.Join(out, " ")
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}
