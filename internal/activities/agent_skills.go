package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/models"
)

// AgentSkillsInput names the directory entry whose skills an agent wants
// as tools.
type AgentSkillsInput struct {
	Agent string `json:"agent"`
}

// AgentSkillsOutput is a remote agent's card as the skill tools need it.
type AgentSkillsOutput struct {
	Agent       string           `json:"agent"`
	Description string           `json:"description,omitempty"`
	Skills      []a2a.AgentSkill `json:"skills"`
}

// ErrTypeAgentUnknown marks an AgentSkills call for an agent the task's
// owner has no directory entry of.
const ErrTypeAgentUnknown = "AgentUnknown"

// AgentSkills returns the skills of the remote agent in.Agent from its card
// as the directory last fetched it, seen as the task's owner sees the
// directory (wire.ActivityAgentSkills). An entry whose card was not
// fetched yet (a peer starting at the same time) is a retryable error; an
// unknown name is not.
func (d *Directory) AgentSkills(ctx context.Context, in AgentSkillsInput) (AgentSkillsOutput, error) {
	owner, err := ownerOf(ctx, d.Owners)
	if err != nil {
		return AgentSkillsOutput{}, err
	}
	a, err := d.Store.AgentVisibleTo(owner, in.Agent)
	if errors.Is(err, models.ErrNotFound) {
		return AgentSkillsOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no agent %q in the directory (add it with --peer or `agents add`)", in.Agent), ErrTypeAgentUnknown, nil)
	}
	if err != nil {
		return AgentSkillsOutput{}, err
	}
	var card a2a.AgentCard
	if len(a.Card) == 0 || json.Unmarshal(a.Card, &card) != nil {
		return AgentSkillsOutput{}, fmt.Errorf("agent %q: its card was not fetched yet", in.Agent)
	}
	return AgentSkillsOutput{Agent: a.Name, Description: card.Description, Skills: card.Skills}, nil
}
