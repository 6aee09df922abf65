package taskservice

import (
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// AgentCard returns the A2A 1.0 card of agent served at url (its JSON-RPC
// endpoint and the base of its HTTP+JSON binding).
func AgentCard(agent *workflows.Agent, url string) *a2a.AgentCard {
	version := agent.Version
	if version == "" {
		version = "1.0.0"
	}
	in, out := agent.InputModes, agent.OutputModes
	if len(in) == 0 {
		in = []string{"text/plain", "application/json"}
	}
	if len(out) == 0 {
		out = []string{"text/plain", "application/json"}
	}
	skills := agent.Skills
	if skills == nil {
		skills = []a2a.AgentSkill{}
	}
	return &a2a.AgentCard{
		Name:        agent.Name,
		Description: agent.Description,
		Version:     version,
		Provider:    agent.Provider,
		// The same URLs serve 1.0 and 0.3; the A2A-Version header chooses.
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(url, a2a.TransportProtocolHTTPJSON),
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: url, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
			// A2A 1.1 (the specification's dev-1.1 branch): 1.0 with the
			// task generation (a2abinding/v11.go), last, so that a client
			// that picks the first interface it knows picks as before.
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: V11},
			{URL: url, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: V11},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true, Extensions: cardExtensions(agent)},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
		Skills:             skills,
	}
}

// V11 is A2A 1.1's protocol version, which the cards list beside 1.0 and
// 0.3 for the JSON-RPC and HTTP+JSON bindings.
const V11 a2a.ProtocolVersion = "1.1"

// cardExtensions returns the agent's extensions as its card declares them.
func cardExtensions(agent *workflows.Agent) []a2a.AgentExtension {
	return append(slices.Clone(agent.Extensions), a2a.AgentExtension{URI: ForkExtensionURI,
		Description: "a2aflow's fork and retry: the JSON-RPC methods ForkTask {id, atMessage, contextId?} and RetryTask {id}, " +
			"and POST /tasks/{id}:fork and /tasks/{id}:retry over HTTP+JSON, start a new task that reuses the original's recorded steps"},
		a2a.AgentExtension{URI: LiveExtensionURI,
			Description: "a2aflow's live answers on A2A 1.1 streams: an answer's chunks while it is written, as events marked " +
				"with the metadata key " + wire.LiveMetadataKey + " that carry no generation (they change no task state); " +
				"clients leave them out of generation tracking. A2A 1.0 and 0.3 streams always carry them"})
}

// LiveExtensionURI is the a2aflow extension an A2A 1.1 client activates
// to get live answers on its streams (generation.go: liveOf).
const LiveExtensionURI = "urn:a2aflow:ext:live-answers:v1"

// ForkExtensionURI is the a2aflow extension every agent's card declares:
// its JSON-RPC methods ForkTask and RetryTask.
const ForkExtensionURI = "urn:a2aflow:ext:fork:v1"
