package guard

import (
	"net/http"
	"strings"
)

// The paths the guard tells apart: those every client may read before it
// has credentials, and the shape of the answers it gives on each (a
// JSON-RPC error object on a JSON-RPC endpoint, {"error": "..."} on the
// approvals API, a google.rpc.Status anywhere else).

const (
	// MCPPath is where the API serves MCP (streamable HTTP).
	MCPPath = "/mcp"
	// JWKSPath is where the public key of signed cards is served.
	JWKSPath = "/.well-known/jwks.json"
	// DecisionRoute is the route of approval decisions.
	DecisionRoute = "/approvals/:id/decision"
	// ConsolePath is where the API serves the web console, a public page
	// whose data the browser reads from the API with the user's
	// credentials (resources/console.go).
	ConsolePath = "/console"
)

// publicRoute reports whether r reads something every client may see
// before it has credentials.
func publicRoute(r *http.Request) bool {
	// OPTIONS: a2a-go's card handler answers CORS preflights.
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
		return false
	}
	switch p := r.URL.Path; {
	case p == "/healthz", p == "/readyz", p == "/metrics", p == "/agents", p == "/.well-known/agent-card.json",
		p == JWKSPath,    // the public key of signed cards (a2abinding/cards.go)
		p == "/inbox",    // the page shell; its data comes from /approvals with credentials
		p == ConsolePath: // the console's shell; its data comes from the API with credentials
		return true
	case strings.HasPrefix(p, ConsolePath+"/"): // the console's scripts and style, static
		return true
	case p == "/openapi.json", p == "/docs": // the API's description (internal/api/openapi.go)
		return true
	case strings.HasPrefix(p, "/agents/"):
		_, rest, _ := strings.Cut(strings.TrimPrefix(p, "/agents/"), "/")
		return rest == ".well-known/agent-card.json"
	}
	return false
}

// agentPrefix returns "/agents/{name}" for a path under it, else "" (the
// default agent's routes).
func agentPrefix(path string) string {
	rest, ok := strings.CutPrefix(path, "/agents/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return "/agents/" + name
}

// approvalsPath reports whether path belongs to the approvals API, whose
// errors are {"error": "..."}.
func approvalsPath(path string) bool {
	return path == "/approvals" || strings.HasPrefix(path, "/approvals/") || path == "/inbox"
}

// jsonRPCPath reports whether path is a JSON-RPC endpoint: the default
// agent's "/", an agent's "/agents/{name}", or MCP's.
func jsonRPCPath(path string) bool {
	if path == "" || path == "/" || path == MCPPath {
		return true
	}
	name, ok := strings.CutPrefix(path, "/agents/")
	return ok && name != "" && !strings.Contains(strings.TrimSuffix(name, "/"), "/")
}
