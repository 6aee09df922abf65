package demo

import (
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

// ChangesConfig tunes the changes agent. The zero value works.
type ChangesConfig struct {
	// TicketTimeout is how long the change-management system has to answer
	// before the request fails; default 72 hours.
	TicketTimeout time.Duration
}

// TicketSchema is the JSON Schema of the changes agent's waitpoint: what
// the change-management system answers (ADK's long-running tool result:
// ticket_id, approved, comment).
const TicketSchema = `{
  "type": "object",
  "properties": {
    "ticket_id": {"type": "string", "minLength": 1, "maxLength": 64},
    "approved":  {"type": "boolean"},
    "comment":   {"type": "string", "maxLength": 2000}
  },
  "required": ["ticket_id", "approved"],
  "additionalProperties": false
}`

// Ticket is the change-management system's answer.
type Ticket struct {
	TicketID string `json:"ticket_id"`
	Approved bool   `json:"approved"`
	Comment  string `json:"comment,omitempty"`
}

// ChangeRecord is the changes agent's artifact.
type ChangeRecord struct {
	Change    string    `json:"change"`
	Ticket    Ticket    `json:"ticket"`
	Waitpoint string    `json:"waitpointId"`
	By        string    `json:"completedBy"`
	Via       string    `json:"via"`
	At        time.Time `json:"completedAt"`
}

// Changes returns the changes agent: it takes a change to make in
// production and waits, as long as days, for the change-management system
// to answer with a ticket (a waitpoint, Task.WaitFor): the system completes
// it over REST with the waitpoint's token, or the requester forwards the
// ticket in a message. An approved ticket completes the task with a change
// record; a refused one rejects it; no answer in time (72 hours, or the
// shorter ticketTimeout of the first message's metadata) fails it.
func Changes(cfg ChangesConfig) *workflows.Agent {
	if cfg.TicketTimeout <= 0 {
		cfg.TicketTimeout = 72 * time.Hour
	}
	return &workflows.Agent{
		Name:        "changes",
		Description: "Requests a production change and waits for the change-management system's ticket (a waitpoint completed from outside).",
		Skills: []a2a.AgentSkill{{
			ID:          "request-change",
			Name:        "Request a change",
			Description: "Describe the change; the task waits for a ticket {ticket_id, approved, comment} from the change-management system.",
			Tags:        []string{"changes", "waitpoint"},
			Examples:    []string{"Restart the payments database on Sunday 02:00"},
			OutputModes: []string{"application/json", "text/plain"},
		}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error { return requestChange(ctx, t, cfg) },
	}
}

// TicketTimeoutKey in the first message's metadata asks for a shorter
// deadline than the agent's, as a duration ("30m"); at least a second.
const TicketTimeoutKey = "ticketTimeout"

func ticketTimeout(m *a2a.Message, limit time.Duration) time.Duration {
	s, _ := m.Metadata[TicketTimeoutKey].(string)
	d, err := time.ParseDuration(s)
	if err != nil || d >= limit {
		return limit
	}
	return max(d, time.Second)
}

func requestChange(ctx workflow.Context, t *workflows.Task, cfg ChangesConfig) error {
	change := strings.TrimSpace(t.Text())
	for change == "" {
		m, err := t.Ask(ctx, "change", "Which change should be made?")
		if err != nil {
			return err
		}
		change = strings.TrimSpace(workflows.MessageText(m))
	}
	wp, err := t.WaitFor(ctx, workflows.WaitpointRequest{
		Name:        "ticket",
		Description: "The change-management system's ticket for: " + change,
		Schema:      TicketSchema,
		Timeout:     ticketTimeout(t.Message(), cfg.TicketTimeout),
	})
	if err != nil {
		return err
	}
	var ticket Ticket
	if err := wp.Decode(&ticket); err != nil {
		return fmt.Errorf("the ticket of waitpoint %s: %w", wp.ID, err)
	}
	t.Artifact(ctx, workflows.JSONArtifact("change", ChangeRecord{
		Change: change, Ticket: ticket, Waitpoint: wp.ID, By: wp.CompletedBy, Via: wp.Via, At: *wp.CompletedAt,
	}))
	if !ticket.Approved {
		return workflows.Reject(fmt.Sprintf("Ticket %s refused the change: %s.", ticket.TicketID, orNone(ticket.Comment)))
	}
	t.Reply(fmt.Sprintf("Change approved under ticket %s: %s.", ticket.TicketID, change))
	return nil
}
