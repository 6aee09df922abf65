package engine

import (
	"fmt"
	"sort"

	"github.com/a2aflow/a2aflow/workflows"
)

// Registry is the set of agents one a2aflow deployment serves. The API and the
// worker build the same registry, so the API can publish cards and the worker
// can run the handlers.
type Registry struct {
	agents map[string]*workflows.Agent
	order  []string
}

// NewRegistry returns a registry holding agents, the first being the default
// agent served at the root URL. It fails on a missing name or handler and on
// duplicate names.
func NewRegistry(agents ...*workflows.Agent) (*Registry, error) {
	r := &Registry{agents: map[string]*workflows.Agent{}}
	for _, a := range agents {
		if a == nil || a.Name == "" || a.Handle == nil {
			return nil, fmt.Errorf("agent %v: name and handler are required", a)
		}
		if !validAgentName(a.Name) {
			return nil, fmt.Errorf("agent %q: name must be lower-case letters, digits and '-'", a.Name)
		}
		if _, dup := r.agents[a.Name]; dup {
			return nil, fmt.Errorf("agent %q registered twice", a.Name)
		}
		r.agents[a.Name] = a
		r.order = append(r.order, a.Name)
	}
	if len(r.order) == 0 {
		return nil, fmt.Errorf("no agents")
	}
	return r, nil
}

// Get returns the named agent.
func (r *Registry) Get(name string) (*workflows.Agent, bool) {
	a, ok := r.agents[name]
	return a, ok
}

// Default returns the agent served at the root URL.
func (r *Registry) Default() *workflows.Agent { return r.agents[r.order[0]] }

// Agents returns the agents, the default first, in the order given.
func (r *Registry) Agents() []*workflows.Agent {
	out := make([]*workflows.Agent, len(r.order))
	for i, name := range r.order {
		out[i] = r.agents[name]
	}
	return out
}

// Names returns the agent names, default first, the rest sorted.
func (r *Registry) Names() []string {
	rest := append([]string(nil), r.order[1:]...)
	sort.Strings(rest)
	return append([]string{r.order[0]}, rest...)
}

func validAgentName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return len(name) <= 63
}
