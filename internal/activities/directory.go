package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/remote"
)

// defaultOutbound is the outbound client of activities given none: public
// addresses only.
var defaultOutbound = sync.OnceValue(func() *outbound.Client { return outbound.New(outbound.Options{}) })

// Directory gives agents the agent directory: its methods are the
// list_agents and remember_agent tools (agents.DirectoryTools). A task sees
// the entries the operator shared and those its owner's tasks remembered;
// what it remembers is its owner's. Their errors are worded for a model:
// why a card could not be fetched (refused by the outbound policy,
// unreachable, not an A2A agent), never what the server answered.
type Directory struct {
	// Store is the agent directory; required.
	Store *models.Store
	// Keyring holds the credentials an auth reference names; nil is none.
	Keyring *remote.Keyring
	// Outbound fetches the cards remember_agent is asked for: the URL a
	// task gives obeys its address policy. Nil allows public addresses only.
	Outbound *outbound.Client
	// Owners says whose task calls; nil takes every task for the anonymous
	// owner "" (right only without authentication).
	Owners TaskOwners
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
	owner, err := ownerOf(ctx, d.Owners)
	if err != nil {
		return ListAgentsOutput{}, err
	}
	list, err := d.Store.AgentsVisibleTo(owner)
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

// RememberAgent fetches and validates the agent card at in.URL, through
// the outbound policy, and adds the agent to the directory as the task's
// owner's, or refreshes its card when the owner has it there already with
// the same URL. A name the owner gave another URL, or one of the operator's
// shared agents, is an error.
func (d *Directory) RememberAgent(ctx context.Context, in RememberAgentInput) (AgentView, error) {
	if _, err := outbound.ParseURL(in.URL); err != nil {
		return AgentView{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%q is not an http(s) URL without user info", outbound.Redact(in.URL)), ErrTypeInvalidInput, nil)
	}
	owner, err := ownerOf(ctx, d.Owners)
	if err != nil {
		return AgentView{}, err
	}
	card, err := d.fetchCard(ctx, in.URL)
	if err != nil {
		return AgentView{}, err
	}
	raw, err := json.Marshal(card)
	if err != nil {
		return AgentView{}, fmt.Errorf("encode card: %w", err)
	}
	name := in.Name
	if name == "" {
		name = card.Name
	}
	if _, err := d.Store.Agent(name); err == nil {
		return AgentView{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the name %q is an agent the operator configured; remember this agent under another name", name), ErrTypeInvalidInput, nil)
	} else if !errors.Is(err, models.ErrNotFound) {
		return AgentView{}, err
	}
	scope := models.OwnedBy(owner)
	now := time.Now()
	err = d.Store.AddAgent(&models.RemoteAgent{Owner: owner, Name: name, URL: in.URL, Card: raw, LastSeen: &now, Healthy: true})
	if errors.Is(err, models.ErrAlreadyExists) {
		existing, gerr := d.Store.AgentIn(scope, name)
		if gerr != nil {
			return AgentView{}, gerr
		}
		if existing.URL != in.URL {
			// The owner's own entry: its URL is theirs to see.
			return AgentView{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the name %q is taken by %s; remember this agent under another name", name, outbound.Redact(existing.URL)), ErrTypeInvalidInput, nil)
		}
		if _, err := d.Store.RecordAgentCheckIn(scope, name, models.AgentCheck{Card: raw, At: now}); err != nil {
			return AgentView{}, err
		}
	} else if err != nil {
		return AgentView{}, err
	}
	a, err := d.Store.AgentIn(scope, name)
	if err != nil {
		return AgentView{}, err
	}
	return view(*a), nil
}

// fetchCard fetches and checks the card at rawURL as a task asks for it:
// nobody vouched for the host, so the outbound policy applies to every
// address dialed. Errors say why in a model's words (remote.Reason), the
// details go to the worker's log; only an unreachable agent is retried.
func (d *Directory) fetchCard(ctx context.Context, rawURL string) (*a2a.AgentCard, error) {
	out := d.Outbound
	if out == nil {
		out = defaultOutbound()
	}
	clients, err := remote.Endpoint{URL: rawURL}.Clients(out)
	if err == nil {
		var card *a2a.AgentCard
		if card, err = remote.ResolveCard(ctx, clients.Card, rawURL); err == nil {
			var c *a2aclient.Client
			if c, err = remote.NewClient(ctx, clients.Calls, card); err == nil {
				_ = c.Destroy()
				return card, nil
			}
			err = fmt.Errorf("%w: %w", remote.ErrInvalidCard, err) // no interface a2aflow speaks
		}
	}
	activity.GetLogger(ctx).Info("remember_agent: no agent card", "url", outbound.Redact(rawURL), "error", err)
	reason := reasonOf(err)
	msg := fmt.Sprintf("agent card at %s: %s", outbound.Redact(rawURL), reason)
	if reason == remote.ReasonUnreachable {
		return nil, errors.New(msg)
	}
	return nil, temporal.NewNonRetryableApplicationError(msg, ErrTypeInvalidInput, nil)
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
