package taskservice

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

// CheckInputModes refuses a message with a part whose media type the agent
// does not take (its card's input modes) with UnsupportedContentType
// (-32005, HTTP 415), naming the part, its type and what the agent takes.
// Wildcards and parameters match as for accepted output modes.
func CheckInputModes(agent *workflows.Agent, m *a2a.Message) error {
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

// checkAcceptedOutputModes refuses a request whose acceptedOutputModes
// share no media type with what agent produces (its card's default output
// modes and its skills' output modes) with UnsupportedContentType (-32005,
// HTTP 415), naming what it produces. Wildcards match either way ("*/*",
// "image/*"); parameters (";charset=utf-8") and case are ignored, and blank
// entries skipped. Only the refusal is done: the artifacts of an agent that
// produces several modes are not filtered by the accepted ones.
func checkAcceptedOutputModes(agent *workflows.Agent, accepted []string) error {
	var asked []string
	for _, m := range accepted {
		if strings.TrimSpace(m) != "" {
			asked = append(asked, m)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	card := AgentCard(agent, "")
	produced := slices.Clone(card.DefaultOutputModes)
	for _, skill := range card.Skills {
		for _, m := range skill.OutputModes {
			if !slices.Contains(produced, m) {
				produced = append(produced, m)
			}
		}
	}
	for _, a := range asked {
		for _, p := range produced {
			if mediaTypesMatch(a, p) {
				return nil
			}
		}
	}
	return a2a.NewError(a2a.ErrUnsupportedContentType, fmt.Sprintf(
		"configuration.acceptedOutputModes %s: agent %s produces none of them; it produces %s",
		truncate(strings.Join(asked, ", "), 200), agent.Name, strings.Join(produced, ", ")))
}

// mediaTypesMatch reports whether media types a and b (either may be a
// wildcard such as "*/*" or "text/*") can name the same content.
func mediaTypesMatch(a, b string) bool {
	base := func(s string) (string, string) {
		s, _, _ = strings.Cut(s, ";")
		typ, sub, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "/")
		return typ, sub
	}
	at, as := base(a)
	bt, bs := base(b)
	if at == "" || bt == "" {
		return false
	}
	if at == "*" || bt == "*" {
		return true
	}
	return at == bt && (as == bs || as == "*" || bs == "*")
}
