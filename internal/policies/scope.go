package policies

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// The layers of policies, from the widest.
const (
	LayerServer = "server"
	LayerTenant = "tenant"
	LayerAgent  = "agent"
	LayerTool   = "tool"
)

// layerOrder ranks the layers, the server's first.
var layerOrder = map[string]int{LayerServer: 0, LayerTenant: 1, LayerAgent: 2, LayerTool: 3}

// Scope is where a text of policies applies: the server ("server": every
// request), a tenant ("tenant/acme": the tasks of that tenant), an agent
// ("agent/payables": its tasks) or a tool ("tool/pay_invoice": the calls of
// that tool, in any agent).
type Scope struct {
	Layer string
	// Name is the tenant, agent or tool; empty for the server.
	Name string
}

var scopeName = regexp.MustCompile(`^[A-Za-z0-9_.@:-]{1,128}$`)

// ParseScope reads "server", "tenant/NAME", "agent/NAME" or "tool/NAME".
func ParseScope(s string) (Scope, error) {
	layer, name, hasName := strings.Cut(s, "/")
	switch {
	case layer == LayerServer && !hasName:
		return Scope{Layer: LayerServer}, nil
	case layer == LayerServer:
		return Scope{}, fmt.Errorf("scope %q: the server scope is \"server\", with no name", s)
	case layerOrder[layer] == 0:
		return Scope{}, fmt.Errorf("scope %q: want server, tenant/NAME, agent/NAME or tool/NAME", s)
	case !scopeName.MatchString(name):
		return Scope{}, fmt.Errorf("scope %q: the %s's name must be 1 to 128 letters, digits or _ . @ : -", s, layer)
	}
	return Scope{Layer: layer, Name: name}, nil
}

// String is the scope as ParseScope reads it.
func (s Scope) String() string {
	if s.Layer == LayerServer {
		return LayerServer
	}
	return s.Layer + "/" + s.Name
}

// applies reports whether the scope's policies judge in.
func (s Scope) applies(in wire.PolicyInput) bool {
	switch s.Layer {
	case LayerServer:
		return true
	case LayerTenant:
		return in.Tenant == s.Name
	case LayerAgent:
		return in.Agent == s.Name
	case LayerTool:
		return in.Action == wire.PolicyCallTool && in.Tool == s.Name
	}
	return false
}
