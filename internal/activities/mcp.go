package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/genai"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// MCPServer is an MCP server the worker's agents may use tools of, as the
// operator configured it: reached over streamable HTTP at URL, or started
// as a subprocess speaking MCP on its standard input and output (Command).
type MCPServer struct {
	// Name is how agents and histories name the server.
	Name string
	// URL is the server's streamable HTTP endpoint (https://host/mcp). Its
	// host is trusted (the operator wrote it); every request goes through
	// the guarded outbound client, bounded as outbound.MCP.
	URL string
	// Credentials names an entry of the outbound keyring whose credentials
	// (API key, bearer token, OAuth2 client credentials) the requests
	// carry; "" sends none.
	Credentials string
	// Command, with Args and Env (KEY=VALUE, added to the worker's
	// environment), starts a server that speaks MCP over stdio; the worker
	// keeps it running and starts it again when it exits.
	Command string
	Args    []string
	Env     []string
}

// Validate reports a server that is not usable: no name, neither or both of
// URL and Command.
func (s MCPServer) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("an MCP server needs a name")
	case s.URL == "" && s.Command == "":
		return fmt.Errorf("MCP server %q: give a url (streamable HTTP) or a command (stdio)", s.Name)
	case s.URL != "" && s.Command != "":
		return fmt.Errorf("MCP server %q: a url or a command, not both", s.Name)
	case s.Command != "" && s.Credentials != "":
		return fmt.Errorf("MCP server %q: credentials are for a url; a command gets its secrets from its env", s.Name)
	}
	if s.URL != "" {
		if _, err := outbound.ParseURL(s.URL); err != nil {
			return fmt.Errorf("MCP server %q: %w", s.Name, err)
		}
	}
	return nil
}

// MCP is the MCP client of the worker: the activities that list an MCP
// server's tools and call them (wire.ActivityListMCPTools,
// wire.ActivityCallMCPTool), through one session per server, opened on
// first use and opened again after it breaks. Close ends the sessions (and
// stops the servers it started).
type MCP struct {
	// Servers are the configured servers, by name.
	Servers map[string]MCPServer
	// Keyring holds the servers' credentials.
	Keyring *remote.Keyring
	// Outbound makes the HTTP requests.
	Outbound *outbound.Client
	// Logger logs the servers' sessions; default slog.Default().
	Logger *slog.Logger

	mu       sync.Mutex
	sessions map[string]*mcp.ClientSession
}

// mcpClient is a2aflow as an MCP client.
var mcpClient = &mcp.Implementation{Name: "a2aflow", Version: "1"}

// session returns the open session to server, opening one when none is.
func (m *MCP) session(ctx context.Context, name string) (*mcp.ClientSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sessions[name]; ok {
		return s, nil
	}
	srv, ok := m.Servers[name]
	if !ok {
		names := make([]string, 0, len(m.Servers))
		for n := range m.Servers {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no MCP server named %q is configured on this worker (servers: %s)", name, strings.Join(names, ", ")), wire.ErrTypeUnknownMCPServer, nil)
	}
	var transport mcp.Transport
	if srv.URL != "" {
		var creds *remote.Credentials
		if srv.Credentials != "" {
			c, err := m.Keyring.Credentials(srv.Credentials)
			if err != nil {
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("MCP server %q: %v", name, err), wire.ErrTypeUnknownMCPServer, nil)
			}
			creds = c
		}
		hc, err := remote.Endpoint{URL: srv.URL, Trusted: true, Credentials: creds, AuthRef: srv.Credentials}.Client(m.Outbound, outbound.MCP)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("MCP server %q: %v", name, err), wire.ErrTypeUnknownMCPServer, nil)
		}
		transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: 1}
	} else {
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = append(os.Environ(), srv.Env...)
		cmd.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
	}
	// The session outlives this call's context: it serves the calls that
	// follow.
	s, err := mcp.NewClient(mcpClient, nil).Connect(context.WithoutCancel(ctx), transport, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to MCP server %q: %w", name, err)
	}
	if m.sessions == nil {
		m.sessions = map[string]*mcp.ClientSession{}
	}
	m.sessions[name] = s
	m.logger().Info("MCP session opened", "server", name, "session", s.ID())
	return s, nil
}

// drop closes and forgets server's session when it is still s: a broken
// session is opened again by the next call (a retry).
func (m *MCP) drop(name string, s *mcp.ClientSession) {
	m.mu.Lock()
	if m.sessions[name] == s {
		delete(m.sessions, name)
	}
	m.mu.Unlock()
	_ = s.Close()
}

func (m *MCP) logger() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.Default()
}

// Close ends every session, stopping the servers started as commands.
func (m *MCP) Close() {
	m.mu.Lock()
	sessions := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	for _, s := range sessions {
		_ = s.Close()
	}
}

// ListMCPTools lists the tools of an MCP server.
func (m *MCP) ListMCPTools(ctx context.Context, in wire.MCPListToolsInput) (wire.MCPToolList, error) {
	s, err := m.session(ctx, in.Server)
	if err != nil {
		return wire.MCPToolList{}, err
	}
	out := wire.MCPToolList{Server: in.Server, Tools: []wire.MCPTool{}}
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			m.drop(in.Server, s)
			return wire.MCPToolList{}, fmt.Errorf("list the tools of MCP server %q: %w", in.Server, err)
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return wire.MCPToolList{}, fmt.Errorf("MCP server %q: tool %q: input schema: %w", in.Server, t.Name, err)
		}
		out.Tools = append(out.Tools, wire.MCPTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema,
			Annotations: mcpAnnotations(t.Annotations)})
	}
	return out, nil
}

// mcpAnnotations are a tool's MCP annotations as the approval policies read
// them, with MCP's defaults for the hints left out (destructive and open
// world unless said otherwise, of a tool that is not read-only); a tool
// without annotations says nothing: all false.
func mcpAnnotations(a *mcp.ToolAnnotations) wire.ToolAnnotations {
	if a == nil {
		return wire.ToolAnnotations{}
	}
	hint := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	return wire.ToolAnnotations{ReadOnly: a.ReadOnlyHint, Destructive: !a.ReadOnlyHint && hint(a.DestructiveHint, true),
		Idempotent: a.IdempotentHint, OpenWorld: hint(a.OpenWorldHint, true)}
}

// CallMCPTool calls one tool of an MCP server with the call's idempotency
// key in _meta (the task's ID and the activity's: the same on every retry of
// the call). A result the server marks as an error is a non-retryable
// ErrTypeMCPToolError carrying its text; a call that does not reach the
// server (the session broke) is retried by Temporal on a new session.
func (m *MCP) CallMCPTool(ctx context.Context, in wire.MCPCallToolInput) (wire.MCPCallToolResult, error) {
	s, err := m.session(ctx, in.Server)
	if err != nil {
		return wire.MCPCallToolResult{}, err
	}
	var args any
	if len(in.Arguments) > 0 {
		args = in.Arguments
	}
	// Heartbeats tell Temporal the worker still works on the call, so that a
	// worker that dies mid-call has its call retried within the heartbeat
	// timeout, not the call's whole timeout.
	stop := heartbeat(ctx, 5*time.Second)
	defer stop()
	info := activity.GetInfo(ctx)
	meta := mcp.Meta{wire.MCPIdempotencyKeyMeta: info.WorkflowExecution.ID + "/" + info.ActivityID}
	// The MCP conventions' client span, and its trace context in the
	// request's _meta (traceparent, tracestate), beside the HTTP headers.
	ctx, span := genai.StartMCPToolCall(ctx, in.Server, in.Tool, s.ID())
	otel.GetTextMapPropagator().Inject(ctx, metaCarrier(meta))
	params := &mcp.CallToolParams{Name: in.Tool, Arguments: args, Meta: meta}
	res, err := s.CallTool(ctx, params)
	if err != nil {
		genai.End(span, err, "_OTHER")
		if ctx.Err() == nil {
			m.drop(in.Server, s)
		}
		return wire.MCPCallToolResult{}, fmt.Errorf("call %s of MCP server %q: %w", in.Tool, in.Server, err)
	}
	text := MCPResultText(res)
	if res.IsError {
		genai.End(span, errors.New(text), "tool_error")
		return wire.MCPCallToolResult{}, temporal.NewNonRetryableApplicationError(text, wire.ErrTypeMCPToolError, nil)
	}
	genai.End(span, nil, "")
	return wire.MCPCallToolResult{Text: text}, nil
}

// metaCarrier lets a propagator write into an MCP request's _meta.
type metaCarrier mcp.Meta

func (m metaCarrier) Get(key string) string { v, _ := m[key].(string); return v }
func (m metaCarrier) Set(key, value string) { m[key] = value }
func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// MCPResultText is what the model reads of a tool's result: text content as
// it is, structured content as JSON, text resources inline, images, audio
// and other resources described.
func MCPResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s %s]", c.URI, c.Name, c.MIMEType))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			} else if r != nil {
				parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			if raw, err := json.Marshal(c); err == nil {
				parts = append(parts, string(raw))
			}
		}
	}
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil && !containsText(parts, string(raw)) {
			parts = append(parts, string(raw))
		}
	}
	return strings.Join(parts, "\n")
}

// containsText reports whether a part is s (a server that sends its
// structured content as text too is not read twice).
func containsText(parts []string, s string) bool {
	for _, p := range parts {
		if strings.TrimSpace(p) == s {
			return true
		}
	}
	return false
}

// heartbeat records a heartbeat of the activity of ctx every interval until
// the returned function is called.
func heartbeat(ctx context.Context, interval time.Duration) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done) }
}
