package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// Schedules: recurring tasks on Temporal Schedules. A schedule's action
// starts the task workflow with its first message in the workflow's input
// (wire.TaskInput: Message, Schedule, PushConfig), owned by the schedule's
// owner and findable as any task (the same search attributes as a task
// the API starts): each run is an ordinary A2A task whose metadata names
// the schedule, listed by ListTasks, its approvals in the inbox. Temporal
// gives each run the workflow ID "<schedule ID>-<its time, UTC>".
//
// Who may touch a schedule is the tasks' rule (workflows/access.go): its
// owner only, or everyone without authentication; anyone else is told it
// does not exist (404).

// Overlap policies a schedule takes, to Temporal's.
var overlapPolicies = map[string]enums.ScheduleOverlapPolicy{
	"skip":            enums.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer-one":      enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"cancel-previous": enums.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
}

// ScheduleMessage is the message each run of a schedule starts its task with.
type ScheduleMessage struct {
	Text     string         `json:"text,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ScheduleRequest is the body of POST /schedules.
type ScheduleRequest struct {
	// Name is the client's name for the schedule, unique per owner: a
	// create retried with the same name and settings answers the same
	// schedule, with other settings 409. Optional.
	Name string `json:"name,omitempty"`
	// Agent serves the runs' tasks.
	Agent   string          `json:"agent"`
	Message ScheduleMessage `json:"message"`
	// Cron is a cron expression (5 to 7 fields, or @daily, @weekly...);
	// Every an interval ("2s", "1h", "168h"). One of them.
	Cron  string `json:"cron,omitempty"`
	Every string `json:"every,omitempty"`
	// TimeZone is the IANA time zone the cron expression reads in (UTC).
	TimeZone string `json:"timeZone,omitempty"`
	// Jitter delays each run by a random duration up to it.
	Jitter string `json:"jitter,omitempty"`
	// Start and End bound the runs' times.
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// Overlap is what a run due while the previous one still works does:
	// "skip" (the default), "buffer-one" (starts once the previous ends; at
	// most one waits) or "cancel-previous" (the previous task is canceled).
	Overlap string `json:"overlap,omitempty"`
	// CatchupWindow is how late a run missed while the server was down may
	// still start once it is back (runs missed longer ago are skipped):
	// the backfill of missed runs is the operator's choice. Default 1
	// minute; at least 10 seconds.
	CatchupWindow string `json:"catchupWindow,omitempty"`
	// ContextID is the A2A context of every run's task (default: a new
	// context, shared by the schedule's runs).
	ContextID string `json:"contextId,omitempty"`
	// Paused creates the schedule paused.
	Paused bool   `json:"paused,omitempty"`
	Note   string `json:"note,omitempty"`
	// PushConfig is the webhook every run's task notifies (its results).
	PushConfig *a2a.PushConfig `json:"pushConfig,omitempty"`
}

// ScheduleRun is one run a schedule started: its task.
type ScheduleRun struct {
	TaskID      string    `json:"taskId"`
	ScheduledAt time.Time `json:"scheduledAt"`
	StartedAt   time.Time `json:"startedAt"`
}

// ScheduleView is a schedule as the API answers it.
type ScheduleView struct {
	ID            string          `json:"id"`
	Name          string          `json:"name,omitempty"`
	Agent         string          `json:"agent"`
	ContextID     string          `json:"contextId"`
	Message       ScheduleMessage `json:"message"`
	Cron          string          `json:"cron,omitempty"`
	Every         string          `json:"every,omitempty"`
	TimeZone      string          `json:"timeZone,omitempty"`
	Jitter        string          `json:"jitter,omitempty"`
	Start         *time.Time      `json:"start,omitempty"`
	End           *time.Time      `json:"end,omitempty"`
	Overlap       string          `json:"overlap"`
	CatchupWindow string          `json:"catchupWindow"`
	Paused        bool            `json:"paused"`
	Note          string          `json:"note,omitempty"`
	PushConfig    *a2a.PushConfig `json:"pushConfig,omitempty"`
	// What Temporal tells of the schedule (a list shows RecentRuns and
	// NextRuns only).
	Runs           int           `json:"runs"`
	SkippedOverlap int           `json:"skippedOverlap"`
	MissedCatchup  int           `json:"missedCatchup"`
	RunningTasks   []string      `json:"runningTasks,omitempty"`
	RecentRuns     []ScheduleRun `json:"recentRuns,omitempty"`
	NextRuns       []time.Time   `json:"nextRuns,omitempty"`
	CreatedAt      *time.Time    `json:"createdAt,omitempty"`
}

// ScheduleList is the answer of GET /schedules.
type ScheduleList struct {
	Schedules []ScheduleView `json:"schedules"`
}

// scheduleMemoKey names, in a schedule's memo, the schedule as it was asked
// for (the spec as written: Temporal keeps a cron expression as calendars).
const scheduleMemoKey = "a2aflow.schedule"

// maxScheduleMessageBytes bounds a schedule's message (it sits in the
// schedule and in every run's input).
const maxScheduleMessageBytes = 64 << 10

// scheduleIDSpace is the UUID namespace of schedule IDs.
var scheduleIDSpace = uuid.MustParse("6b7f3c0e-2f0a-4c55-9f57-2d1f8b0c5a11")

var scheduleNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// scheduleIDRe: the IDs the API hands out (sched- and a UUID).
var scheduleIDRe = regexp.MustCompile(`^sched-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func (s *Resources) scheduleRoutes(r gin.IRouter) {
	r.POST("/schedules", s.createSchedule)
	r.GET("/schedules", s.listSchedules)
	r.GET("/schedules/:id", s.getSchedule)
	r.DELETE("/schedules/:id", s.deleteSchedule)
	// POST /schedules/{id}:pause, :unpause, :trigger (the colon style of
	// A2A's HTTP+JSON /tasks/{id}:cancel).
	r.POST("/schedules/:id", s.scheduleAction)
}

// ownsSchedule is the tasks' rule (workflows/access.go ownerOrAnon) for a
// schedule: its owner, or anyone without authentication.
func ownsSchedule(principal, owner string) bool { return principal == "" || principal == owner }

func scheduleNotFound(id string) error { return apierror.NotFound("schedule %q does not exist", id) }

func (s *Resources) createSchedule(c *gin.Context) {
	var req ScheduleRequest
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		apierror.AbortResource(c, apierror.BadRequest("body must be a schedule (agent, message, cron or every...): "+err.Error()))
		return
	}
	ctx := c.Request.Context()
	owner := guard.Principal(ctx)
	opts, view, err := s.scheduleOptions(ctx, owner, &req)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	if _, err := s.temporal.ScheduleClient().Create(ctx, opts); err != nil {
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			// The same name again: a retried create, if the schedule holds
			// the same request.
			existing, rerr := s.schedule(ctx, opts.ID)
			if rerr == nil && sameSchedule(existing, view) {
				c.JSON(http.StatusOK, existing)
				return
			}
			apierror.AbortResource(c, apierror.Conflict("a schedule named %q exists already with other settings: delete it first, or choose another name", req.Name))
			return
		}
		apierror.AbortResource(c, apierror.FromSchedules(err))
		return
	}
	out, err := s.schedule(ctx, opts.ID)
	if err != nil {
		c.JSON(http.StatusCreated, view)
		return
	}
	c.JSON(http.StatusCreated, out)
}

// sameSchedule reports whether a and b are the same request.
func sameSchedule(a, b ScheduleView) bool {
	ja, _ := json.Marshal(scheduleRequestOf(a))
	jb, _ := json.Marshal(scheduleRequestOf(b))
	return string(ja) == string(jb)
}

func scheduleRequestOf(v ScheduleView) ScheduleView {
	return ScheduleView{ID: v.ID, Name: v.Name, Agent: v.Agent, ContextID: v.ContextID, Message: v.Message, Cron: v.Cron,
		Every: v.Every, TimeZone: v.TimeZone, Jitter: v.Jitter, Start: v.Start, End: v.End, Overlap: v.Overlap,
		CatchupWindow: v.CatchupWindow, Note: v.Note}
}

// scheduleOptions checks a request and builds the schedule's options and
// the view its memo keeps. Its checks answer in the order of the
// request's fields: agent, name, context, then when it runs
// (scheduleTiming), then what each run starts (scheduleRun).
func (s *Resources) scheduleOptions(ctx context.Context, owner string, req *ScheduleRequest) (client.ScheduleOptions, ScheduleView, error) {
	agent, ok := s.agents.Get(req.Agent)
	if req.Agent == "" || !ok {
		return client.ScheduleOptions{}, ScheduleView{}, apierror.BadRequest(fmt.Sprintf("agent %q is not served here (GET /agents lists them)", req.Agent))
	}
	view, err := scheduleViewOf(owner, agent.Name, req)
	if err != nil {
		return client.ScheduleOptions{}, ScheduleView{}, err
	}
	opts, err := scheduleTiming(view)
	if err != nil {
		return client.ScheduleOptions{}, ScheduleView{}, err
	}
	action, push, err := s.scheduleRun(ctx, agent, owner, view, req.PushConfig)
	if err != nil {
		return client.ScheduleOptions{}, ScheduleView{}, err
	}
	if push != nil {
		view.PushConfig = taskservice.RedactPushConfig(push)
	}
	scheduleSA := []temporal.SearchAttributeUpdate{wire.AgentKey.ValueSet(agent.Name)}
	if owner != "" {
		scheduleSA = append(scheduleSA, wire.OwnerKey.ValueSet(owner))
	}
	memo, _ := json.Marshal(scheduleRequestOf(view))
	opts.ID, opts.Action, opts.Paused, opts.Note = view.ID, action, req.Paused, req.Note
	opts.Memo = map[string]any{scheduleMemoKey: string(memo), "owner": owner}
	opts.TypedSearchAttributes = temporal.NewSearchAttributes(scheduleSA...)
	return opts, view, nil
}

// scheduleViewOf is the schedule req asks owner for, of agent, with its ID
// (a name's, per owner), its context and the defaults of what it leaves
// out; an invalid name or context is refused.
func scheduleViewOf(owner, agent string, req *ScheduleRequest) (ScheduleView, error) {
	id := "sched-" + uuid.NewString()
	if req.Name != "" {
		if !scheduleNameRe.MatchString(req.Name) {
			return ScheduleView{}, apierror.BadRequest("name must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit")
		}
		// Per owner: another tenant's schedule of the same name is another
		// schedule, and its existence is not revealed.
		id = "sched-" + uuid.NewSHA1(scheduleIDSpace, []byte(owner+"\x00"+req.Name)).String()
	}
	view := ScheduleView{ID: id, Name: req.Name, Agent: agent, ContextID: req.ContextID, Message: req.Message,
		Cron: strings.TrimSpace(req.Cron), Every: req.Every, TimeZone: req.TimeZone, Jitter: req.Jitter, Start: req.Start, End: req.End,
		Overlap: req.Overlap, CatchupWindow: req.CatchupWindow, Note: req.Note}
	if view.ContextID == "" {
		view.ContextID = "ctx-" + id
	} else if err := taskservice.CheckTaskID(view.ContextID); err != nil || len(view.ContextID) > 256 {
		return ScheduleView{}, apierror.BadRequest("contextId must be printable ASCII, at most 256 bytes")
	}
	if view.Overlap == "" {
		view.Overlap = "skip"
	}
	if view.CatchupWindow == "" {
		view.CatchupWindow = "1m"
	}
	return view, nil
}

// scheduleTiming checks when view runs and returns the options that say
// so: its spec (cron or interval, time zone, jitter, bounds), overlap
// policy and catch-up window.
func scheduleTiming(view ScheduleView) (client.ScheduleOptions, error) {
	var none client.ScheduleOptions
	overlap, ok := overlapPolicies[view.Overlap]
	if !ok {
		return none, apierror.BadRequest(fmt.Sprintf("overlap %q: want skip, buffer-one or cancel-previous", view.Overlap))
	}
	catchup, err := time.ParseDuration(view.CatchupWindow)
	if err != nil || catchup < 10*time.Second {
		return none, apierror.BadRequest(fmt.Sprintf("catchupWindow %q: want a duration of 10s or more (e.g. 1m, 24h)", view.CatchupWindow))
	}
	spec := client.ScheduleSpec{TimeZoneName: view.TimeZone}
	switch {
	case (view.Cron == "") == (view.Every == ""):
		return none, apierror.BadRequest("give one of cron (e.g. \"0 9 * * MON\") and every (e.g. \"1h\")")
	case view.Cron != "":
		if strings.Contains(view.Cron, "TZ=") || strings.HasPrefix(view.Cron, "@every") {
			return none, apierror.BadRequest("cron: give the time zone as timeZone and an interval as every")
		}
		spec.CronExpressions = []string{view.Cron}
	default:
		every, err := time.ParseDuration(view.Every)
		if err != nil || every < time.Second {
			return none, apierror.BadRequest(fmt.Sprintf("every %q: want a duration of 1s or more (e.g. 2s, 1h, 168h)", view.Every))
		}
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: every}}
	}
	if view.TimeZone != "" {
		if _, err := time.LoadLocation(view.TimeZone); err != nil || view.TimeZone == "Local" {
			return none, apierror.BadRequest(fmt.Sprintf("timeZone %q is no IANA time zone (e.g. Europe/Paris)", view.TimeZone))
		}
	}
	if view.Jitter != "" {
		if spec.Jitter, err = time.ParseDuration(view.Jitter); err != nil || spec.Jitter < 0 {
			return none, apierror.BadRequest(fmt.Sprintf("jitter %q: want a duration (e.g. 30s)", view.Jitter))
		}
	}
	if view.Start != nil {
		spec.StartAt = *view.Start
	}
	if view.End != nil {
		spec.EndAt = *view.End
		if view.Start != nil && !view.End.After(*view.Start) {
			return none, apierror.BadRequest("end must be after start")
		}
	}
	if len(view.Note) > 1000 {
		return none, apierror.BadRequest("note is longer than 1000 bytes")
	}
	return client.ScheduleOptions{Spec: spec, Overlap: overlap, CatchupWindow: catchup}, nil
}

// scheduleRun checks what each run of view starts, a task of agent owned
// by owner with view's message and pushConfig, and returns the schedule's
// action and the push config sealed for the schedule.
func (s *Resources) scheduleRun(ctx context.Context, agent *workflows.Agent, owner string, view ScheduleView, pushConfig *a2a.PushConfig) (*client.ScheduleWorkflowAction, *a2a.PushConfig, error) {
	msg, err := scheduleMessage(view.ID, view.Message)
	if err != nil {
		return nil, nil, err
	}
	if err := taskservice.CheckInputModes(agent, msg); err != nil {
		return nil, nil, err
	}
	push, err := s.services[agent.Name].PreparePushConfig(ctx, a2a.TaskID(wire.ScheduleSealBinding(view.ID)), pushConfig)
	if err != nil {
		return nil, nil, err
	}
	// Each run starts with its first message in its input, which makes
	// it working in its first workflow task (wire.MergedWrites): the
	// start says so.
	sa := taskservice.StartSearchAttributes(agent, view.ContextID, owner, a2a.TaskStateWorking, msg)
	memo := taskservice.StartMemo(agent, msg)
	memo["schedule"] = view.ID
	action := &client.ScheduleWorkflowAction{
		ID:        view.ID,
		Workflow:  wire.TaskWorkflowName,
		TaskQueue: s.cfg.TaskQueue,
		Args: []any{wire.TaskInput{Agent: agent.Name, ContextID: view.ContextID, Owner: owner, Message: msg, Recording: s.cfg.Recording,
			Schedule: view.ID, PushConfig: push}},
		TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
		Memo:                  memo,
	}
	action.StaticSummary, action.StaticDetails = taskservice.StartUserMetadata(agent, owner, view.ContextID, msg,
		taskservice.Origin{Schedule: view.ID, ScheduleName: view.Name})
	if agent.Versioning == workflows.AutoUpgrade {
		action.VersioningOverride = &client.AutoUpgradeVersioningOverride{}
	}
	return action, push, nil
}

// scheduleMessage is the user message of a schedule's runs. Its ID is
// replaced by each run's task ID in the workflow (wire.TaskInput.Schedule).
func scheduleMessage(id string, m ScheduleMessage) (*a2a.Message, error) {
	var parts a2a.ContentParts
	if strings.TrimSpace(m.Text) != "" {
		parts = append(parts, a2a.NewTextPart(m.Text))
	}
	if len(m.Data) > 0 {
		p := a2a.NewDataPart(m.Data)
		p.MediaType = "application/json"
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil, apierror.BadRequest("message needs a text or data")
	}
	msg := &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: parts, Metadata: m.Metadata}
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, apierror.BadRequest("message: " + err.Error())
	}
	if len(raw) > maxScheduleMessageBytes {
		return nil, apierror.BadRequest(fmt.Sprintf("message has %d bytes, over a schedule's limit of %d", len(raw), maxScheduleMessageBytes))
	}
	return msg, nil
}

// schedule describes schedule id as the caller may see it: a schedule of
// another owner, or none, is not found.
func (s *Resources) schedule(ctx context.Context, id string) (ScheduleView, error) {
	if !scheduleIDRe.MatchString(id) {
		return ScheduleView{}, scheduleNotFound(id)
	}
	d, err := s.temporal.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		if apierror.IsNotFound(err) {
			return ScheduleView{}, scheduleNotFound(id)
		}
		return ScheduleView{}, apierror.FromSchedules(err)
	}
	in, ok := scheduleInput(d)
	if !ok || !ownsSchedule(guard.Principal(ctx), in.Owner) {
		return ScheduleView{}, scheduleNotFound(id)
	}
	view := viewOfMemo(d.Memo)
	view.ID = id
	if d.Schedule.State != nil {
		view.Paused, view.Note = d.Schedule.State.Paused, d.Schedule.State.Note
	}
	if in.PushConfig != nil {
		view.PushConfig = taskservice.RedactPushConfig(in.PushConfig)
	}
	view.Runs = d.Info.NumActions
	view.SkippedOverlap = d.Info.NumActionsSkippedOverlap
	view.MissedCatchup = d.Info.NumActionsMissedCatchupWindow
	for _, w := range d.Info.RunningWorkflows {
		// The schedule's list of running workflows may lag a run's end:
		// the run's workflow says whether it still runs.
		if e, err := s.temporal.DescribeWorkflowExecution(ctx, w.WorkflowID, ""); err == nil &&
			e.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
			continue
		}
		view.RunningTasks = append(view.RunningTasks, w.WorkflowID)
	}
	view.RecentRuns = recentRuns(d.Info.RecentActions)
	view.NextRuns = d.Info.NextActionTimes
	if !d.Info.CreatedAt.IsZero() {
		view.CreatedAt = &d.Info.CreatedAt
	}
	return view, nil
}

func recentRuns(actions []client.ScheduleActionResult) []ScheduleRun {
	var out []ScheduleRun
	for _, a := range actions {
		if a.StartWorkflowResult == nil {
			continue
		}
		out = append(out, ScheduleRun{TaskID: a.StartWorkflowResult.WorkflowID, ScheduledAt: a.ScheduleTime, StartedAt: a.ActualTime})
	}
	return out
}

// scheduleInput reads the task input of a schedule's action: who owns it.
// A schedule that is not a2aflow's (another action) reads as none.
func scheduleInput(d *client.ScheduleDescription) (wire.TaskInput, bool) {
	action, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || len(action.Args) != 1 {
		return wire.TaskInput{}, false
	}
	p, ok := action.Args[0].(*commonpb.Payload)
	if !ok {
		return wire.TaskInput{}, false
	}
	var in wire.TaskInput
	if err := converter.GetDefaultDataConverter().FromPayload(p, &in); err != nil || in.Schedule == "" {
		return wire.TaskInput{}, false
	}
	return in, true
}

// viewOfMemo reads the schedule as it was asked for from its memo.
func viewOfMemo(m *commonpb.Memo) ScheduleView {
	var view ScheduleView
	var raw string
	if p := m.GetFields()[scheduleMemoKey]; p != nil && converter.GetDefaultDataConverter().FromPayload(p, &raw) == nil {
		_ = json.Unmarshal([]byte(raw), &view)
	}
	return view
}

func memoOwner(m *commonpb.Memo) (string, bool) {
	p := m.GetFields()["owner"]
	if p == nil {
		return "", false
	}
	var owner string
	if converter.GetDefaultDataConverter().FromPayload(p, &owner) != nil {
		return "", false
	}
	return owner, true
}

func (s *Resources) getSchedule(c *gin.Context) {
	view, err := s.schedule(c.Request.Context(), c.Param("id"))
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, view)
}

// listSchedules serves GET /schedules: the caller's schedules (?agent= one
// agent's), by Temporal's visibility of schedules, whose entries carry the
// memo: what was asked for, paused or not, the recent and next runs.
func (s *Resources) listSchedules(c *gin.Context) {
	ctx := c.Request.Context()
	who := guard.Principal(ctx)
	agent := c.Query("agent")
	var conds []string
	if who != "" {
		conds = append(conds, wire.OwnerKey.GetName()+" = "+wire.QuoteQueryValue(who))
	}
	if agent != "" {
		conds = append(conds, wire.AgentKey.GetName()+" = "+wire.QuoteQueryValue(agent))
	}
	it, err := s.temporal.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000, Query: strings.Join(conds, " AND ")})
	if err != nil {
		apierror.AbortResource(c, apierror.FromSchedules(err))
		return
	}
	out := ScheduleList{Schedules: []ScheduleView{}}
	for it.HasNext() && len(out.Schedules) < 1000 {
		e, err := it.Next()
		if err != nil {
			apierror.AbortResource(c, apierror.FromSchedules(err))
			return
		}
		// The memo's owner again: the query is the index, this the rule.
		owner, ok := memoOwner(e.Memo)
		if !ok || !ownsSchedule(who, owner) || !scheduleIDRe.MatchString(e.ID) {
			continue
		}
		view := viewOfMemo(e.Memo)
		if agent != "" && view.Agent != agent {
			continue
		}
		view.ID, view.Paused = e.ID, e.Paused
		if e.Note != "" {
			view.Note = e.Note
		}
		view.RecentRuns = recentRuns(e.RecentActions)
		view.NextRuns = e.NextActionTimes
		out.Schedules = append(out.Schedules, view)
	}
	slices.SortFunc(out.Schedules, func(a, b ScheduleView) int { return strings.Compare(a.ID, b.ID) })
	c.JSON(http.StatusOK, out)
}

func (s *Resources) deleteSchedule(c *gin.Context) {
	ctx := c.Request.Context()
	id := c.Param("id")
	if _, err := s.schedule(ctx, id); err != nil {
		apierror.AbortResource(c, err)
		return
	}
	if err := s.temporal.ScheduleClient().GetHandle(ctx, id).Delete(ctx); err != nil {
		apierror.AbortResource(c, apierror.FromSchedules(err))
		return
	}
	c.JSON(http.StatusOK, gin.H{"id": id, "deleted": true})
}

// scheduleAction serves POST /schedules/{id}:pause, :unpause and :trigger.
func (s *Resources) scheduleAction(c *gin.Context) {
	ctx := c.Request.Context()
	id, verb, ok := strings.Cut(c.Param("id"), ":")
	if !ok {
		apierror.AbortResource(c, apierror.NotFound("POST /schedules/{id}:pause, :unpause or :trigger"))
		return
	}
	var body struct {
		Note string `json:"note"`
	}
	if c.Request.ContentLength != 0 {
		if err := c.ShouldBindJSON(&body); err != nil {
			apierror.AbortResource(c, apierror.BadRequest(`body must be empty or {"note": string}`))
			return
		}
	}
	if len(body.Note) > 1000 {
		apierror.AbortResource(c, apierror.BadRequest("note is longer than 1000 bytes"))
		return
	}
	if verb != "pause" && verb != "unpause" && verb != "trigger" {
		apierror.AbortResource(c, apierror.NotFound("no action %q on schedules: pause, unpause or trigger", verb))
		return
	}
	if _, err := s.schedule(ctx, id); err != nil {
		apierror.AbortResource(c, err)
		return
	}
	note := func(def string) string {
		if strings.TrimSpace(body.Note) == "" {
			return def
		}
		return body.Note
	}
	h := s.temporal.ScheduleClient().GetHandle(ctx, id)
	var err error
	switch verb {
	case "pause":
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: note("paused through the a2aflow API")})
	case "unpause":
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: note("unpaused through the a2aflow API")})
	case "trigger":
		// A run now, under the schedule's overlap policy.
		err = h.Trigger(ctx, client.ScheduleTriggerOptions{})
	}
	if err != nil {
		apierror.AbortResource(c, apierror.FromSchedules(err))
		return
	}
	view, err := s.schedule(ctx, id)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, view)
}
