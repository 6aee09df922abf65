package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/spf13/cobra"
)

// Exit codes of the client commands (card, send, get, list, cancel,
// subscribe), so that a script can branch on them without parsing output.
const (
	// exitOK: the command succeeded; a task it shows is completed (or still
	// working, for a non-blocking result).
	exitOK = 0
	// exitOther: any error without an A2A meaning (bad flags, network...).
	exitOther = 1
	// exitWaiting: the task waits for the user (input-required or auth-required).
	exitWaiting = 2
	// exitTaskFailed: the task ended failed, rejected or canceled.
	exitTaskFailed = 3
	// exitA2AError: the agent answered with an A2A error (task not found,
	// not cancelable, unsupported operation, auth...).
	exitA2AError = 4
)

// exitError carries the process exit code of a command. A nil err means the
// command already printed everything and only the exit code is left to set.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// reportError prints err (unless it only carries an exit code) and returns
// the process exit code for it.
func reportError(w io.Writer, err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(w, "a2aflow:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(w, "a2aflow:", err)
	return exitOther
}

// a2aErrorMeanings names each A2A error the way a user reads it, in the order
// they are checked.
var a2aErrorMeanings = []struct {
	err     error
	meaning string
}{
	{a2a.ErrTaskNotFound, "task not found"},
	{a2a.ErrTaskNotCancelable, "task not cancelable"},
	{a2a.ErrUnsupportedOperation, "unsupported operation"},
	{a2a.ErrPushNotificationNotSupported, "push notifications not supported"},
	{a2a.ErrUnsupportedContentType, "unsupported content type"},
	{a2a.ErrInvalidAgentResponse, "invalid agent response"},
	{a2a.ErrExtendedCardNotConfigured, "extended card not configured"},
	{a2a.ErrExtensionSupportRequired, "extension support required"},
	{a2a.ErrVersionNotSupported, "protocol version not supported"},
	{a2a.ErrUnauthenticated, "authentication required"},
	{a2a.ErrUnauthorized, "permission denied"},
	{a2a.ErrInvalidParams, "invalid params"},
	{a2a.ErrInvalidRequest, "invalid request"},
	{a2a.ErrMethodNotFound, "method not supported by the agent"},
	{a2a.ErrParseError, "parse error"},
	{a2a.ErrInternalError, "agent internal error"},
	{a2a.ErrServerError, "agent server error"},
}

// a2aError wraps err with its A2A meaning and exit code 4, or with exit
// code 1 when it is not an A2A error.
func a2aError(op string, err error) error {
	for _, m := range a2aErrorMeanings {
		if errors.Is(err, m.err) {
			return &exitError{code: exitA2AError, err: fmt.Errorf("%s: %s (%w)", op, m.meaning, err)}
		}
	}
	return &exitError{code: exitOther, err: fmt.Errorf("%s: %w", op, err)}
}

// clientFlags are the flags every client command shares: how to reach the
// agent and how to authenticate to it. Credentials are only ever sent, never
// printed.
type clientFlags struct {
	agent        string
	apiKey       string
	apiKeyHeader string
	bearer       string
	json         bool
	timeout      time.Duration
}

func (f *clientFlags) bind(cmd *cobra.Command, withAgent bool) {
	fs := cmd.Flags()
	if withAgent {
		fs.StringVar(&f.agent, "agent", env("A2AFLOW_CLIENT_AGENT", ""), "base URL of the A2A agent, where its card is (A2AFLOW_CLIENT_AGENT)")
	}
	fs.StringVar(&f.apiKey, "api-key", env("A2AFLOW_CLIENT_API_KEY", ""), "API key sent to the agent (A2AFLOW_CLIENT_API_KEY)")
	fs.StringVar(&f.apiKeyHeader, "api-key-header", env("A2AFLOW_CLIENT_API_KEY_HEADER", "X-API-Key"), "header carrying --api-key (A2AFLOW_CLIENT_API_KEY_HEADER)")
	fs.StringVar(&f.bearer, "bearer", env("A2AFLOW_CLIENT_BEARER", ""), "bearer token sent as Authorization: Bearer (A2AFLOW_CLIENT_BEARER)")
	fs.BoolVar(&f.json, "json", false, "print JSON for scripts instead of text")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after this long; 0 waits as long as the agent takes")
}

// credentialTransport adds the configured credentials to every request,
// the card fetch included.
type credentialTransport struct {
	base         http.RoundTripper
	apiKey       string
	apiKeyHeader string
	bearer       string
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.apiKey == "" && t.bearer == "" {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	if t.apiKey != "" {
		req.Header.Set(t.apiKeyHeader, t.apiKey)
	}
	if t.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+t.bearer)
	}
	return t.base.RoundTrip(req)
}

// httpClient returns the HTTP client of every outbound call. It has no
// overall timeout because a stream or a blocking send may last long; the
// command context (--timeout, Ctrl-C) bounds it instead.
func (f *clientFlags) httpClient() *http.Client {
	header := f.apiKeyHeader
	if header == "" {
		header = "X-API-Key"
	}
	return &http.Client{Transport: &credentialTransport{
		base: http.DefaultTransport, apiKey: f.apiKey, apiKeyHeader: header, bearer: f.bearer,
	}}
}

// context returns the command context bounded by --timeout.
func (f *clientFlags) context(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if f.timeout > 0 {
		return context.WithTimeout(cmd.Context(), f.timeout)
	}
	return context.WithCancel(cmd.Context())
}

// resolveCard fetches the agent card at baseURL, in A2A 1.0 or 0.3 form.
func resolveCard(ctx context.Context, hc *http.Client, baseURL string) (*a2a.AgentCard, error) {
	if baseURL == "" {
		return nil, errors.New("no agent URL: pass --agent URL")
	}
	resolver := &agentcard.Resolver{Client: hc, CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, baseURL)
	if err != nil {
		return nil, fmt.Errorf("agent card at %s: %w", baseURL, err)
	}
	if card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, fmt.Errorf("agent card at %s: %w", baseURL, errInvalidCard)
	}
	return card, nil
}

// errInvalidCard means a URL answered with JSON that is not a usable agent card.
var errInvalidCard = errors.New("not a valid agent card: it needs a name and at least one interface")

// newA2AClient returns an a2a-go client for card: A2A 1.0 or 0.3, JSON-RPC
// or HTTP+JSON, whichever the card offers (the factory's choice).
func newA2AClient(ctx context.Context, hc *http.Client, card *a2a.AgentCard) (*a2aclient.Client, error) {
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
			a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: hc})),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolHTTPJSON,
			a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{Client: hc})),
	)
	if err != nil {
		return nil, fmt.Errorf("no usable interface in the card of %s: %w", card.Name, err)
	}
	return c, nil
}

// connect resolves the card at --agent and returns a client for it.
func (f *clientFlags) connect(ctx context.Context) (*a2aclient.Client, *a2a.AgentCard, error) {
	hc := f.httpClient()
	card, err := resolveCard(ctx, hc, f.agent)
	if err != nil {
		return nil, nil, err
	}
	c, err := newA2AClient(ctx, hc, card)
	if err != nil {
		return nil, nil, err
	}
	return c, card, nil
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

// withExitCode turns a non-zero exit code into an error that only sets it.
func withExitCode(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
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

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
