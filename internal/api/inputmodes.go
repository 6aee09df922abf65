package api

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/workflows"
)

// partMediaType is the media type a message part is checked against the
// agent's input modes with: text/plain for text, application/json for data,
// a file's declared type for a file (application/octet-stream when it
// declares none).
func partMediaType(p *a2a.Part) string {
	switch p.Content.(type) {
	case a2a.Text:
		return "text/plain"
	case a2a.Data:
		return "application/json"
	}
	if strings.TrimSpace(p.MediaType) == "" {
		return "application/octet-stream"
	}
	return p.MediaType
}

// inputModes are the media types agent takes: its card's default input
// modes and its skills' input modes.
func inputModes(agent *workflows.Agent) []string {
	card := AgentCard(agent, "")
	taken := slices.Clone(card.DefaultInputModes)
	for _, skill := range card.Skills {
		for _, m := range skill.InputModes {
			if !slices.Contains(taken, m) {
				taken = append(taken, m)
			}
		}
	}
	return taken
}

// checkInputModes refuses a message with a part whose media type the agent
// does not take (its card's input modes) with UnsupportedContentType
// (-32005, HTTP 415), naming the part, its type and what the agent takes.
// Wildcards and parameters match as for accepted output modes.
func checkInputModes(agent *workflows.Agent, m *a2a.Message) error {
	if m == nil {
		return nil
	}
	var taken []string
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			continue
		}
		if taken == nil {
			taken = inputModes(agent)
		}
		mt := partMediaType(p)
		if !slices.ContainsFunc(taken, func(t string) bool { return mediaTypesMatch(mt, t) }) {
			return a2a.NewError(a2a.ErrUnsupportedContentType, fmt.Sprintf(
				"message.parts[%d] is %s: agent %s does not take it; it takes %s",
				i, truncate(mt, 100), agent.Name, strings.Join(taken, ", ")))
		}
	}
	return nil
}
