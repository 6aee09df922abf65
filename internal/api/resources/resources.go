package resources

import (
	"log/slog"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// Config configures the REST resources; api.New fills in the
// defaults of its Config, whose fields of the same names say what each
// does.
type Config struct {
	// TaskQueue is where a schedule's runs start their task workflows.
	TaskQueue string
	// Namespace and TemporalUIURL make the links from approvals to their
	// task's run in the Temporal Web UI; TemporalUIURL "": no link.
	Namespace     string
	TemporalUIURL string
	Logger        *slog.Logger
	// Auth says whether authentication is on: the approvers are then the
	// principals, and /usage answers each caller its own tasks' usage.
	Auth *guard.Authenticator
	// ApproverGroups maps approvers to the groups they decide for; nil:
	// anyone decides for any group (without authentication).
	ApproverGroups map[string][]string
	// Waitpoints mints and checks waitpoint tokens; nil: no waitpoint is
	// completed by token.
	Waitpoints *wire.WaitpointTokens
	// Usage sums the recorded LLM usage; nil: GET /usage answers that this
	// server keeps none.
	Usage UsageReader
	// Recording is what a schedule's runs record, as the tasks the API
	// starts.
	Recording wire.Recording
	// Policies keeps the approval policies' versions (/policies); nil: the
	// routes answer that this server keeps none.
	Policies PolicyStore
	// PolicyAdmins maps principals to the tenants whose policies they
	// administer, "*" every scope (guard.PolicyAdminOf).
	PolicyAdmins map[string][]string
	// Delegations keeps the approvers' delegations (/delegations); nil: the
	// routes answer that this server keeps none.
	Delegations DelegationStore
}

// Resources are a2aflow's REST resources beside A2A: the approvals and
// their inbox, waitpoints, schedules and the LLM usage, on Temporal.
type Resources struct {
	cfg      Config
	temporal client.Client
	agents   *engine.Registry
	// services are the agents' TaskServices, by name: a schedule's message
	// and push config are checked as the agent's (schedules.go).
	services map[string]*taskservice.TaskService
}

// New returns the resources of reg's agents, whose tasks run as
// workflows reached through c.
func New(c client.Client, reg *engine.Registry, services map[string]*taskservice.TaskService, cfg Config) *Resources {
	return &Resources{cfg: cfg, temporal: c, agents: reg, services: services}
}

// AddRoutes adds the resources' routes to r: /approvals and /inbox
// (approvals.go, inbox.go), /usage, /waitpoints, /schedules, /policies and
// the web console, /console (console.go), and its task list, /task-list
// (tasklist.go).
func (s *Resources) AddRoutes(r gin.IRouter) {
	s.approvalRoutes(r)
	s.consoleRoutes(r)
	s.taskListRoutes(r)
	s.usageRoutes(r)
	s.waitpointRoutes(r)
	s.scheduleRoutes(r)
	s.policyRoutes(r)
	s.delegationRoutes(r)
}
