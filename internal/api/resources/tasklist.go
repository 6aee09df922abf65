package resources

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// The task list of the console (docs/guides/console.md): GET /task-list,
// the tasks of every agent the caller may use, one row each with what the
// console's list shows, from one visibility query. A row's summary, state,
// owner, schedule, cost and age are read from the run's search attributes
// and memo, and what a waiting task waits for from the memo it wrote when it
// parked (wire.WaitingMemoKey); only a waiting task recorded before that
// memo is read (its status, by the GetTask query) to say it.

const (
	// TaskListPath is the route of the task list.
	TaskListPath = "/task-list"
	// maxTaskListPage is the largest page of the task list.
	maxTaskListPage = 100
	// defaultTaskListPage is its page without pageSize.
	defaultTaskListPage = 50
	// maxTextWords bounds the words of the text filter, each one condition.
	maxTextWords = 8
	// waitingReads bounds the concurrent reads of waiting tasks' status.
	waitingReads = 8
)

// TaskRow is one task as the console's list shows it.
type TaskRow struct {
	ID        string `json:"id"`
	Agent     string `json:"agent"`
	ContextID string `json:"contextId"`
	// Owner is the principal that created the task ("" without
	// authentication).
	Owner string `json:"owner,omitempty"`
	// Schedule is the schedule the task is a run of; ForkOf the task it
	// forks or retries.
	Schedule string `json:"schedule,omitempty"`
	ForkOf   string `json:"forkOf,omitempty"`
	// Summary is the agent and the first line of the first message.
	Summary string        `json:"summary"`
	State   a2a.TaskState `json:"state"`
	// WaitingFor says what a task in input-required or auth-required
	// waits for: "approval: TITLE", "waitpoint: NAME", "credential:
	// SERVICE" or "input: QUESTION".
	WaitingFor string `json:"waitingFor,omitempty"`
	// PendingApprovals are the approver groups the task waits for (its
	// A2APendingApprovals search attribute); Waiting has the approvals.
	PendingApprovals []string `json:"pendingApprovals,omitempty"`
	// Waiting is what the task waits for in detail (its approvals' groups,
	// quorum and deadline, waitpoints, credential request, remote tasks), as
	// its memo holds it; absent for a task recorded before that memo.
	Waiting *wire.Waiting `json:"waiting,omitempty"`
	// CostUSD is the task's LLM cost so far, LLMCalls its model calls.
	CostUSD  float64 `json:"costUsd,omitempty"`
	LLMCalls int64   `json:"llmCalls,omitempty"`
	// Started is when the task's current run started: its creation,
	// unless Continued says it continued as new since.
	Started   time.Time  `json:"started"`
	Closed    *time.Time `json:"closed,omitempty"`
	Continued bool       `json:"continued,omitempty"`
	// TemporalURL links to the task's workflow in the Temporal Web UI.
	TemporalURL string `json:"temporalUrl,omitempty"`
}

// TaskListPage is a page of the task list.
type TaskListPage struct {
	Tasks []TaskRow `json:"tasks"`
	// NextPageToken reads the next page with the same filters; "" at the
	// end.
	NextPageToken string `json:"nextPageToken,omitempty"`
}

// taskListFilter is the task list's query parameters, checked.
type taskListFilter struct {
	agents                             []string
	state                              a2a.TaskState
	contextID, owner, schedule, forkOf string
	words                              []string
	pageSize                           int
	pageToken                          string
}

func (s *Resources) taskListRoutes(r gin.IRouter) {
	r.GET(TaskListPath, s.taskList)
}

// taskList serves GET /task-list?agent=&state=&context=&owner=&schedule=&forkOf=&q=&pageSize=&pageToken=.
func (s *Resources) taskList(c *gin.Context) {
	ctx := c.Request.Context()
	f, err := s.taskListFilter(ctx, c.Request.URL.Query())
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	page, err := s.listTaskRows(ctx, f)
	if err != nil {
		apierror.AbortResource(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

// taskListFilter reads and checks the query: every value bounded, UTF-8
// text without NUL; an agent the caller may not use is refused as every
// other route refuses it; without an agent, the agents the caller may use.
func (s *Resources) taskListFilter(ctx context.Context, q map[string][]string) (taskListFilter, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	var f taskListFilter
	for _, k := range []string{"agent", "state", "context", "owner", "schedule", "forkOf", "q"} {
		v := get(k)
		if len(v) > 256 || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return f, apierror.BadRequest(k + " must be UTF-8 text without NUL, at most 256 bytes")
		}
	}
	f.contextID, f.owner, f.schedule, f.forkOf = get("context"), get("owner"), get("schedule"), get("forkOf")
	if st := get("state"); st != "" {
		f.state = a2a.TaskState(st)
		if !knownState(f.state) {
			return f, apierror.BadRequest(fmt.Sprintf("state %q is not a task state (TASK_STATE_WORKING...)", st))
		}
	}
	if text := get("q"); text != "" {
		f.words = textWords(text)
		if len(f.words) == 0 {
			return f, apierror.BadRequest("q has no word to look for")
		}
	}
	f.pageSize = defaultTaskListPage
	if v := get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTaskListPage {
			return f, apierror.BadRequest(fmt.Sprintf("pageSize=%q: want a number from 1 to %d", v, maxTaskListPage))
		}
		f.pageSize = n
	}
	if f.pageToken = get("pageToken"); len(f.pageToken) > 4096 {
		return f, apierror.BadRequest("pageToken is longer than 4096 bytes")
	}
	if name := get("agent"); name != "" {
		if _, ok := s.agents.Get(name); !ok {
			return f, apierror.NotFound("no agent %q", name)
		}
		if err := guard.PermitAgent(ctx, name); err != nil {
			return f, err
		}
		f.agents = []string{name}
		return f, nil
	}
	for _, name := range s.agents.Names() {
		if guard.MayUse(ctx, name) {
			f.agents = append(f.agents, name)
		}
	}
	return f, nil
}

// knownState accepts the A2A 1.0 task states.
func knownState(st a2a.TaskState) bool {
	switch st {
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
		a2a.TaskStateCompleted, a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected:
		return true
	}
	return false
}

// textWords splits the text filter into words of letters and digits, the
// tokens the visibility store's full-text index holds (at most
// maxTextWords): anything else would be its query syntax.
func textWords(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > maxTextWords {
		words = words[:maxTextWords]
	}
	return words
}

// taskListQuery is the visibility query of f for the caller of ctx: its
// own tasks (with authentication on) of f's agents, every value quoted.
func taskListQuery(ctx context.Context, f taskListFilter) string {
	quoted := make([]string, len(f.agents))
	for i, a := range f.agents {
		quoted[i] = wire.QuoteQueryValue(a)
	}
	conds := []string{
		"WorkflowType = " + wire.QuoteQueryValue(wire.TaskWorkflowName),
		"ExecutionStatus != " + wire.QuoteQueryValue(enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW.String()),
		wire.AgentKey.GetName() + " IN (" + strings.Join(quoted, ", ") + ")",
	}
	eq := func(key, v string) {
		if v != "" {
			conds = append(conds, key+" = "+wire.QuoteQueryValue(v))
		}
	}
	eq(wire.OwnerKey.GetName(), guard.Principal(ctx))
	eq(wire.OwnerKey.GetName(), f.owner)
	eq(wire.ContextIDKey.GetName(), f.contextID)
	eq("TemporalScheduledById", f.schedule)
	eq(wire.ForkOfKey.GetName(), f.forkOf)
	for _, w := range f.words {
		eq(wire.TextKey.GetName(), w)
	}
	if f.state != "" {
		conds = append(conds, wire.TaskStateCondition(f.state))
	}
	return strings.Join(conds, " AND ")
}

// listTaskRows runs f's query and makes its rows.
func (s *Resources) listTaskRows(ctx context.Context, f taskListFilter) (*TaskListPage, error) {
	page := &TaskListPage{Tasks: []TaskRow{}}
	principal := guard.Principal(ctx)
	if len(f.agents) == 0 || (principal != "" && f.owner != "" && f.owner != principal) {
		return page, nil // nothing the caller may see
	}
	query := taskListQuery(ctx, f)
	token, err := taskservice.DecodePageToken(f.pageToken, query)
	if err != nil {
		return nil, apierror.BadRequest(err.Error())
	}
	resp, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize: int32(f.pageSize), NextPageToken: token, Query: query,
	})
	if err != nil {
		return nil, apierror.FromVisibility(err, len(token) > 0)
	}
	for _, e := range resp.GetExecutions() {
		page.Tasks = append(page.Tasks, s.taskRow(e))
	}
	s.readWaiting(ctx, page.Tasks)
	page.NextPageToken = taskservice.EncodePageToken(resp.GetNextPageToken(), query)
	return page, nil
}

// taskRow makes a row from a listed run: its search attributes and memo.
func (s *Resources) taskRow(e *workflowpb.WorkflowExecutionInfo) TaskRow {
	sa := e.GetSearchAttributes().GetIndexedFields()
	memo := e.GetMemo().GetFields()
	row := TaskRow{
		ID:        e.GetExecution().GetWorkflowId(),
		Agent:     keywordOf(sa[wire.AgentKey.GetName()]),
		ContextID: keywordOf(sa[wire.ContextIDKey.GetName()]),
		Owner:     keywordOf(sa[wire.OwnerKey.GetName()]),
		Schedule:  keywordOf(sa["TemporalScheduledById"]),
		ForkOf:    keywordOf(sa[wire.ForkOfKey.GetName()]),
		State:     visibleState(keywordOf(sa[wire.TaskStateKey.GetName()]), e.GetStatus()),
		Started:   e.GetStartTime().AsTime().UTC(),
		Continued: e.GetFirstRunId() != "" && e.GetFirstRunId() != e.GetExecution().GetRunId(),
	}
	var approvals []string
	if p := sa[wire.PendingApprovalsKey.GetName()]; p != nil && converter.GetDefaultDataConverter().FromPayload(p, &approvals) == nil {
		row.PendingApprovals = approvals
	}
	if row.State == a2a.TaskStateInputRequired || row.State == a2a.TaskStateAuthRequired {
		var w wire.Waiting
		if memoValue(memo, wire.WaitingMemoKey, &w) && w.Kind != "" {
			row.Waiting = &w
			row.WaitingFor = w.Line()
		}
	}
	var text string
	memoValue(memo, "text", &text)
	row.Summary = row.Agent
	if line := firstLine(text); line != "" {
		row.Summary = wire.OneLine(row.Agent+" · "+line, wire.SummaryRunes)
	}
	if row.ForkOf == "" {
		memoValue(memo, "forkOf", &row.ForkOf)
	}
	var usage workflows.TokenUsage
	if memoValue(memo, wire.UsageMetadataKey, &usage) {
		row.CostUSD, row.LLMCalls = usage.CostUSD, usage.Calls
	}
	if e.GetCloseTime() != nil {
		t := e.GetCloseTime().AsTime().UTC()
		row.Closed = &t
	}
	if s.cfg.TemporalUIURL != "" {
		row.TemporalURL = fmt.Sprintf("%s/namespaces/%s/workflows/%s", s.cfg.TemporalUIURL, s.cfg.Namespace, row.ID)
	}
	return row
}

// memoValue decodes the memo's field key into v; false when it has none.
func memoValue(memo map[string]*commonpb.Payload, key string, v any) bool {
	p := memo[key]
	return p != nil && converter.GetDefaultDataConverter().FromPayload(p, v) == nil
}

// firstLine is the first non-empty line of text.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return ""
}

// visibleState is a task's state from its run's A2ATaskState and
// execution status, as wire.TaskStateCondition finds it: a run that ended
// outside its handler is failed; a run that completed while visibility
// had it working (wire.LeanWrites) is completed.
func visibleState(recorded string, status enums.WorkflowExecutionStatus) a2a.TaskState {
	st := a2a.TaskState(recorded)
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		if st == "" {
			return a2a.TaskStateSubmitted
		}
		return st
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		if st == a2a.TaskStateFailed || st == a2a.TaskStateCanceled || st == a2a.TaskStateRejected {
			return st
		}
		return a2a.TaskStateCompleted
	}
	return a2a.TaskStateFailed
}

// readWaiting says what each waiting row whose memo does not say it (a task
// recorded before wire.WaitingMemo) waits for, reading its status (GetTask
// without history, under the one rule) at most waitingReads at a time. A
// row whose read fails keeps what visibility says.
func (s *Resources) readWaiting(ctx context.Context, rows []TaskRow) {
	sem := make(chan struct{}, waitingReads)
	var wg sync.WaitGroup
	for i := range rows {
		r := &rows[i]
		if r.Waiting != nil || (r.State != a2a.TaskStateInputRequired && r.State != a2a.TaskStateAuthRequired) {
			continue
		}
		svc := s.services[r.Agent]
		if svc == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			zero := 0
			t, err := svc.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(r.ID), HistoryLength: &zero})
			if err != nil {
				return
			}
			r.State = t.Status.State
			r.WaitingFor = waitingFor(t.Status)
		}()
	}
	wg.Wait()
}

// waitingFor says what a task in status st waits for, from its status
// message: an approval or a waitpoint (their data parts), a credential,
// or an answer to its question.
func waitingFor(st a2a.TaskStatus) string {
	if st.State != a2a.TaskStateInputRequired && st.State != a2a.TaskStateAuthRequired {
		return ""
	}
	var texts []string
	if st.Message != nil {
		for _, p := range st.Message.Parts {
			if p == nil {
				continue
			}
			if d, ok := p.Data().(map[string]any); ok {
				str := func(k string) string { v, _ := d[k].(string); return v }
				switch {
				case str("approvalId") != "":
					return "approval: " + cmp.Or(str("title"), str("approvalId"))
				case str("waitpointId") != "":
					return "waitpoint: " + cmp.Or(str("name"), str("waitpointId"))
				case st.State == a2a.TaskStateAuthRequired && str("service") != "":
					return "credential: " + str("service")
				}
			}
			if t := p.Text(); t != "" {
				texts = append(texts, t)
			}
		}
	}
	text := wire.OneLine(strings.Join(texts, " "), 120)
	if st.State == a2a.TaskStateAuthRequired {
		return "credential: " + cmp.Or(text, "a credential")
	}
	return "input: " + cmp.Or(text, "an answer")
}
