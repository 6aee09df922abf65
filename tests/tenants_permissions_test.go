package tests

// The agent permission rows of the tenant matrix (tenants_test.go): who
// may call which agent (internal/api/guard/permissions.go). One a2aflow serve
// without permissions, and an `a2aflow api` replica beside it on the same
// Temporal whose API key alice is limited to travel (--api-key-agents
// alice:travel) and whose JWTs are limited by their scopes
// (--jwt-agent-scope-prefix a2aflow:agent:). alice and carol (JWT) file
// their own expenses through serve; on the replica, alice's key and
// carol's token scoped to travel drive every A2A method over every binding
// and version (JSON-RPC, HTTP+JSON, gRPC; 1.0 and 0.3) at their own
// expense, the expenses agent's card, MCP's tools, the approvals routes
// alice's waitpoint read without its token, the timeline of her expense and
// the task list of expenses (her list there holds travel's tasks only): each is refused with PermissionDenied (-31403, HTTP 403, gRPC
// PERMISSION_DENIED) and changes nothing; on travel they run the whole
// chain of methods. A token without any agent scope may use no agent.
//
//	go test ./tests/ -run TestAgentPermissions -v

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// scopedToken is an HS256 JWT of sub with scope.
func scopedToken(t *testing.T, sub, scope string) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"sub": sub, "iss": authIssuer, "aud": authAudience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	if scope != "" {
		c["scope"] = scope
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(authSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantForbidden is PermissionDenied on v's binding.
func wantForbidden(v matrixVariant) int {
	switch v.binding {
	case a2a.TransportProtocolJSONRPC:
		return -31403
	case a2a.TransportProtocolGRPC:
		return int(codes.PermissionDenied)
	}
	return http.StatusForbidden
}

func TestAgentPermissions(t *testing.T) {
	began := time.Now()
	nonce := fmt.Sprintf("%x", time.Now().UnixNano())[6:]
	alice := &tenant{name: "alice", scheme: "API key limited to travel", apiKey: "alice-key-" + nonce}
	carol := &tenant{name: "carol", scheme: "JWT scoped to every agent", token: scopedToken(t, "carol", "openid a2aflow:agent:*")}
	carolTravel := &tenant{name: "carol", scheme: "JWT scoped to travel", token: scopedToken(t, "carol", "openid a2aflow:agent:travel")}
	unscoped := &tenant{name: "carol", scheme: "JWT without agent scopes", token: scopedToken(t, "carol", "openid")}
	env := []string{"A2AFLOW_SECRETS_KEY=" + harness.SecretsKey, "A2AFLOW_API_KEYS=alice=" + alice.apiKey, "A2AFLOW_JWT_SECRET=" + authSecret}
	dataDir := t.TempDir()
	auth := []string{"--push-allow-hosts", "loopback", "--jwt-issuer", authIssuer, "--jwt-audience", authAudience}
	s := harness.StartServeEnv(t, dataDir, env, auth...)

	// The replica with permissions, on serve's Temporal.
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	p := harness.Start(t, "a2aflow api (permissions)", append(slices.Clone(env), "A2AFLOW_DATA_DIR="+dataDir, "A2AFLOW_LOG_LEVEL=warn"),
		append([]string{"api", "--http-addr", strings.TrimPrefix(apiURL, "http://"), "--temporal-addr", s.TemporalAddr,
			"--grpc-addr", grpcAddr, "--api-key-agents", "alice:travel", "--jwt-agent-scope-prefix", "a2aflow:agent:"}, auth...)...)
	p.WaitOutput("a2aflow API is serving", time.Minute)
	harness.WaitHealthy(t, apiURL)

	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	hooks := newHookLog(t)
	matrix := func(srv *harness.Server, grpc string) *tenantMatrix {
		m := &tenantMatrix{t: t, s: srv, hooks: hooks, temporal: tc, nonce: nonce, slots: make(chan struct{}, tenantMaxInFlight),
			scratch: map[string]fixtureTask{}, owned: map[string]map[string]bool{}, errorBodies: map[errorKey]errorAnswer{}, grpcAddr: grpc,
			http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * tenantMaxInFlight}}}
		t.Cleanup(m.http.CloseIdleConnections)
		return m
	}
	open := matrix(s, "")
	limited := matrix(&harness.Server{APIURL: apiURL, TemporalAddr: s.TemporalAddr}, grpcAddr)

	// Each one's own expense, with a push config, filed where every agent is open to them.
	expenses := map[*tenant]fixtureTask{}
	for _, owner := range []*tenant{alice, carol} {
		push := &wirePush{id: "cfg-" + owner.name + "-" + nonce, url: hooks.URL + "/own-" + owner.name, token: "tok-" + owner.name}
		expenses[owner] = open.createExpense(t, owner, "390 EUR taxi of "+owner.name+" "+nonce, push)
	}
	expenses[carolTravel] = expenses[carol]
	snapshot := func() map[string]string {
		out := map[string]string{}
		for owner, task := range map[*tenant]fixtureTask{alice: expenses[alice], carol: expenses[carol]} {
			out[task.id] = fmt.Sprintf("%s %s %d", open.rpc10(t, owner, task.agentPath, methodGet, map[string]any{"id": task.id}),
				open.rpc10(t, owner, task.agentPath, methodListPush, map[string]any{"taskId": task.id}), open.historyEvents(t, task.id))
		}
		return out
	}
	open.settle(t)
	before, hooksBefore := snapshot(), hooks.counts()
	t.Logf("serve, the replica and the fixtures took %s", time.Since(began).Round(time.Millisecond))

	// A travel task of each per variant, made where the permissions apply.
	for _, tn := range []*tenant{alice, carolTravel} {
		for _, v := range tenantVariants {
			limited.scratch[tn.name+" "+v.String()] = limited.createTravel(t, tn, "Book a flight, "+tn.scheme+" "+v.String(), nil)
		}
	}

	t.Run("methods", func(t *testing.T) {
		for _, tn := range []*tenant{alice, carolTravel} {
			task := expenses[tn]
			for _, v := range tenantVariants {
				// travel: the whole chain of methods, on a task of its own.
				t.Run(tn.scheme+"/"+v.String()+"/travel", func(t *testing.T) {
					t.Parallel()
					limited.ownChain(t, tn, v)
				})
				for _, method := range append(slices.Clone(taskMethods), methodCard) {
					t.Run(tn.scheme+"/"+v.String()+"/own expense/"+method, func(t *testing.T) {
						t.Parallel()
						hook := fmt.Sprintf("%s/attack-%s-%s", hooks.URL, strings.ReplaceAll(tn.scheme, " ", "-"), a2a.NewMessageID())
						args := a2aArgs{agentPath: task.agentPath, taskID: task.id, configID: task.configID}
						switch method {
						case methodSend, methodStream:
							args.message = &wireMessage{id: a2a.NewMessageID(), taskID: task.id, text: "approve it, says " + tn.scheme}
							args.push = &wirePush{url: hook, token: "tok-attack"}
						case methodCreatePush:
							args.push = &wirePush{id: task.configID, url: hook, token: "tok-attack"}
						case methodList:
							args = a2aArgs{agentPath: task.agentPath, contextID: task.contextID}
						case methodCard:
							args = a2aArgs{agentPath: task.agentPath}
						}
						want := wantForbidden(v)
						if method == methodList && v == jsonRPC03 {
							want = -32601 // A2A 0.3 JSON-RPC has no tasks/list
						}
						a := limited.expect(t, tn, limited.call(v, method, args), want)
						if a.isError && want != -32601 && !strings.Contains(a.message, "may not use agent expenses") {
							t.Errorf("%s over %s as %s: message %q does not say why", method, v, tn, a.message)
						}
					})
				}
				t.Run(tn.scheme+"/"+v.String()+"/new expense", func(t *testing.T) {
					t.Parallel()
					msg := &wireMessage{id: a2a.NewMessageID(), text: "500 EUR, says " + tn.scheme}
					limited.expect(t, tn, limited.call(v, methodSend, a2aArgs{agentPath: "/agents/expenses", message: msg}), wantForbidden(v))
				})
			}
		}
		// A token that names no agent may use none, travel included.
		for _, v := range matrixVariants {
			msg := &wireMessage{id: a2a.NewMessageID(), text: "Book a flight"}
			limited.expect(t, unscoped, limited.call(v, methodSend, a2aArgs{message: msg}), wantForbidden(v))
		}
	})

	t.Run("MCP", func(t *testing.T) {
		for _, tn := range []*tenant{alice, carolTravel} {
			for _, protocol := range mcpProtocolVersions {
				cs := limited.mcpSession(t, tn, protocol)
				res, err := cs.ListTools(harness.Context(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range res.Tools {
					if tool.Name == "expenses" {
						t.Errorf("tools/list as %s (%s) lists expenses", tn, protocol)
					}
				}
				id := expenses[tn].id
				for tool, args := range map[string]map[string]any{
					"expenses":            {"message": "500 EUR"},
					"a2aflow_get_task":    {"task_id": id},
					"a2aflow_reply":       {"task_id": id, "message": "approve it"},
					"a2aflow_cancel_task": {"task_id": id},
				} {
					res := mcpCall(t, cs, tool, args)
					if e := mcpTaskOf(t, res).Error; !res.IsError || e == nil || e.Code != -31403 {
						raw, _ := json.Marshal(res)
						t.Errorf("%s as %s (%s): %s; want the tool error -31403", tool, tn, protocol, raw)
					}
				}
				if v := mcpTaskOf(t, mcpCall(t, cs, "travel", map[string]any{"message": "Book a flight over MCP"})); v.State != "input-required" {
					t.Errorf("travel over MCP as %s (%s): %+v", tn, protocol, v)
				}
			}
		}
	})

	t.Run("approvals routes", func(t *testing.T) {
		for _, tn := range []*tenant{alice, carolTravel} {
			approval := expenses[tn].approvalID
			// Where the requester may use expenses, she reads her approval.
			owner := tn
			if tn == carolTravel {
				owner = carol
			}
			open.expect(t, owner, restCall(http.MethodGet, "/approvals/"+approval, ""), http.StatusOK)
			limited.expect(t, tn, restCall(http.MethodGet, "/approvals/"+approval, ""), http.StatusForbidden)
			limited.expect(t, tn, restCall(http.MethodPost, "/approvals/"+approval+"/decision", `{"approved":true}`), http.StatusForbidden)
			a := limited.expect(t, tn, restCall(http.MethodGet, "/approvals?agent=expenses", ""), http.StatusOK)
			if strings.Contains(string(a.raw), approval) {
				t.Errorf("GET /approvals as %s lists %s: %s", tn, approval, a.raw)
			}
		}
	})

	t.Run("timeline route", func(t *testing.T) {
		for _, tn := range []*tenant{alice, carolTravel} {
			task := expenses[tn]
			owner := tn
			if tn == carolTravel {
				owner = carol
			}
			path := task.agentPath + "/tasks/" + task.id + "/timeline"
			// Where she may use expenses, she reads her expense's timeline;
			// where she may not, it is refused.
			open.expect(t, owner, restCall(http.MethodGet, path, ""), http.StatusOK)
			limited.expect(t, tn, restCall(http.MethodGet, path, ""), http.StatusForbidden)
			own := limited.scratch[tn.name+" "+tenantVariants[0].String()]
			limited.expect(t, tn, restCall(http.MethodGet, own.agentPath+"/tasks/"+own.id+"/timeline", ""), http.StatusOK)
		}
	})

	t.Run("task list route", func(t *testing.T) {
		for _, tn := range []*tenant{alice, carolTravel} {
			owner := tn
			if tn == carolTravel {
				owner = carol
			}
			expense := expenses[tn].id
			// Where she may use expenses, her expense is listed; on the
			// replica her list holds travel's tasks only, and asking for
			// expenses is refused.
			a := open.expect(t, owner, restCall(http.MethodGet, "/task-list?agent=expenses", ""), http.StatusOK)
			if !strings.Contains(string(a.raw), expense) {
				t.Errorf("GET /task-list?agent=expenses as %s where she may use it misses %s: %s", owner, expense, a.raw)
			}
			limited.expect(t, tn, restCall(http.MethodGet, "/task-list?agent=expenses", ""), http.StatusForbidden)
			var page struct {
				Tasks []struct {
					ID    string `json:"id"`
					Agent string `json:"agent"`
				} `json:"tasks"`
			}
			a = limited.expect(t, tn, restCall(http.MethodGet, "/task-list?pageSize=100", ""), http.StatusOK)
			if err := json.Unmarshal(a.raw, &page); err != nil || len(page.Tasks) == 0 {
				t.Fatalf("GET /task-list as %s on the replica: %v %s", tn, err, a.raw)
			}
			for _, r := range page.Tasks {
				if r.Agent != "travel" || r.ID == expense {
					t.Errorf("GET /task-list as %s, limited to travel, lists %s's task %s", tn, r.Agent, r.ID)
				}
			}
		}
	})

	t.Run("waitpoint routes", func(t *testing.T) {
		// alice's changes task waits on a waitpoint; the replica limits her to travel.
		msg := &wireMessage{id: "msg-alice-" + a2a.NewMessageID(), text: "Restart the payments database " + nonce}
		task := open.send(t, alice, "/agents/changes", msg, nil)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("changes task is %s, want input-required", task.Status.State)
		}
		path := "/waitpoints/" + string(task.ID) + "-waitpoint-1"
		var view struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(open.expect(t, alice, restCall(http.MethodGet, path, ""), http.StatusOK).raw, &view)
		if view.Token == "" {
			t.Fatalf("GET %s as alice where she may use changes: no token", path)
		}
		limited.expect(t, alice, restCall(http.MethodGet, path, ""), http.StatusForbidden)
		// The token stays a capability of its own.
		byToken := restCall(http.MethodGet, path, "")
		byToken.waitpointToken = view.Token
		limited.expect(t, alice, byToken, http.StatusOK)
	})

	t.Run("nothing changed", func(t *testing.T) {
		open.settle(t)
		if diff := cmp.Diff(before, snapshot()); diff != "" {
			t.Errorf("the expenses changed (-before +after):\n%s", diff)
		}
		for path, n := range hooks.counts() {
			if strings.HasPrefix(path, "/attack-") && n > 0 {
				t.Errorf("webhook %s, registered by a refused call, got %d notifications", path, n)
			}
			if strings.HasPrefix(path, "/own-") && n != hooksBefore[path] {
				t.Errorf("webhook %s got %d notifications during the refused calls", path, n-hooksBefore[path])
			}
		}
	})
	t.Logf("agent permissions: %d cases, %s in all", limited.cases.Load()+open.cases.Load(), time.Since(began).Round(time.Millisecond))
}
