package api

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/gin-gonic/gin"

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
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
		Skills:             skills,
	}
}

// card serves agent's card, written so that both 1.0 and 0.3 clients read it
// (a2av0's union form).
func (s *Server) card(agent *workflows.Agent, prefix string) gin.HandlerFunc {
	return func(c *gin.Context) {
		card := AgentCard(agent, s.baseURL(c.Request)+prefix)
		s.cfg.Auth.Declare(card)
		a2asrv.NewAgentCardHandler(cardProducer(card)).ServeHTTP(c.Writer, c.Request)
	}
}
