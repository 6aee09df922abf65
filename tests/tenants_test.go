package tests

// The tenant matrix of issue 13: one a2aflow serve with API keys (alice,
// bob, mallory, fiona) and HS256 JWTs (carol), finance's approver fiona,
// and webhooks on loopback. alice and carol own tasks (a travel task
// waiting for input, a completed one, expenses waiting for finance, each
// with a push config); every principal drives every A2A method over both
// bindings and both protocol versions, in raw HTTP (and over gRPC, 1.0 and
// 0.3, with a2a-go's transports: tenants_grpc_test.go; and over MCP's
// tools: tenants_mcp_test.go), at its own task,
// another tenant's tasks and an unknown task. Each answer must carry the
// exact code and none of another tenant's data (IDs other than the
// request's own echoed in an error, context IDs, history texts, push URLs
// and tokens, config IDs), and another tenant's attempts must change
// nothing and reach no webhook. Then the decision path (data parts,
// REST approvals, the inbox) under workflows/access.go's rule.
//
//	go test ./tests/ -run TestTenantMatrix -v
//
// prints a subtest per tenant, variant, target and method (a tenant's own
// task is one ordered chain through the eleven methods per variant).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// The A2A methods of the matrix, by their 1.0 JSON-RPC names.
const (
	methodSend       = "SendMessage"
	methodStream     = "SendStreamingMessage"
	methodGet        = "GetTask"
	methodList       = "ListTasks"
	methodCancel     = "CancelTask"
	methodSubscribe  = "SubscribeToTask"
	methodCreatePush = "CreateTaskPushNotificationConfig"
	methodGetPush    = "GetTaskPushNotificationConfig"
	methodListPush   = "ListTaskPushNotificationConfigs"
	methodDeletePush = "DeleteTaskPushNotificationConfig"
	methodCard       = "GetExtendedAgentCard"
)

// taskMethods are the methods that name a task (all but the card).
var taskMethods = []string{methodSend, methodStream, methodGet, methodList, methodCancel, methodSubscribe,
	methodCreatePush, methodGetPush, methodListPush, methodDeletePush}

// rpcMethods03 are the A2A 0.3 JSON-RPC names. 0.3 has no tasks/list:
// a2a-go's 0.3 server answers it -32601.
var rpcMethods03 = map[string]string{
	methodSend: "message/send", methodStream: "message/stream", methodGet: "tasks/get", methodList: "tasks/list",
	methodCancel: "tasks/cancel", methodSubscribe: "tasks/resubscribe",
	methodCreatePush: "tasks/pushNotificationConfig/set", methodGetPush: "tasks/pushNotificationConfig/get",
	methodListPush: "tasks/pushNotificationConfig/list", methodDeletePush: "tasks/pushNotificationConfig/delete",
	methodCard: "agent/getAuthenticatedExtendedCard",
}

// tenant is a principal of the matrix and the credential it sends.
type tenant struct {
	name   string
	scheme string // "API key" or "JWT"
	apiKey string
	token  string
}

func (tn *tenant) String() string { return tn.name + " (" + tn.scheme + ")" }

func (tn *tenant) setCredential(h http.Header) {
	if tn.token != "" {
		h.Set("Authorization", "Bearer "+tn.token)
	} else {
		h.Set("X-API-Key", tn.apiKey)
	}
}

// wireMessage is a user message as the matrix sends it: text or a data part.
type wireMessage struct {
	id, taskID, text string
	data             map[string]any
}

// wirePush is a push notification config as the matrix sends it.
type wirePush struct{ id, url, token string }

// a2aArgs are the arguments of one A2A call.
type a2aArgs struct {
	agentPath string // "" (the default agent, travel) or "/agents/NAME"
	taskID    string
	configID  string
	contextID string
	pageToken string
	pageSize  int
	message   *wireMessage
	push      *wirePush // the config to create, or the send's configuration
}

// tenantCall is one raw HTTP request.
type tenantCall struct {
	httpMethod string
	path       string
	version    string // A2A-Version header; "" sends none
	body       string
	jsonRPC    bool
	stream     bool
	// firstEvent stops reading a stream after its first event (a live
	// subscription never ends by itself).
	firstEvent bool
	// echo are the values of the request an error answer may repeat;
	// echoAlways lets a result repeat them too (an approver's decision is
	// answered with the approval it names).
	echo       []string
	echoAlways bool
	// waitpointToken goes in the X-Waitpoint-Token header.
	waitpointToken string
	// mayRead are the kinds of another owner's secrets the caller may
	// read (an approver reads the approvals of its groups: their task and
	// context IDs and what they are for).
	mayRead []string
	// grpc, when set, makes this a gRPC call (tenants_grpc_test.go).
	grpc *grpcArgs
}

func (c tenantCall) String() string {
	v := c.version
	if v == "" {
		v = "none"
	}
	s := fmt.Sprintf("%s %s (A2A-Version: %s)", c.httpMethod, c.path, v)
	if c.body != "" {
		s += " " + c.body
	}
	return s
}

// tenantAnswer is what came back, and its outcome: code is the JSON-RPC
// error code (0: a result) on the JSON-RPC binding, and on HTTP+JSON the
// HTTP status, or the google.rpc.Status code of an error sent as a
// stream's first event.
type tenantAnswer struct {
	status   int
	ctype    string
	raw      []byte
	events   []string // SSE data payloads
	code     int
	isError  bool
	inStream bool   // the error is a stream's first event
	message  string // the error's message
	// laterError is an error event after the first one, timedOut a stream
	// read that hit the call's deadline.
	laterError string
	timedOut   bool
}

// tenantSecret is one value of an owner's tasks that no other tenant may
// see, and what it is (one of the secret* kinds).
type tenantSecret struct{ what, value string }

// Kinds of secrets.
const (
	secretTaskID    = "task ID"
	secretContextID = "context ID"
	secretPurpose   = "expense purpose"
)

// approverMayRead is what fiona of finance reads of the approvals of her
// group: the request (its purpose), its task and context.
var approverMayRead = []string{secretTaskID, secretContextID, secretPurpose}

// fixtureTask is one task of a fixture owner.
type fixtureTask struct {
	id, contextID string
	agentPath     string
	messageID     string // of its first message
	configID      string // its push config
	hookPath      string
	approvalID    string // expenses: its first approval
}

// tenantFixture is what one owner has before the matrix runs.
type tenantFixture struct {
	owner     *tenant
	waiting   fixtureTask   // travel, input-required
	completed fixtureTask   // travel, completed
	expense   fixtureTask   // expenses, waiting for finance
	decisions []fixtureTask // more expenses, for fiona's decisions (alice)
	rest      fixtureTask   // an expense decided through REST (alice)
	pageToken string        // of a ListTasks page of pageSize 1
	secrets   []tenantSecret
}

func (f *tenantFixture) tasks() []fixtureTask {
	out := []fixtureTask{f.waiting, f.completed, f.expense}
	out = append(out, f.decisions...)
	if f.rest.id != "" {
		out = append(out, f.rest)
	}
	return out
}

func (f *tenantFixture) addSecret(what, value string) {
	if value != "" {
		f.secrets = append(f.secrets, tenantSecret{what, value})
	}
}

// hookLog is a webhook receiver on loopback that counts what each path got.
type hookLog struct {
	*httptest.Server
	mu     sync.Mutex
	byPath map[string][]string
}

func newHookLog(t *testing.T) *hookLog {
	h := &hookLog{byPath: map[string][]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.byPath[r.URL.Path] = append(h.byPath[r.URL.Path], string(body))
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookLog) received(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.byPath[path])
}

func (h *hookLog) counts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for p, bodies := range h.byPath {
		out[p] = len(bodies)
	}
	return out
}

// tenantMatrix is the running server and everything the cases share.
type tenantMatrix struct {
	t        testing.TB // the matrix's own test, whose cleanups outlive its subtests
	s        *harness.Server
	hooks    *hookLog
	http     *http.Client
	temporal client.Client
	nonce    string
	slots    chan struct{} // bounds the requests in flight
	cases    atomic.Int64
	rpcID    atomic.Int64

	alice, bob, mallory, fiona, carol *tenant
	tenants                           []*tenant
	fixtures                          []*tenantFixture
	// scratch is each tenant's own travel task per variant, for the
	// methods that change a task.
	scratch map[string]fixtureTask

	mu    sync.Mutex
	owned map[string]map[string]bool // tenant -> its task IDs
	// errorBodies keeps the refusals of the matrix to compare another
	// tenant's task with an unknown one.
	errorBodies map[errorKey]errorAnswer
	// grpcAddr is serve's gRPC binding, which the methods phase drives too
	// (tenants_grpc_test.go).
	grpcAddr    string
	grpcClients grpcMatrixClients
}

const tenantMaxInFlight = 6

// TestTenantMatrix: see the top of this file. Each phase logs its number
// of cases; the whole takes about half a minute after the build.
func TestTenantMatrix(t *testing.T) {
	began := time.Now()
	m := startTenantMatrix(t)
	m.setUp(t)
	before := m.snapshots(t)
	hooksBefore := m.hooks.counts()
	t.Logf("serve and the fixtures took %s", time.Since(began).Round(time.Millisecond))

	phase := func(name string, run func(*testing.T)) {
		start, cases := time.Now(), m.cases.Load()
		t.Run(name, run)
		t.Logf("%s: %d cases in %s", name, m.cases.Load()-cases, time.Since(start).Round(time.Millisecond))
	}
	phase("methods", m.runMethods)
	phase("decision parts from other tenants", m.runForeignDecisions)
	phase("approvals routes before the decision", m.runApprovalsBefore)
	phase("reads alongside refused writes", m.runReadsAlongsideWrites)
	phase("MCP", m.runMCP) // tenants_mcp_test.go
	phase("other tenants changed nothing", func(t *testing.T) { m.checkUnchanged(t, before, hooksBefore) })
	phase("another tenant's task answers as an unknown one", m.compareWithUnknown)
	phase("fiona decides by message", m.runFionaDecisions)
	phase("approvals routes and the decision over REST", m.runApprovalsREST)
	phase("self-approval", m.runSelfApproval)
	phase("waitpoint routes", m.runWaitpoints)
	phase("schedule routes", m.runSchedules)     // tenants_schedules_test.go
	phase("fork routes", m.runForks)             // tenants_fork_test.go
	phase("timeline route", m.runTimeline)       // tenants_timeline_test.go
	phase("task list route", m.runTaskList)      // tenants_tasklist_test.go
	phase("policy routes", m.runPolicies)        // tenants_policies_test.go
	phase("delegation routes", m.runDelegations) // tenants_delegations_test.go
	phase("no webhook of another tenant got anything", m.checkAttackHooks)
	t.Logf("tenant matrix: %d cases, %s in all", m.cases.Load(), time.Since(began).Round(time.Millisecond))
}

// checkUnchanged compares the fixture tasks with their snapshot before the
// other tenants tried, the webhook deliveries with theirs, and checks that
// the owners' listings hold their own tasks only.
func (m *tenantMatrix) checkUnchanged(t *testing.T, before map[string]fixtureSnapshot, hooksBefore map[string]int) {
	m.settle(t)
	after := m.snapshots(t)
	for _, f := range m.fixtures {
		for _, task := range f.tasks() {
			if diff := cmp.Diff(before[task.id], after[task.id]); diff != "" {
				t.Errorf("%s's task %s (%s) changed while other tenants tried (-before +after):\n%s", f.owner.name, task.id, task.agentPath, diff)
			}
		}
	}
	if diff := cmp.Diff(hooksBefore, m.hooks.counts()); diff != "" {
		t.Errorf("webhook deliveries while other tenants tried (-before +after):\n%s", diff)
	}
	for _, f := range m.fixtures {
		for _, agentPath := range []string{"", "/agents/expenses"} {
			for token := ""; ; {
				var page listPage
				_ = json.Unmarshal(m.rpc10(t, f.owner, agentPath, methodList, map[string]any{"pageSize": 100, "pageToken": token}), &page)
				m.mu.Lock()
				for _, task := range page.Tasks {
					if !m.owned[f.owner.name][task.ID] {
						t.Errorf("ListTasks at %q as %s lists task %s, which %s did not create", agentPath, f.owner, task.ID, f.owner.name)
					}
				}
				m.mu.Unlock()
				if token = page.NextPageToken; token == "" {
					break
				}
			}
		}
	}
}

// checkAttackHooks: no webhook another tenant tried to register on a task
// got a notification.
func (m *tenantMatrix) checkAttackHooks(t *testing.T) {
	for path, n := range m.hooks.counts() {
		if strings.HasPrefix(path, "/attack-") && n > 0 {
			t.Errorf("webhook %s, registered by another tenant than the task's owner, got %d notifications: %q", path, n, m.hooks.received(path))
		}
	}
}

func startTenantMatrix(t *testing.T) *tenantMatrix {
	nonce := fmt.Sprintf("%x", time.Now().UnixNano())[6:]
	m := &tenantMatrix{
		t:           t,
		nonce:       nonce,
		slots:       make(chan struct{}, tenantMaxInFlight),
		scratch:     map[string]fixtureTask{},
		owned:       map[string]map[string]bool{},
		errorBodies: map[errorKey]errorAnswer{},
		alice:       &tenant{name: "alice", scheme: "API key", apiKey: "alice-key-" + nonce},
		bob:         &tenant{name: "bob", scheme: "API key", apiKey: "bob-key-" + nonce},
		mallory:     &tenant{name: "mallory", scheme: "API key", apiKey: "mallory-key-" + nonce},
		fiona:       &tenant{name: "fiona", scheme: "API key", apiKey: "fiona-key-" + nonce},
		carol:       &tenant{name: "carol", scheme: "JWT", token: hs256Token(t, "carol")},
	}
	m.tenants = []*tenant{m.alice, m.bob, m.mallory, m.carol, m.fiona}
	m.hooks = newHookLog(t)
	t.Setenv("A2AFLOW_API_KEYS", fmt.Sprintf("alice=%s,bob=%s,mallory=%s,fiona=%s", m.alice.apiKey, m.bob.apiKey, m.mallory.apiKey, m.fiona.apiKey))
	t.Setenv("A2AFLOW_JWT_SECRET", authSecret)
	m.grpcAddr = fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	m.s = harness.StartServe(t, t.TempDir(),
		"--grpc-addr", m.grpcAddr,
		"--approver-groups", "fiona:finance",
		"--policy-admins", "alice:alice;carol:*",
		"--push-allow-hosts", "loopback",
		"--jwt-issuer", authIssuer, "--jwt-audience", authAudience)
	m.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * tenantMaxInFlight}}
	t.Cleanup(m.http.CloseIdleConnections)
	tc, err := client.Dial(client.Options{HostPort: m.s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	m.temporal = tc
	return m
}

// setUp creates the fixtures of alice and carol, every tenant's scratch
// tasks, and waits until the tasks and their webhooks are quiet.
func (m *tenantMatrix) setUp(t *testing.T) {
	m.fixtures = []*tenantFixture{
		m.ownerFixture(t, m.alice, "640 EUR", "team offsite", 8),
		m.ownerFixture(t, m.carol, "250 EUR", "carol offsite "+m.nonce, 0),
	}
	for _, tn := range m.tenants {
		for _, v := range tenantVariants {
			task := m.createTravel(t, tn, fmt.Sprintf("Book a flight, %s scratch %s", tn.name, v), nil)
			m.scratch[tn.name+" "+v.String()] = task
		}
	}
	m.settle(t)
}

// ownerFixture creates owner's tasks: an expense of amount for purpose,
// and that many more for decisions and one decided over REST when
// decisions > 0.
func (m *tenantMatrix) ownerFixture(t *testing.T, owner *tenant, amount, purpose string, decisions int) *tenantFixture {
	expenseText := amount + " " + purpose
	f := &tenantFixture{owner: owner}
	hook := func(kind string) *wirePush {
		return &wirePush{id: fmt.Sprintf("cfg-%s-%s-%s", owner.name, kind, m.nonce),
			url:   fmt.Sprintf("%s/hook/%s-%s-%s", m.hooks.URL, owner.name, kind, m.nonce),
			token: fmt.Sprintf("tok-%s-%s-%s", owner.name, kind, m.nonce)}
	}
	f.waiting = m.createTravel(t, owner, fmt.Sprintf("Book a flight for %s, trip %s", owner.name, m.nonce), hook("waiting"))
	f.completed = m.createTravel(t, owner, fmt.Sprintf("Book a flight for %s, done trip %s", owner.name, m.nonce), hook("completed"))
	destination := fmt.Sprintf("Zanzibar-%s-%s", owner.name, m.nonce)
	var done *a2a.Task
	for i, answer := range []string{destination, "2026-12-24", "2"} {
		done = m.send(t, owner, "", &wireMessage{id: fmt.Sprintf("msg-%s-answer-%d-%s", owner.name, i, m.nonce), taskID: f.completed.id, text: answer}, nil)
	}
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("%s's completed fixture is %s", owner.name, done.Status.State)
	}
	f.addSecret("destination", destination)
	for i := range 3 {
		f.addSecret("message ID", fmt.Sprintf("msg-%s-answer-%d-%s", owner.name, i, m.nonce))
	}
	if len(done.Artifacts) > 0 {
		if data, ok := done.Artifacts[0].Parts[0].Data().(map[string]any); ok {
			f.addSecret("booking reference", fmt.Sprint(data["reference"]))
		}
	}
	f.expense = m.createExpense(t, owner, expenseText, hook("expense"))
	for i := range decisions {
		f.decisions = append(f.decisions, m.createExpense(t, owner, expenseText, hook(fmt.Sprintf("decision-%d", i))))
	}
	if decisions > 0 {
		f.rest = m.createExpense(t, owner, expenseText, hook("rest"))
	}
	f.addSecret(secretPurpose, purpose)
	f.addSecret("first message", fmt.Sprintf("for %s, trip %s", owner.name, m.nonce))
	f.addSecret("first message", fmt.Sprintf("for %s, done trip %s", owner.name, m.nonce))
	for _, task := range f.tasks() {
		f.addSecret(secretTaskID, task.id)
		f.addSecret(secretContextID, task.contextID)
		f.addSecret("message ID", task.messageID)
		f.addSecret("push config ID", task.configID)
		f.addSecret("push URL", m.hooks.URL+task.hookPath)
		f.addSecret("push token", strings.Replace(task.configID, "cfg-", "tok-", 1))
	}
	// A page token of owner's listing, for other tenants to replay.
	waitFor(t, 30*time.Second, func() bool {
		res := m.rpc10(t, owner, "", methodList, map[string]any{"pageSize": 1})
		var page struct {
			NextPageToken string `json:"nextPageToken"`
		}
		_ = json.Unmarshal(res, &page)
		f.pageToken = page.NextPageToken
		return f.pageToken != ""
	})
	return f
}

// createTravel starts a travel task as owner, waiting for its first answer.
func (m *tenantMatrix) createTravel(t *testing.T, owner *tenant, text string, push *wirePush) fixtureTask {
	t.Helper()
	msg := &wireMessage{id: fmt.Sprintf("msg-%s-%s", owner.name, a2a.NewMessageID()), text: text}
	task := m.send(t, owner, "", msg, push)
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Where to?")
	return m.fixtureTask(owner, task, "", msg, push)
}

// createExpense files an expense as owner, waiting for finance.
func (m *tenantMatrix) createExpense(t *testing.T, owner *tenant, text string, push *wirePush) fixtureTask {
	t.Helper()
	msg := &wireMessage{id: fmt.Sprintf("msg-%s-%s", owner.name, a2a.NewMessageID()), text: text}
	task := m.send(t, owner, "/agents/expenses", msg, push)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("expense %q is %s, want input-required (waiting for finance)", text, task.Status.State)
	}
	ft := m.fixtureTask(owner, task, "/agents/expenses", msg, push)
	ft.approvalID = string(task.ID) + "-approval-1"
	return ft
}

func (m *tenantMatrix) fixtureTask(owner *tenant, task *a2a.Task, agentPath string, msg *wireMessage, push *wirePush) fixtureTask {
	ft := fixtureTask{id: string(task.ID), contextID: task.ContextID, agentPath: agentPath, messageID: msg.id}
	if push != nil {
		ft.configID = push.id
		ft.hookPath = strings.TrimPrefix(push.url, m.hooks.URL)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owned[owner.name] == nil {
		m.owned[owner.name] = map[string]bool{}
	}
	m.owned[owner.name][ft.id] = true
	return ft
}

// send is a blocking A2A 1.0 JSON-RPC SendMessage that must answer a task.
func (m *tenantMatrix) send(t *testing.T, who *tenant, agentPath string, msg *wireMessage, push *wirePush) *a2a.Task {
	t.Helper()
	res := m.rpc10(t, who, agentPath, methodSend, rpcParams(jsonRPC10, methodSend, a2aArgs{message: msg, push: push}))
	var out struct {
		Task *a2a.Task `json:"task"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.Task == nil {
		t.Fatalf("SendMessage as %s answered %s, want a task (%v)", who, res, err)
	}
	return out.Task
}

// rpc10 is an A2A 1.0 JSON-RPC call of the set-up, which must succeed.
func (m *tenantMatrix) rpc10(t *testing.T, who *tenant, agentPath, method string, params any) json.RawMessage {
	t.Helper()
	c := m.rpcCall(jsonRPC10, agentPath, method, params)
	a := m.do(t, who, c)
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if a.isError || json.Unmarshal(a.raw, &out) != nil {
		t.Fatalf("%s as %s: %s", c, who, a.raw)
	}
	return out.Result
}

// settle waits until no fixture task's Temporal history grows and no
// webhook gets anything for a second.
func (m *tenantMatrix) settle(t *testing.T) {
	t.Helper()
	state := func() string {
		var b strings.Builder
		for _, f := range m.fixtures {
			for _, task := range f.tasks() {
				fmt.Fprintf(&b, "%s=%d ", task.id, m.historyEvents(t, task.id))
			}
		}
		fmt.Fprint(&b, m.hooks.counts())
		return b.String()
	}
	deadline := time.Now().Add(time.Minute)
	for last := state(); ; {
		time.Sleep(time.Second)
		now := state()
		if now == last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture tasks did not settle within a minute: %s", now)
		}
		last = now
	}
}

func (m *tenantMatrix) historyEvents(t *testing.T, taskID string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := m.temporal.GetWorkflowHistory(ctx, taskID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			t.Fatalf("history of %s: %v", taskID, err)
		}
		n++
	}
	return n
}

// fixtureSnapshot is a task as its owner reads it.
type fixtureSnapshot struct {
	Task          string // GetTask, the whole task
	PushConfigs   string // ListTaskPushNotificationConfigs
	HistoryEvents int    // events in the task's Temporal history
	Approval      string // GET /approvals/{id}, for an expense
}

func (m *tenantMatrix) snapshots(t *testing.T) map[string]fixtureSnapshot {
	t.Helper()
	out := map[string]fixtureSnapshot{}
	for _, f := range m.fixtures {
		for _, task := range f.tasks() {
			snap := fixtureSnapshot{
				Task:          string(m.rpc10(t, f.owner, task.agentPath, methodGet, map[string]any{"id": task.id})),
				PushConfigs:   string(m.rpc10(t, f.owner, task.agentPath, methodListPush, map[string]any{"taskId": task.id})),
				HistoryEvents: m.historyEvents(t, task.id),
			}
			if task.approvalID != "" {
				a := m.do(t, f.owner, restCall(http.MethodGet, "/approvals/"+task.approvalID, ""))
				snap.Approval = fmt.Sprintf("%d %s", a.status, a.raw)
			}
			out[task.id] = snap
		}
	}
	return out
}

// victim is whose tasks tn attacks: alice's, and carol's for alice.
func (m *tenantMatrix) victim(tn *tenant) *tenantFixture {
	if tn == m.alice {
		return m.fixtures[1]
	}
	return m.fixtures[0]
}

// wantNotFound is TaskNotFound on v's binding.
func wantNotFound(v matrixVariant) int {
	if v.binding == a2a.TransportProtocolJSONRPC {
		return -32001
	}
	if v.binding == a2a.TransportProtocolGRPC {
		return int(codes.NotFound)
	}
	return http.StatusNotFound
}

func wantInvalidParams(v matrixVariant) int {
	if v.binding == a2a.TransportProtocolJSONRPC {
		return -32602
	}
	if v.binding == a2a.TransportProtocolGRPC {
		return int(codes.InvalidArgument)
	}
	return http.StatusBadRequest
}

// wantOK is a successful answer on v's binding.
func wantOK(v matrixVariant, method string) int {
	switch {
	case v.binding == a2a.TransportProtocolGRPC:
		return int(codes.OK) // a2a-go's 0.3 gRPC service has ListTasks
	case v.binding == a2a.TransportProtocolJSONRPC && v.version == "0.3" && method == methodList:
		return -32601 // A2A 0.3 has no tasks/list
	case v.binding == a2a.TransportProtocolJSONRPC:
		return 0
	case v.version == "0.3" && method == methodDeletePush:
		return http.StatusNoContent
	}
	return http.StatusOK
}

// runMethods is the matrix proper: every tenant, variant and method, at
// its own task (one ordered chain per tenant and variant) and at another
// tenant's tasks and an unknown task (each a parallel case).
func (m *tenantMatrix) runMethods(t *testing.T) {
	for _, tn := range m.tenants {
		for _, v := range tenantVariants {
			t.Run(tn.name+"/"+v.String()+"/own task", func(t *testing.T) {
				t.Parallel()
				m.ownChain(t, tn, v)
			})
			victim := m.victim(tn)
			targets := []struct {
				name string
				task fixtureTask
			}{
				{victim.owner.name + "'s waiting task", victim.waiting},
				{victim.owner.name + "'s completed task", victim.completed},
				{victim.owner.name + "'s expense", victim.expense},
				{"unknown task", fixtureTask{id: "no-such-task-" + m.nonce, contextID: "no-such-context-" + m.nonce,
					configID: "no-such-config-" + m.nonce, messageID: "no-such-message-" + m.nonce}},
			}
			for i, target := range targets {
				for _, method := range taskMethods {
					name := tn.name + "/" + v.String() + "/" + target.name + "/" + method
					if method == methodList {
						name += " (" + listTargets[i] + ")"
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						m.attack(t, tn, v, method, target.name, target.task, victim)
					})
				}
			}
		}
	}
}

// listTargets say what ListTasks sends for each target of runMethods: it
// names no task, so it filters by the task's context, or replays the
// owner's page token.
var listTargets = []string{"contextId of the waiting task", "the owner's page token", "contextId of the expense", "unknown contextId"}

// attack is one method of tn at another tenant's task (or an unknown one).
func (m *tenantMatrix) attack(t *testing.T, tn *tenant, v matrixVariant, method, targetName string, task fixtureTask, victim *tenantFixture) {
	attackHook := fmt.Sprintf("%s/attack-%s-%s-%s", m.hooks.URL, tn.name, strings.ReplaceAll(v.String(), " ", "-"), a2a.NewMessageID())
	args := a2aArgs{agentPath: task.agentPath, taskID: task.id, configID: task.configID}
	want := wantNotFound(v)
	switch method {
	case methodSend:
		// The owner's own messageId: a retry of it must not answer her task.
		args.message = &wireMessage{id: task.messageID, taskID: task.id, text: "Mars, says " + tn.name}
		args.push = &wirePush{url: attackHook, token: "tok-attack"}
	case methodStream:
		args.message = &wireMessage{id: a2a.NewMessageID(), taskID: task.id, text: "Mars, says " + tn.name}
		args.push = &wirePush{url: attackHook, token: "tok-attack"}
	case methodList:
		// Another tenant's context, page token, or an unknown context:
		// an empty page or a refused token, never a task.
		args = a2aArgs{agentPath: task.agentPath, contextID: task.contextID}
		want = wantOK(v, methodList)
		if task.id == victim.completed.id {
			args = a2aArgs{pageToken: victim.pageToken, pageSize: 1}
			if want != -32601 {
				want = wantInvalidParams(v)
			}
		}
	case methodCreatePush:
		// The owner's config ID: a replacement would redirect her webhook.
		args.push = &wirePush{id: task.configID, url: attackHook, token: "tok-attack"}
	}
	c := m.call(v, method, args)
	a := m.expect(t, tn, c, want)
	if method == methodList && !a.isError {
		if ids := listedTaskIDs(c, a); len(ids) > 0 {
			t.Errorf("%s as %s listed %v, want no task", c, tn, ids)
		}
	}
	if a.isError {
		m.keepErrorBody(tn, v, method, targetName, c, a)
	}
}

// ownChain drives every method of tn over v on tn's own scratch task, in
// an order that leaves each method something to do.
func (m *tenantMatrix) ownChain(t *testing.T, tn *tenant, v matrixVariant) {
	task := m.scratch[tn.name+" "+v.String()]
	args := a2aArgs{taskID: task.id}
	contains := func(method string, a tenantAnswer, want ...string) {
		t.Helper()
		for _, w := range want {
			if !bytes.Contains(a.raw, []byte(w)) {
				t.Errorf("%s as %s on its own task: answer lacks %q: %s", method, tn, w, truncateForLog(a.raw))
			}
		}
	}
	step := func(method string, args a2aArgs) tenantAnswer {
		t.Helper()
		c := m.call(v, method, args)
		if method == methodSubscribe {
			c.firstEvent = true
		}
		a := m.expect(t, tn, c, wantOK(v, method))
		if a.laterError != "" {
			t.Errorf("%s as %s: the stream ended with an error: %s", c, tn, a.laterError)
		}
		return a
	}

	contains(methodGet, step(methodGet, args), task.id, "Where to?")
	m.ownListing(t, tn, v, task)
	msg := &wireMessage{id: a2a.NewMessageID(), taskID: task.id, text: "Lisbon"}
	contains(methodSend, step(methodSend, a2aArgs{message: msg}), task.id, "On which date?")
	msg = &wireMessage{id: a2a.NewMessageID(), taskID: task.id, text: "2026-12-24"}
	contains(methodStream, step(methodStream, a2aArgs{message: msg}), task.id, "How many travellers?")
	contains(methodSubscribe, step(methodSubscribe, args), task.id)
	cfg := &wirePush{id: "cfg-own-" + a2a.NewMessageID(), url: m.hooks.URL + "/own-" + tn.name + "-" + a2a.NewMessageID(), token: "tok-own"}
	contains(methodCreatePush, step(methodCreatePush, a2aArgs{taskID: task.id, push: cfg}), cfg.id)
	contains(methodGetPush, step(methodGetPush, a2aArgs{taskID: task.id, configID: cfg.id}), cfg.id, cfg.url)
	contains(methodListPush, step(methodListPush, args), cfg.id)
	step(methodDeletePush, a2aArgs{taskID: task.id, configID: cfg.id})
	contains(methodCancel, step(methodCancel, args), task.id)
	contains(methodCard, step(methodCard, a2aArgs{}), `"principal":"`+tn.name+`"`, "urn:a2aflow:ext:caller:v1")
}

// ownListing reads tn's whole listing, two tasks a page, until its scratch
// task shows (visibility is eventually consistent): every page holds only
// tn's tasks.
func (m *tenantMatrix) ownListing(t *testing.T, tn *tenant, v matrixVariant, task fixtureTask) {
	t.Helper()
	if want := wantOK(v, methodList); want != 0 && want != http.StatusOK {
		m.expect(t, tn, m.call(v, methodList, a2aArgs{pageSize: 2}), want)
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var all []string
		token := ""
		for page := 0; ; page++ {
			c := m.call(v, methodList, a2aArgs{pageSize: 2, pageToken: token})
			a := m.expect(t, tn, c, wantOK(v, methodList))
			if a.isError {
				return
			}
			ids := listedTaskIDs(c, a)
			all = append(all, ids...)
			m.mu.Lock()
			for _, id := range ids {
				if !m.owned[tn.name][id] {
					t.Errorf("%s as %s listed task %s, which is not %s's", c, tn, id, tn.name)
				}
			}
			m.mu.Unlock()
			token = listNextPageToken(c, a)
			if token == "" || page > 50 {
				break
			}
		}
		if slices.Contains(all, task.id) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("ListTasks (%s) as %s never listed its task %s: %v", v, tn, task.id, all)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type listPage struct {
	Tasks []struct {
		ID string `json:"id"`
	} `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
}

func readListPage(c tenantCall, a tenantAnswer) listPage {
	var page listPage
	if c.jsonRPC {
		var env struct {
			Result listPage `json:"result"`
		}
		_ = json.Unmarshal(a.raw, &env)
		return env.Result
	}
	_ = json.Unmarshal(a.raw, &page)
	return page
}

func listedTaskIDs(c tenantCall, a tenantAnswer) []string {
	var ids []string
	for _, task := range readListPage(c, a).Tasks {
		ids = append(ids, task.ID)
	}
	return ids
}

func listNextPageToken(c tenantCall, a tenantAnswer) string {
	return readListPage(c, a).NextPageToken
}

// runReadsAlongsideWrites reads alice's waiting task as bob while
// mallory's messages to it are refused, 50 of each at once: a refusal
// must not turn into another answer when the task is busy with others'
// updates. (The matrix runs into this now and then; here it is all but
// certain.)
func (m *tenantMatrix) runReadsAlongsideWrites(t *testing.T) {
	w := m.fixtures[0].waiting
	for i := range 50 {
		v := matrixVariants[i%len(matrixVariants)]
		t.Run(fmt.Sprintf("mallory/%d/SendMessage", i), func(t *testing.T) {
			t.Parallel()
			msg := &wireMessage{id: a2a.NewMessageID(), taskID: w.id, text: "Mars, says mallory"}
			m.expect(t, m.mallory, m.call(v, methodSend, a2aArgs{message: msg}), wantNotFound(v))
		})
		t.Run(fmt.Sprintf("bob/%d/GetTask", i), func(t *testing.T) {
			t.Parallel()
			m.expect(t, m.bob, m.call(v, methodGet, a2aArgs{taskID: w.id}), wantNotFound(v))
		})
	}
}

// runForeignDecisions sends decision data parts on alice's expense from
// tenants outside finance (nothing may be recorded: TaskNotFound), and
// from fiona with a push config (refused as invalid).
func (m *tenantMatrix) runForeignDecisions(t *testing.T) {
	alice := m.fixtures[0]
	e := alice.expense
	early := e.id + "-approval-2"
	for _, tn := range []*tenant{m.bob, m.mallory, m.carol} {
		for _, v := range matrixVariants {
			for _, method := range []string{methodSend, methodStream} {
				for _, d := range []struct {
					name       string
					approvalID string
					push       bool
				}{
					{"decision", e.approvalID, false},
					{"early decision for approval 2", early, false},
					{"decision with a push config", e.approvalID, true},
				} {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", tn.name, v, method, d.name), func(t *testing.T) {
						t.Parallel()
						args := a2aArgs{agentPath: e.agentPath, message: &wireMessage{id: a2a.NewMessageID(), taskID: e.id,
							data: map[string]any{"approvalId": d.approvalID, "approved": true, "comment": "approved by " + tn.name}}}
						if d.push {
							args.push = &wirePush{url: fmt.Sprintf("%s/attack-%s-decision-%s", m.hooks.URL, tn.name, a2a.NewMessageID()), token: "tok-attack"}
						}
						c := m.call(v, method, args)
						c.echo = append(c.echo, d.approvalID)
						m.expect(t, tn, c, wantNotFound(v))
					})
				}
			}
		}
	}
	// fiona may decide, but a decision on another owner's task takes no
	// push config: refused whole, nothing recorded.
	for _, v := range matrixVariants {
		for _, method := range []string{methodSend, methodStream} {
			t.Run(fmt.Sprintf("fiona/%s/%s/decision with a push config", v, method), func(t *testing.T) {
				t.Parallel()
				args := a2aArgs{agentPath: e.agentPath,
					message: &wireMessage{id: a2a.NewMessageID(), taskID: e.id, data: map[string]any{"approvalId": e.approvalID, "approved": true}},
					push:    &wirePush{id: "cfg-fiona-" + a2a.NewMessageID(), url: fmt.Sprintf("%s/attack-fiona-%s", m.hooks.URL, a2a.NewMessageID()), token: "tok-fiona"}}
				c := m.call(v, method, args)
				a := m.expect(t, m.fiona, c, wantInvalidParams(v))
				if a.isError && !strings.Contains(a.message, "push") {
					t.Errorf("the refusal %q does not say the push config is the problem", a.message)
				}
			})
		}
	}
}

// runApprovalsBefore reads and decides alice's pending approvals over
// REST as every tenant, before any decision, and opens each one's inbox.
func (m *tenantMatrix) runApprovalsBefore(t *testing.T) {
	alice, carol := m.fixtures[0], m.fixtures[1]
	e := alice.expense
	unknown := "no-such-task-" + m.nonce + "-approval-1"
	for _, tn := range []*tenant{m.bob, m.mallory, m.carol} {
		t.Run(tn.name, func(t *testing.T) {
			for _, path := range []string{"/approvals", "/approvals?group=finance", "/approvals?state=decided",
				"/approvals?agent=expenses", "/approvals?context=" + url.QueryEscape(e.contextID)} {
				c := restCall(http.MethodGet, path, "")
				c.echo = []string{e.contextID}
				a := m.expect(t, tn, c, http.StatusOK)
				if tn == m.carol && path == "/approvals" && !bytes.Contains(a.raw, []byte(carol.expense.approvalID)) {
					t.Errorf("GET /approvals as carol does not list her own request %s: %s", carol.expense.approvalID, truncateForLog(a.raw))
				}
			}
			get := restCall(http.MethodGet, "/approvals/"+e.approvalID, "")
			get.echo = []string{e.approvalID, e.id}
			m.expect(t, tn, get, http.StatusNotFound)
			for _, verdict := range []bool{true, false} {
				c := restCall(http.MethodPost, "/approvals/"+e.approvalID+"/decision", fmt.Sprintf(`{"approved": %t, "comment": "by %s"}`, verdict, tn.name))
				c.echo = []string{e.approvalID, e.id}
				m.expect(t, tn, c, http.StatusNotFound)
			}
			early := restCall(http.MethodPost, "/approvals/"+e.id+"-approval-2/decision", `{"approved": true}`)
			early.echo = []string{e.id + "-approval-2", e.id}
			m.expect(t, tn, early, http.StatusNotFound)
			m.expect(t, tn, restCall(http.MethodGet, "/approvals/"+unknown, ""), http.StatusNotFound)
			m.expect(t, tn, restCall(http.MethodPost, "/approvals/"+unknown+"/decision", `{"approved": true}`), http.StatusNotFound)
			inbox := m.expect(t, tn, restCall(http.MethodGet, "/inbox", ""), http.StatusOK)
			if tn == m.carol && !bytes.Contains(inbox.raw, []byte(carol.expense.approvalID)) {
				t.Errorf("carol's inbox does not show her own request %s", carol.expense.approvalID)
			}
			// The console's page and scripts: public, the same for every
			// tenant, holding no task (its data comes from the routes above).
			for _, path := range []string{"/console", "/console/app.js", "/console/task.js"} {
				m.expect(t, tn, restCall(http.MethodGet, path, ""), http.StatusOK)
			}
		})
	}
	t.Run("alice", func(t *testing.T) {
		a := m.expect(t, m.alice, restCall(http.MethodGet, "/approvals", ""), http.StatusOK)
		for _, task := range append([]fixtureTask{alice.expense, alice.rest}, alice.decisions...) {
			if !bytes.Contains(a.raw, []byte(task.approvalID)) {
				t.Errorf("GET /approvals as alice does not list her own request %s", task.approvalID)
			}
		}
		view := m.expect(t, m.alice, restCall(http.MethodGet, "/approvals/"+e.approvalID, ""), http.StatusOK)
		var got struct {
			State     string `json:"state"`
			Decisions []any  `json:"decisions"`
		}
		_ = json.Unmarshal(view.raw, &got)
		if got.State != "pending" || len(got.Decisions) != 0 {
			t.Errorf("GET /approvals/%s as alice: state %q with %d decisions, want pending with none", e.approvalID, got.State, len(got.Decisions))
		}
		// The requester reads her request but may not decide it.
		for _, verdict := range []bool{true, false} {
			c := restCall(http.MethodPost, "/approvals/"+e.approvalID+"/decision", fmt.Sprintf(`{"approved": %t}`, verdict))
			if a := m.expect(t, m.alice, c, http.StatusConflict); !strings.Contains(string(a.raw), "may not decide") {
				t.Errorf("alice deciding her own request: the refusal does not say why: %s", a.raw)
			}
		}
		inbox := m.expect(t, m.alice, restCall(http.MethodGet, "/inbox", ""), http.StatusOK)
		if !bytes.Contains(inbox.raw, []byte(e.approvalID)) {
			t.Errorf("alice's inbox does not show her own request %s", e.approvalID)
		}
	})
	t.Run("fiona", func(t *testing.T) {
		for _, path := range []string{"/approvals", "/approvals?group=finance", "/inbox", "/inbox?group=finance"} {
			a := m.expect(t, m.fiona, approverCall(http.MethodGet, path, ""), http.StatusOK)
			for _, id := range []string{e.approvalID, alice.rest.approvalID, carol.expense.approvalID} {
				if !bytes.Contains(a.raw, []byte(id)) {
					t.Errorf("GET %s as fiona (finance) does not show %s", path, id)
				}
			}
		}
		m.expect(t, m.fiona, approverCall(http.MethodGet, "/approvals/"+e.approvalID, ""), http.StatusOK)
	})
}

// runFionaDecisions has fiona (finance) approve alice's expenses by
// message, over each variant and both send methods: the answer is a
// message about the approval, never alice's task, and only the decision
// is recorded.
func (m *tenantMatrix) runFionaDecisions(t *testing.T) {
	alice := m.fixtures[0]
	expenses := append([]fixtureTask{alice.expense}, alice.decisions...)
	i := 0
	for _, v := range matrixVariants {
		for _, method := range []string{methodSend, methodStream} {
			e := expenses[i]
			i++
			t.Run(fmt.Sprintf("%s/%s", v, method), func(t *testing.T) {
				t.Parallel()
				msgID := "msg-fiona-" + a2a.NewMessageID()
				args := a2aArgs{agentPath: e.agentPath, message: &wireMessage{id: msgID, taskID: e.id,
					data: map[string]any{"approvalId": e.approvalID, "approved": true, "comment": "ok by fiona"}}}
				c := m.call(v, method, args)
				c.echo, c.echoAlways = append(c.echo, e.approvalID), true
				a := m.expect(t, m.fiona, c, wantOK(v, method))
				// The answer is a message about the approval, not the task.
				for _, leak := range []string{`"history"`, `"artifacts"`, `"status"`, e.contextID, "team offsite", e.configID, e.hookPath} {
					if bytes.Contains(a.raw, []byte(leak)) {
						t.Errorf("%s as fiona: the answer holds %s of alice's task: %s", c, leak, truncateForLog(a.raw))
					}
				}
				if !bytes.Contains(a.raw, []byte("Your decision on approval "+e.approvalID+" is recorded")) || !bytes.Contains(a.raw, []byte(msgID+"-decision")) {
					t.Errorf("%s as fiona: want a message saying the decision is recorded: %s", c, truncateForLog(a.raw))
				}
				// Another tenant who sends fiona's message again (its ID
				// reused) is told nothing of the approval: Temporal answers
				// an update ID it knows with the first update's result.
				replay := m.call(v, method, args)
				replay.echo = []string{e.approvalID, "ok by fiona"}
				m.expect(t, m.carol, replay, wantNotFound(v))

				// alice's task completes with fiona's decision, and holds
				// nothing else of fiona's message.
				var task a2a.Task
				waitFor(t, 30*time.Second, func() bool {
					_ = json.Unmarshal(m.rpc10(t, m.alice, e.agentPath, methodGet, map[string]any{"id": e.id}), &task)
					return task.Status.State == a2a.TaskStateCompleted
				})
				if ok, who, via, comment := lastDecision(t, receiptOf(t, &task)); !ok || who != "fiona" || via != "a2a" || comment != "ok by fiona" {
					t.Errorf("alice's receipt: last decision approved=%t by %s via %s (%q), want approved by fiona via a2a", ok, who, via, comment)
				}
				for _, h := range task.History {
					if h.ID == msgID || h.Role == a2a.MessageRoleUser && h.ID != e.messageID {
						t.Errorf("alice's task history holds a user message %s besides hers: %+v", h.ID, h)
					}
				}
				var configs struct {
					Configs []struct {
						ID string `json:"id"`
					} `json:"configs"`
				}
				_ = json.Unmarshal(m.rpc10(t, m.alice, e.agentPath, methodListPush, map[string]any{"taskId": e.id}), &configs)
				var ids []string
				for _, cfg := range configs.Configs {
					ids = append(ids, cfg.ID)
				}
				if diff := cmp.Diff([]string{e.configID}, ids); diff != "" {
					t.Errorf("alice's push configs after fiona's decision (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// runApprovalsREST decides alice's REST expense: fiona approves, a retry
// of the same verdict is 200, the other verdict 409 naming who decided
// what; other tenants stay at 404 and see none of it.
func (m *tenantMatrix) runApprovalsREST(t *testing.T) {
	alice := m.fixtures[0]
	e := alice.rest
	decide := func(tn *tenant, approved bool, want int) tenantAnswer {
		t.Helper()
		c := restCall(http.MethodPost, "/approvals/"+e.approvalID+"/decision", fmt.Sprintf(`{"approved": %t, "comment": "by %s"}`, approved, tn.name))
		c.echo = []string{e.approvalID, e.id}
		if tn == m.fiona {
			c.mayRead = approverMayRead
		}
		return m.expect(t, tn, c, want)
	}
	decide(m.mallory, true, http.StatusNotFound)
	decide(m.alice, true, http.StatusConflict)
	decide(m.fiona, true, http.StatusOK)
	decide(m.fiona, true, http.StatusOK)
	if a := decide(m.fiona, false, http.StatusConflict); !regexp.MustCompile(`fiona approved it at \S+ \(via rest\)`).Match(a.raw) {
		t.Errorf("fiona's contradicting decision: the refusal does not say who decided what: %s", a.raw)
	}
	decide(m.alice, false, http.StatusConflict)
	// Once the task has ended, its workflow closes: an approval of
	// another tenant's ended task is still not found.
	waitFor(t, 30*time.Second, func() bool {
		desc, err := m.temporal.DescribeWorkflowExecution(context.Background(), e.id, "")
		return err == nil && desc.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
	for _, tn := range []*tenant{m.bob, m.mallory, m.carol} {
		decide(tn, false, http.StatusNotFound)
		get := restCall(http.MethodGet, "/approvals/"+e.approvalID, "")
		get.echo = []string{e.approvalID, e.id}
		m.expect(t, tn, get, http.StatusNotFound)
		for _, path := range []string{"/approvals?state=decided", "/approvals?state=decided&group=finance", "/inbox"} {
			m.expect(t, tn, restCall(http.MethodGet, path, ""), http.StatusOK)
		}
	}
	var view struct {
		State     string `json:"state"`
		Decisions []struct {
			Approver string `json:"approver"`
			Approved bool   `json:"approved"`
			Via      string `json:"via"`
		} `json:"decisions"`
	}
	a := m.expect(t, m.alice, restCall(http.MethodGet, "/approvals/"+e.approvalID, ""), http.StatusOK)
	_ = json.Unmarshal(a.raw, &view)
	if view.State != "approved" || len(view.Decisions) != 1 || view.Decisions[0].Approver != "fiona" || view.Decisions[0].Via != "rest" {
		t.Errorf("GET /approvals/%s as alice after the decisions: %s, want approved by fiona alone, via rest", e.approvalID, a.raw)
	}
	for _, path := range []string{"/approvals?state=decided", "/inbox?group=finance"} {
		if a := m.expect(t, m.fiona, approverCall(http.MethodGet, path, ""), http.StatusOK); !bytes.Contains(a.raw, []byte(e.approvalID)) {
			t.Errorf("GET %s as fiona does not show the decided %s", path, e.approvalID)
		}
	}
}

// runSelfApproval: a requester may not approve her own request. fiona,
// who is in finance, files an expense per variant and tries to approve it
// over REST and by message; carol, who is in no group, tries on her own
// request by message. Nothing may be recorded. (No code is specified for a refused decision message;
// the matrix expects InvalidParams, as for the decision with a push
// config.)
func (m *tenantMatrix) runSelfApproval(t *testing.T) {
	carol := m.fixtures[1]
	for _, v := range matrixVariants {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			e := m.createExpense(t, m.fiona, "720 EUR fiona offsite "+m.nonce, nil)
			c := restCall(http.MethodPost, "/approvals/"+e.approvalID+"/decision", `{"approved": true}`)
			if a := m.expect(t, m.fiona, c, http.StatusConflict); !strings.Contains(string(a.raw), "may not decide") {
				t.Errorf("fiona approving her own request over REST: the refusal does not say why: %s", a.raw)
			}
			for _, who := range []struct {
				tn   *tenant
				task fixtureTask
			}{{m.fiona, e}, {m.carol, carol.expense}} {
				args := a2aArgs{agentPath: who.task.agentPath, message: &wireMessage{id: a2a.NewMessageID(), taskID: who.task.id,
					data: map[string]any{"approvalId": who.task.approvalID, "approved": true}}}
				m.expect(t, who.tn, m.call(v, methodSend, args), wantInvalidParams(v))
				var view struct {
					State     string `json:"state"`
					Decisions []any  `json:"decisions"`
				}
				a := m.expect(t, who.tn, restCall(http.MethodGet, "/approvals/"+who.task.approvalID, ""), http.StatusOK)
				_ = json.Unmarshal(a.raw, &view)
				if view.State != "pending" || len(view.Decisions) != 0 {
					t.Errorf("%s's own request after she tried to approve it by message: %s, want pending with no decision", who.tn.name, a.raw)
				}
			}
		})
	}
}

// compareWithUnknown checks that another tenant's task is refused with
// the same message as a task that does not exist, once the request's own
// values are taken out: the refusal must not tell that the task exists.
// (A different code is reported by the case itself.) Cases that differ
// alike are reported together.
func (m *tenantMatrix) compareWithUnknown(t *testing.T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type difference struct {
		code           int
		other, unknown string
	}
	type affected struct{ tenants, variants, methods, targets map[string]bool }
	groups := map[difference]*affected{}
	counts := map[difference]int{}
	var order []difference
	for key, other := range m.errorBodies {
		if key.target == "unknown task" {
			continue
		}
		unknownKey := key
		unknownKey.target = "unknown task"
		unknown, ok := m.errorBodies[unknownKey]
		if !ok || other.code != unknown.code || other.message == unknown.message {
			continue
		}
		d := difference{other.code, other.message, unknown.message}
		g := groups[d]
		if g == nil {
			g = &affected{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
			groups[d] = g
			order = append(order, d)
		}
		counts[d]++
		g.tenants[key.tenant], g.variants[key.variant], g.methods[key.method] = true, true, true
		g.targets[strings.TrimPrefix(strings.TrimPrefix(key.target, "alice's "), "carol's ")] = true
	}
	list := func(set map[string]bool) string {
		out := slices.Sorted(maps.Keys(set))
		return strings.Join(out, ", ")
	}
	for _, d := range order {
		g := groups[d]
		t.Errorf("%d cases answer another tenant's task otherwise than an unknown one, which tells that the task exists:\n"+
			"  other's task: %d %q\n  unknown task: %d %q\n  tenants: %s\n  variants: %s\n  methods: %s\n  targets (another tenant's): %s",
			counts[d], d.code, d.other, d.code, d.unknown, list(g.tenants), list(g.variants), list(g.methods), list(g.targets))
	}
}

// errorKey names one refused case of the matrix.
type errorKey struct{ tenant, variant, method, target string }

// errorAnswer is a refusal's code and message, with the request's own
// values taken out.
type errorAnswer struct {
	code    int
	message string
}

// keepErrorBody keeps the refusal of a case of the matrix.
func (m *tenantMatrix) keepErrorBody(tn *tenant, v matrixVariant, method, target string, c tenantCall, a tenantAnswer) {
	msg := a.message
	for _, e := range c.echo {
		if e != "" {
			msg = strings.ReplaceAll(msg, e, "<request>")
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errorBodies[errorKey{tn.name, v.String(), method, target}] = errorAnswer{a.code, msg}
}

// expect sends c as who and checks the code and that the answer holds no
// other owner's data.
func (m *tenantMatrix) expect(t *testing.T, who *tenant, c tenantCall, want int) tenantAnswer {
	t.Helper()
	a := m.do(t, who, c)
	m.cases.Add(1)
	if a.code != want {
		t.Errorf("%s as %s:\n  want %d, got %d (HTTP %d, %s): %s", c, who, want, a.code, a.status, a.ctype, truncateForLog(a.raw))
	}
	if a.status >= 500 {
		t.Errorf("%s as %s: HTTP %d", c, who, a.status)
	}
	if a.timedOut {
		t.Errorf("%s as %s: the stream did not end (read %d events)", c, who, len(a.events))
	}
	for _, leak := range m.leaks(who, c, a) {
		t.Errorf("%s as %s:\n  the answer leaks %s: %s", c, who, leak, truncateForLog(a.raw))
	}
	return a
}

// leaks lists the secrets of other owners in a's body; an error answer may
// repeat the request's own values.
func (m *tenantMatrix) leaks(who *tenant, c tenantCall, a tenantAnswer) []string {
	body := string(a.raw)
	if a.isError || c.echoAlways {
		for _, e := range c.echo {
			if e != "" {
				body = strings.ReplaceAll(body, e, "<request>")
			}
		}
	}
	var out []string
	for _, f := range m.fixtures {
		if f.owner == who {
			continue
		}
		for _, s := range f.secrets {
			if slices.Contains(c.mayRead, s.what) {
				continue
			}
			if strings.Contains(body, s.value) {
				out = append(out, fmt.Sprintf("%s's %s %q", f.owner.name, s.what, s.value))
			}
		}
	}
	return out
}

// call builds the raw request of method over v.
func (m *tenantMatrix) call(v matrixVariant, method string, a a2aArgs) tenantCall {
	if v.binding == a2a.TransportProtocolGRPC {
		return grpcCallOf(v, method, a)
	}
	if v.binding == a2a.TransportProtocolJSONRPC {
		c := m.rpcCall(v, a.agentPath, method, rpcParams(v, method, a))
		c.echo = a.echo()
		return c
	}
	c := tenantCall{version: v.version, stream: method == methodStream || method == methodSubscribe, echo: a.echo()}
	prefix := a.agentPath
	if v.version == "0.3" {
		prefix += "/v1"
	}
	task := prefix + "/tasks/" + url.PathEscape(a.taskID)
	configs := task + "/pushNotificationConfigs"
	switch method {
	case methodSend, methodStream:
		c.httpMethod, c.path, c.body = http.MethodPost, prefix+"/message:send", mustJSON(sendBody(v, a))
		if method == methodStream {
			c.path = prefix + "/message:stream"
		}
	case methodGet:
		c.httpMethod, c.path = http.MethodGet, task
	case methodList:
		q := url.Values{}
		if a.contextID != "" {
			q.Set("contextId", a.contextID)
		}
		if a.pageSize > 0 {
			q.Set("pageSize", fmt.Sprint(a.pageSize))
		}
		if a.pageToken != "" {
			q.Set("pageToken", a.pageToken)
		}
		c.httpMethod, c.path = http.MethodGet, prefix+"/tasks?"+q.Encode()
	case methodCancel:
		c.httpMethod, c.path, c.body = http.MethodPost, task+":cancel", "{}"
	case methodSubscribe:
		c.httpMethod, c.path, c.firstEvent = http.MethodGet, task+":subscribe", true
	case methodCreatePush:
		body := map[string]any{"id": a.push.id, "url": a.push.url, "token": a.push.token}
		if v.version == "0.3" {
			body = map[string]any{"parent": "tasks/" + a.taskID, "configId": a.push.id, "config": map[string]any{
				"name": "tasks/" + a.taskID + "/pushNotificationConfigs/" + a.push.id, "pushNotificationConfig": body}}
		}
		c.httpMethod, c.path, c.body = http.MethodPost, configs, mustJSON(body)
	case methodGetPush:
		c.httpMethod, c.path = http.MethodGet, configs+"/"+url.PathEscape(a.configID)
	case methodListPush:
		c.httpMethod, c.path = http.MethodGet, configs
	case methodDeletePush:
		c.httpMethod, c.path = http.MethodDelete, configs+"/"+url.PathEscape(a.configID)
	case methodCard:
		c.httpMethod, c.path = http.MethodGet, prefix+"/extendedAgentCard"
		if v.version == "0.3" {
			c.httpMethod, c.path = http.MethodGet, prefix+"/card"
		}
	}
	return c
}

// echo are the values of the request an error may repeat.
func (a a2aArgs) echo() []string {
	out := []string{a.taskID, a.configID, a.contextID}
	if a.message != nil {
		out = append(out, a.message.id, a.message.taskID)
	}
	if a.push != nil {
		out = append(out, a.push.id)
	}
	return out
}

// rpcCall wraps params in a JSON-RPC request of method (its 0.3 name over
// 0.3) to the agent at agentPath.
func (m *tenantMatrix) rpcCall(v matrixVariant, agentPath, method string, params any) tenantCall {
	name := method
	version := "1.0"
	if v.version == "0.3" {
		name, version = rpcMethods03[method], "" // a 0.3 client sends no A2A-Version
	}
	path := agentPath
	if path == "" {
		path = "/"
	}
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("rpc-%d", m.rpcID.Add(1)), "method": name, "params": params})
	return tenantCall{httpMethod: http.MethodPost, path: path, version: version, body: body, jsonRPC: true,
		stream: method == methodStream || method == methodSubscribe, firstEvent: method == methodSubscribe}
}

// rpcParams are the JSON-RPC params of method over v.
func rpcParams(v matrixVariant, method string, a a2aArgs) map[string]any {
	v03 := v.version == "0.3"
	switch method {
	case methodSend, methodStream:
		return sendBody(v, a)
	case methodGet, methodCancel, methodSubscribe:
		return map[string]any{"id": a.taskID}
	case methodList:
		p := map[string]any{}
		if a.contextID != "" {
			p["contextId"] = a.contextID
		}
		if a.pageSize > 0 {
			p["pageSize"] = a.pageSize
		}
		if a.pageToken != "" {
			p["pageToken"] = a.pageToken
		}
		return p
	case methodCreatePush:
		cfg := map[string]any{"id": a.push.id, "url": a.push.url, "token": a.push.token}
		if v03 {
			return map[string]any{"taskId": a.taskID, "pushNotificationConfig": cfg}
		}
		cfg["taskId"] = a.taskID
		return cfg
	case methodGetPush, methodDeletePush:
		if v03 {
			return map[string]any{"id": a.taskID, "pushNotificationConfigId": a.configID}
		}
		return map[string]any{"taskId": a.taskID, "id": a.configID}
	case methodListPush:
		if v03 {
			return map[string]any{"id": a.taskID}
		}
		return map[string]any{"taskId": a.taskID}
	}
	return map[string]any{}
}

// sendParams03 are the params (or HTTP+JSON body) of a send over v.
func sendBody(v matrixVariant, a a2aArgs) map[string]any {
	msg := a.message
	var part, m map[string]any
	switch {
	case v.version == "1.0":
		part = map[string]any{"text": msg.text}
		if msg.data != nil {
			part = map[string]any{"data": msg.data}
		}
		m = map[string]any{"messageId": msg.id, "role": "ROLE_USER", "parts": []any{part}}
	case v.binding == a2a.TransportProtocolJSONRPC:
		part = map[string]any{"kind": "text", "text": msg.text}
		if msg.data != nil {
			part = map[string]any{"kind": "data", "data": msg.data}
		}
		m = map[string]any{"kind": "message", "messageId": msg.id, "role": "user", "parts": []any{part}}
	default: // 0.3 HTTP+JSON: the 0.3 protobuf's JSON
		part = map[string]any{"text": msg.text}
		if msg.data != nil {
			part = map[string]any{"data": map[string]any{"data": msg.data}}
		}
		m = map[string]any{"messageId": msg.id, "role": "ROLE_USER", "content": []any{part}}
	}
	if msg.taskID != "" {
		m["taskId"] = msg.taskID
	}
	p := map[string]any{"message": m}
	if a.push != nil {
		cfg := map[string]any{"url": a.push.url, "token": a.push.token}
		if a.push.id != "" {
			cfg["id"] = a.push.id
		}
		switch {
		case v.version == "1.0":
			p["configuration"] = map[string]any{"taskPushNotificationConfig": cfg}
		case v.binding == a2a.TransportProtocolJSONRPC:
			p["configuration"] = map[string]any{"blocking": true, "pushNotificationConfig": cfg}
		default:
			p["configuration"] = map[string]any{"blocking": true, "pushNotification": cfg}
		}
	}
	return p
}

func restCall(method, path, body string) tenantCall {
	return tenantCall{httpMethod: method, path: path, body: body}
}

// approverCall is a REST call of an approver, who may read the approvals
// of its groups.
func approverCall(method, path, body string) tenantCall {
	c := restCall(method, path, body)
	c.mayRead = approverMayRead
	return c
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// do sends c as who and reads the whole answer (a stream until it ends,
// or its first event).
func (m *tenantMatrix) do(t *testing.T, who *tenant, c tenantCall) tenantAnswer {
	t.Helper()
	if c.grpc != nil {
		return m.doGRPC(t, who, c)
	}
	m.slots <- struct{}{}
	defer func() { <-m.slots }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.httpMethod, m.s.APIURL+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.version != "" {
		req.Header.Set("A2A-Version", c.version)
	}
	if c.stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if c.waitpointToken != "" {
		req.Header.Set("X-Waitpoint-Token", c.waitpointToken)
	}
	who.setCredential(req.Header)
	resp, err := m.http.Do(req)
	if err != nil {
		t.Fatalf("%s as %s: %v", c, who, err)
	}
	defer resp.Body.Close()
	a := tenantAnswer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	if strings.HasPrefix(a.ctype, "text/event-stream") {
		var raw bytes.Buffer
		r := bufio.NewReader(io.TeeReader(resp.Body, &raw))
		for {
			line, err := r.ReadString('\n')
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:"); ok {
				a.events = append(a.events, strings.TrimSpace(data))
				if c.firstEvent {
					break
				}
			}
			if err != nil {
				a.timedOut = errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil
				break
			}
		}
		a.raw = raw.Bytes()
	} else if a.raw, err = io.ReadAll(resp.Body); err != nil {
		t.Fatalf("%s as %s: read the answer: %v", c, who, err)
	}
	classify(c, &a)
	return a
}

// classify sets a's code from its status, body or first event.
func classify(c tenantCall, a *tenantAnswer) {
	doc := a.raw
	sse := strings.HasPrefix(a.ctype, "text/event-stream")
	if sse && len(a.events) > 0 {
		doc = []byte(a.events[0])
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	var env struct {
		Error *rpcError `json:"error"`
	}
	_ = json.Unmarshal(doc, &env)
	switch {
	case c.jsonRPC && a.status == http.StatusOK:
		if env.Error != nil {
			a.code, a.isError, a.message, a.inStream = env.Error.Code, true, env.Error.Message, sse
		}
	case a.status >= 300:
		a.code, a.isError = a.status, true
		if env.Error != nil {
			a.message = env.Error.Message
		}
	case sse && env.Error != nil:
		a.code, a.isError, a.message, a.inStream = env.Error.Code, true, env.Error.Message, true
	default:
		a.code = a.status
	}
	for i := 1; i < len(a.events); i++ {
		var later struct {
			Error *rpcError `json:"error"`
		}
		if json.Unmarshal([]byte(a.events[i]), &later) == nil && later.Error != nil {
			a.laterError = a.events[i]
		}
	}
}
