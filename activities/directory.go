package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/models"
	"github.com/a2aflow/a2aflow/remote"
)

// Directory gives agents the agent directory: its methods are the
// list_agents and remember_agent tools (agents.DirectoryTools).
type Directory struct {
	// Store is the agent directory; required.
	Store *models.Store
	// Keyring holds the credentials an auth reference names; nil is none.
	Keyring *remote.Keyring
}

// ListAgentsInput is the argument of the list_agents tool.
type ListAgentsInput struct {
	Format string `json:"format,omitempty" jsonschema:"enum=full,enum=simple,description=simple: name, URL and health only; full (the default): also description, skills and last seen" validate:"omitempty,oneof=full simple"`
}

// AgentView is how the directory tools show an agent.
type AgentView struct {
	Name        string   `json:"name"`
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Skills      []string `json:"skills,omitempty"`
	Healthy     bool     `json:"healthy"`
	LastSeen    string   `json:"lastSeen,omitempty"`
}

// ListAgentsOutput is the result of the list_agents tool.
type ListAgentsOutput struct {
	Agents []AgentView `json:"agents"`
}

// ListAgents lists the agents of the directory with what their cards say.
// Format "simple" keeps only their names, URLs and health.
func (d *Directory) ListAgents(ctx context.Context, in ListAgentsInput) (ListAgentsOutput, error) {
	list, err := d.Store.Agents()
	if err != nil {
		return ListAgentsOutput{}, err
	}
	out := ListAgentsOutput{Agents: []AgentView{}}
	for _, a := range list {
		v := view(a)
		if in.Format == "simple" {
			v = AgentView{Name: v.Name, URL: v.URL, Healthy: v.Healthy}
		}
		out.Agents = append(out.Agents, v)
	}
	return out, nil
}

// RememberAgentInput is the argument of the remember_agent tool.
type RememberAgentInput struct {
	URL  string `json:"url" jsonschema:"description=Base URL of the agent, where its /.well-known/agent-card.json is" validate:"required,http_url,max=2000"`
	Name string `json:"name,omitempty" jsonschema:"description=Name to remember it by (letters, digits, '-' and '_'); default the name in its card" validate:"omitempty,max=63,excludesall=@ "`
}

// RememberAgent fetches and validates the agent card at in.URL and adds the
// agent to the directory, or refreshes its card when it is there already
// with the same URL. A name taken by another URL is an error.
func (d *Directory) RememberAgent(ctx context.Context, in RememberAgentInput) (AgentView, error) {
	if u, err := url.Parse(in.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return AgentView{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%q is not an http(s) URL", in.URL), ErrTypeInvalidInput, nil)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	card, err := remote.ResolveCard(cctx, http.DefaultClient, in.URL)
	if err != nil {
		if errors.Is(err, remote.ErrInvalidCard) || !remote.Retryable(err) {
			return AgentView{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
		}
		return AgentView{}, err
	}
	if c, err := remote.NewClient(cctx, http.DefaultClient, card); err != nil {
		return AgentView{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	} else {
		_ = c.Destroy()
	}
	raw, err := json.Marshal(card)
	if err != nil {
		return AgentView{}, fmt.Errorf("encode card: %w", err)
	}
	name := in.Name
	if name == "" {
		name = card.Name
	}
	now := time.Now()
	err = d.Store.AddAgent(&models.RemoteAgent{Name: name, URL: in.URL, Card: raw, LastSeen: &now, Healthy: true})
	if errors.Is(err, models.ErrAlreadyExists) {
		existing, gerr := d.Store.Agent(name)
		if gerr != nil {
			return AgentView{}, gerr
		}
		if existing.URL != in.URL {
			return AgentView{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the name %q is taken by %s; remember this agent under another name", name, existing.URL), ErrTypeInvalidInput, nil)
		}
		if _, err := d.Store.RecordAgentCheck(name, models.AgentCheck{Card: raw, At: now}); err != nil {
			return AgentView{}, err
		}
	} else if err != nil {
		return AgentView{}, err
	}
	a, err := d.Store.Agent(name)
	if err != nil {
		return AgentView{}, err
	}
	return view(*a), nil
}

// view shows a directory entry with its card's description and skills.
func view(a models.RemoteAgent) AgentView {
	v := AgentView{Name: a.Name, URL: a.URL, Healthy: a.Healthy}
	if a.LastSeen != nil {
		v.LastSeen = a.LastSeen.UTC().Format(time.RFC3339)
	}
	var card a2a.AgentCard
	if len(a.Card) > 0 && json.Unmarshal(a.Card, &card) == nil {
		v.Description = card.Description
		for _, s := range card.Skills {
			v.Skills = append(v.Skills, s.Name)
		}
	}
	return v
}
