package workflows

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// Handler is an agent's skill code. It runs inside the task workflow, so it
// must be deterministic Temporal workflow code. Returning nil completes the
// task, [Reject] rejects it, any other error fails it.
type Handler func(ctx workflow.Context, t *Task) error

// Agent is one agent served by a2aflow: the identity published in its A2A
// agent card plus the handler that runs each of its tasks.
type Agent struct {
	// Name identifies the agent in URLs (/agents/{name}) and in the A2AAgent
	// search attribute. Lower-case letters, digits and '-'.
	Name string
	// Description says what the agent does, for people and for routing LLMs.
	Description string
	// Version is the agent's own version; default "1.0.0".
	Version string
	// Provider is the organisation behind the agent; optional.
	Provider *a2a.AgentProvider
	// Skills are advertised in the card. The first one is the default skill
	// recorded in the A2ASkill search attribute.
	Skills []a2a.AgentSkill
	// InputModes are the accepted media types; default text/plain and application/json.
	InputModes []string
	// OutputModes are the produced media types; default text/plain and application/json.
	// A request whose acceptedOutputModes share none of them (nor of the
	// skills' output modes) is refused with UnsupportedContentType (-32005);
	// artifacts are not filtered by a request's acceptedOutputModes.
	OutputModes []string
	// WhileWorking says what happens to a message that arrives while the
	// task is working rather than waiting for input. Default EnqueueMessage.
	WhileWorking BusyPolicy
	// IdleTimeout cancels a task left waiting for the user's input (Ask,
	// RequireAuth) for longer, with a status message saying so. Default
	// none: a task waits as long as it takes. Approvals have deadlines of
	// their own (ApprovalRequest.Timeout) and are not cut short by it.
	IdleTimeout time.Duration
	// Handle runs one task.
	Handle Handler
	// Activities are the agent's own activities, which its handler calls with
	// workflow.ExecuteActivity by name. The worker registers them with no
	// other step (RegisterActivities): a function under its Go name (GetQuote
	// for func GetQuote), a pointer to a struct as each of its exported
	// methods under the method's name, and Activity("Name", fn) under a name
	// that survives renaming the Go code — the name is in the history of
	// every task that called it, so renaming is a breaking change for parked
	// tasks.
	Activities []any
	// Versioning says which build runs the agent's tasks when the workers
	// run as a Temporal Worker Deployment (--deployment): Pinned (default),
	// each task on the build that started it to its end, or AutoUpgrade.
	Versioning Versioning
	// MessageOnly declares an agent that keeps no state: it answers each
	// message at once and a conversation with it has no task to come back
	// to. SendMessage (and SendStreamingMessage) of a new message answers
	// with the agent's reply, an A2A Message (A2A §3.1.1 lets an agent
	// answer so), instead of the task, once its task completed with one;
	// the task still runs as a workflow, which the answer does not name
	// (its contextId is the conversation's). A task that did not complete
	// at once (it asks, fails, or the caller asked to return immediately)
	// is answered as the task, as for any agent.
	MessageOnly bool
	// MessageOnlyFor, when set, decides per new message (one naming no
	// task) what MessageOnly declares for every one: true answers it as a
	// message-only agent's, with the reply once its task completed. For an
	// agent that answers some messages at once and keeps tasks for others
	// (examples/tck-agent: the TCK's "tck-message-response" scenario). The
	// API calls it before the task starts, outside workflow code; it must
	// be quick and not block. MessageOnly true answers every new message so
	// whatever it says.
	MessageOnlyFor func(*a2a.Message) bool
	// Extensions are the A2A extensions the agent supports, published in
	// its card (capabilities.extensions). A caller activates one by naming
	// its URI in the A2A-Extensions header; the API answers with the ones it
	// activated, refuses a request that lacks a Required one with
	// ExtensionSupportRequired, and the skill reads the activated ones with
	// [Task.Extensions]. Optional.
	Extensions []a2a.AgentExtension
}

// Extension returns the agent's declared extension of uri.
func (a *Agent) Extension(uri string) (a2a.AgentExtension, bool) {
	for _, e := range a.Extensions {
		if e.URI == uri {
			return e, true
		}
	}
	return a2a.AgentExtension{}, false
}

// Versioning says which build of a Worker Deployment runs an agent's tasks.
// Without --deployment every worker runs every task and it has no effect.
type Versioning int

const (
	// Pinned keeps each task on the build that started it until the task
	// ends, whatever builds are deployed after: a change to the agent's code
	// never meets a task parked on the old code. The old build's workers
	// keep running until its tasks have ended (its version is "drained").
	Pinned Versioning = iota
	// AutoUpgrade moves each task to the deployment's current build at its
	// next step. The agent's changes must then replay its parked tasks
	// (guard them with workflow.GetVersion); in exchange, old builds drain
	// at once.
	AutoUpgrade
)

// BusyPolicy is an agent's answer to a message sent while its task works.
type BusyPolicy int

const (
	// EnqueueMessage records the message and hands it to the skill's next
	// Ask (or RequireAuth), which returns it at once. Nothing is lost.
	EnqueueMessage BusyPolicy = iota
	// RejectMessage refuses the message with UnsupportedOperation (-32004),
	// leaving history untouched; the client retries once the task waits.
	RejectMessage
	// InterruptWork records and queues the message as EnqueueMessage does,
	// and also cancels the skill's interruptible work (see
	// [Task.Interruptible]), so the skill can stop and take the message
	// with Ask at once. Work the skill did not mark interruptible runs on.
	InterruptWork
)

// DefaultSkill returns the ID of the agent's first skill, or "".
func (a *Agent) DefaultSkill() string {
	if len(a.Skills) == 0 {
		return ""
	}
	return a.Skills[0].ID
}
