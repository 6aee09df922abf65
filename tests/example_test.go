package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestExampleApprovalPipeline builds examples/approval-pipeline (a program of
// its own module on the a2aflow package) and runs it as its README does:
// `po serve` with its quotes agent as a peer, the supplier an HTTP server
// (here in this process). A purchase order is raised over A2A, a missing
// field answered, the server killed (kill -9) while the order waits for the
// manager, approved by the manager (REST) and finance (the program's own
// `approve`), and killed again while the supplier takes the order but before
// its answer comes back. The task completes with the purchase order; the
// supplier has exactly one order; the quote came from the quotes agent's
// task; the task's history replays against the program (`po replay`).
func TestExampleApprovalPipeline(t *testing.T) {
	began := time.Now()
	program := buildExampleProgram(t)
	t.Logf("built the example in %s", time.Since(began).Round(100*time.Millisecond))
	began = time.Now()
	defer func() { t.Logf("ran the example in %s", time.Since(began).Round(100*time.Millisecond)) }()
	supplier := &exampleSupplier{hangFirst: true, taken: make(chan string, 10)}
	supplierSrv := httptest.NewServer(supplier)
	t.Cleanup(supplierSrv.Close)
	model := newExampleBuyerLLM(t)

	s := startExampleServe(t, program, supplierSrv.URL, "OPENAI_BASE_URL="+model.URL+"/v1", "OPENAI_API_KEY=sk-test")
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.apiURL)
	if card.Name != "purchase-order" {
		t.Fatalf("default agent %q, want purchase-order", card.Name)
	}
	exampleRejected(t, ctx, c, supplier)
	exampleOrdered(t, ctx, c, s, supplier, program)
	exampleBuyer(t, ctx, s, supplier, program)
}

// exampleRejected: an order under the threshold waits for the manager alone,
// who rejects it with an A2A message (a decision data part); nothing is
// ordered.
func exampleRejected(t *testing.T, ctx context.Context, c *a2aclient.Client, supplier *exampleSupplier) {
	t.Helper()
	task := harness.Send(t, ctx, c, "", "Order 2 keyboards for CC-4100")
	managerStep := exampleApprovalID(t, task)
	number := "PO-" + strings.ToUpper(strings.ReplaceAll(string(task.ID), "-", "")[:8])
	// The decision as an A2A message with a data part, as any A2A client can send it.
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": managerStep, "approved": false, "comment": "Not this quarter"}))
	msg.TaskID = task.ID
	if _, err := c.SendMessage(withHeader(ctx, "X-Approver", "maria"), &a2a.SendMessageRequest{Message: msg}); err != nil {
		t.Fatal(err)
	}
	got := waitState(t, ctx, c, task.ID, a2a.TaskStateRejected)
	if want := number + " rejected by maria (managers): Not this quarter."; harness.StatusText(got) != want {
		t.Errorf("rejection %q, want %q", harness.StatusText(got), want)
	}
	po := examplePurchaseOrder(t, got)
	if approvals, _ := po["approvals"].([]any); po["status"] != "rejected" || po["order"] != nil || len(approvals) != 1 {
		t.Errorf("purchase order %v, want rejected after one approval step, not ordered", po)
	}
	if n := supplier.requestsFor(string(task.ID) + "/place-order"); n != 0 {
		t.Errorf("the supplier got %d requests for a rejected purchase order", n)
	}
}

// exampleOrdered: an order over the threshold, a field asked for, kill -9
// while it waits for the manager, the manager (REST) then finance (`po
// approve`), kill -9 while the supplier takes the order; completed, ordered
// once, quoted by the quotes agent, replayable.
func exampleOrdered(t *testing.T, ctx context.Context, c *a2aclient.Client, s *exampleServe, supplier *exampleSupplier, program string) {
	t.Helper()
	task := harness.Send(t, ctx, c, "", "Order 3 standing desks")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "Which cost centre pays? (e.g. CC-4100)")
	task = harness.Send(t, ctx, c, task.ID, "marketing")
	harness.WantState(t, task, a2a.TaskStateInputRequired, `"marketing" is not a cost centre like CC-4100. Which cost centre pays? (e.g. CC-4100)`)
	task = harness.Send(t, ctx, c, task.ID, "CC-4100")
	managerStep := exampleApprovalID(t, task)
	if managerStep != string(task.ID)+"-approval-1" {
		t.Fatalf("approval %s, want the task's first", managerStep)
	}
	number := "PO-" + strings.ToUpper(strings.ReplaceAll(string(task.ID), "-", "")[:8])
	harness.WantState(t, task, a2a.TaskStateInputRequired,
		fmt.Sprintf(`Waiting for approval: "Purchase order %s: 3 x Standing desk, 1560.00 EUR, CC-4100" by managers.`, number))

	// kill -9 while the order waits for the manager.
	s.kill()
	s.start(t)
	c, _ = harness.NewClient(t, ctx, s.apiURL)
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, got, a2a.TaskStateInputRequired, harness.StatusText(task))
	var view map[string]any
	if code := getJSON(t, s.apiURL+"/approvals/"+managerStep, &view); code != http.StatusOK || view["state"] != "pending" {
		t.Fatalf("after the restart GET /approvals/%s = %d %v, want pending", managerStep, code, view)
	}

	// Finance may not decide the manager's step, nor may someone in no group.
	decision := map[string]any{"approved": true, "comment": "Needed for the new team"}
	decide := func(id, approver string) int {
		return postJSON(t, s.apiURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": approver}, decision, nil)
	}
	if code := decide(managerStep, "frank"); code != http.StatusConflict {
		t.Errorf("finance deciding the manager's step: HTTP %d, want 409", code)
	}
	if code := decide(managerStep, "eve"); code != http.StatusForbidden {
		t.Errorf("a non-approver deciding: HTTP %d, want 403", code)
	}
	if code := decide(managerStep, "maria"); code != http.StatusOK {
		t.Fatalf("maria (managers) approving: HTTP %d", code)
	}
	financeStep := string(task.ID) + "-approval-2"
	waitFor(t, 20*time.Second, func() bool {
		var v map[string]any
		return getJSON(t, s.apiURL+"/approvals/"+financeStep, &v) == http.StatusOK && v["state"] == "pending"
	})
	// Finance decides with the program's own client verb.
	out, err := exec.Command(program, "approve", financeStep, "--api", s.apiURL, "--as", "frank", "--comment", "Within budget").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "approved") {
		t.Fatalf("po approve: %v\n%s", err, out)
	}

	// The supplier takes the order but its answer never arrives: kill -9
	// meanwhile. Temporal retries the activity after its start-to-close
	// timeout (10 s), with the same idempotency key.
	key := string(task.ID) + "/place-order"
	select {
	case k := <-supplier.taken:
		if k != key {
			t.Fatalf("the supplier got key %q, want %q", k, key)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the supplier got no order within 30 s of the approvals")
	}
	s.kill()
	s.start(t)
	c, _ = harness.NewClient(t, ctx, s.apiURL)
	waitFor(t, 45*time.Second, func() bool {
		got, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State.Terminal()
	})
	harness.WantState(t, got, a2a.TaskStateCompleted, "")
	if want := number + " ordered: 3 x Standing desk for 1560.00 EUR, supplier order SUP-000001. Approved by maria (managers) and frank (finance)."; harness.StatusText(got) != want {
		t.Errorf("final message %q, want %q", harness.StatusText(got), want)
	}

	// Exactly one order at the supplier, for all its requests.
	orders := supplier.ordersFor(key)
	if len(orders) != 1 || len(supplier.allOrders()) != 1 {
		t.Fatalf("supplier orders %v, want exactly one", supplier.allOrders())
	}
	if n := supplier.requestsFor(key); n < 2 {
		t.Errorf("the supplier got %d requests with the key, want the lost one and its retry", n)
	}

	// The purchase order artifact.
	po := examplePurchaseOrder(t, got)
	quote, _ := po["quote"].(map[string]any)
	quoteTask, _ := quote["taskId"].(string)
	quoteID, _ := quote["quoteId"].(string)
	approvals, _ := po["approvals"].([]any)
	for _, a := range approvals {
		if a, ok := a.(map[string]any); ok {
			delete(a, "time") // when the decision came
		}
	}
	if o, ok := po["order"].(map[string]any); ok {
		delete(o, "received") // the supplier's clock
	}
	validUntil, _ := time.Parse(time.DateOnly, fmt.Sprint(quote["validUntil"]))
	if days := time.Until(validUntil).Hours() / 24; days < 28 || days > 31 {
		t.Errorf("quote valid until %v, want in 30 days", quote["validUntil"])
	}
	delete(quote, "validUntil")
	want := map[string]any{
		"number": number, "status": "ordered", "item": "standing desks", "quantity": float64(3), "costCentre": "CC-4100",
		"quote": map[string]any{
			"agent": "quotes", "taskId": quoteTask, "quoteId": quoteID, "sku": "DESK-STAND", "description": "Standing desk",
			"quantity": float64(3), "unitPrice": float64(520), "currency": "EUR", "total": float64(1560),
		},
		"approvals": []any{
			map[string]any{"step": "manager", "group": "managers", "approvalId": managerStep, "approved": true, "approver": "maria", "comment": "Needed for the new team", "via": "rest"},
			map[string]any{"step": "finance", "group": "finance", "approvalId": financeStep, "approved": true, "approver": "frank", "comment": "Within budget", "via": "cli"},
		},
		"order": map[string]any{"orderId": "SUP-000001", "status": "accepted", "idempotencyKey": key},
	}
	if diff := cmp.Diff(want, po); diff != "" {
		t.Errorf("purchase-order artifact (-want +got):\n%s", diff)
	}
	if o := orders[0]; o["reference"] != number || o["sku"] != "DESK-STAND" || o["quantity"] != float64(3) || o["quoteId"] != quoteID {
		t.Errorf("the supplier's order %v does not match the purchase order", o)
	}

	// The quote came from the quotes agent: its task, delegated to.
	dels, _ := got.Metadata["a2aflow.delegations"].([]any)
	if d, _ := exampleFirst(dels).(map[string]any); len(dels) != 1 || d["agent"] != "quotes" || d["taskId"] != quoteTask || d["state"] != string(a2a.TaskStateCompleted) {
		t.Errorf("delegations %v, want one to quotes, task %s", got.Metadata["a2aflow.delegations"], quoteTask)
	}
	qc, _ := harness.NewClient(t, ctx, s.apiURL+"/agents/quotes")
	qt, err := qc.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(quoteTask)})
	if err != nil {
		t.Fatalf("the quotes agent's task %s: %v", quoteTask, err)
	}
	if qt.Status.State != a2a.TaskStateCompleted || len(qt.Artifacts) != 1 || qt.Artifacts[0].Name != "quote" {
		t.Fatalf("quotes task %s %q with %d artifacts, want completed with a quote", qt.Status.State, harness.StatusText(qt), len(qt.Artifacts))
	}
	if q, _ := qt.Artifacts[0].Parts[0].Data().(map[string]any); q["quoteId"] != quoteID || q["total"] != float64(1560) {
		t.Errorf("the quotes agent's quote %v, want %s for 1560", q, quoteID)
	}

	// The task's history, kills and all, replays against the program.
	out, err = exec.Command(program, "replay", "--task", string(task.ID), "--temporal-addr", s.temporalAddr, "--data-dir", s.dataDir).CombinedOutput()
	if err != nil {
		t.Errorf("po replay --task %s: %v\n%s", task.ID, err, out)
	}
}

// exampleBuyer: the buyer, an LLM agent with Go tools of its own served by
// a2aflow.Main, on a model speaking OpenAI's wire: it gets a quote from the
// quotes agent (over A2A) and calls place_order for 3 desks, 1,560 EUR,
// which waits for a manager. kill -9 while it waits; the manager approves 2
// desks with the program's own CLI (--arguments); kill -9 while the
// supplier takes the order. The supplier has one order, of 2 desks, under
// the approved call's key; the model read its confirmation; the history
// replays against the program.
func exampleBuyer(t *testing.T, ctx context.Context, s *exampleServe, supplier *exampleSupplier, program string) {
	t.Helper()
	bc, card := harness.NewClient(t, ctx, s.apiURL+"/agents/buyer")
	if card.Name != "buyer" {
		t.Fatalf("agent card %q, want buyer", card.Name)
	}
	task := harness.Send(t, ctx, bc, "", "3 standing desks for CC-4100, please")
	approval := exampleApprovalID(t, task)
	var view struct {
		State   string `json:"state"`
		Request struct {
			Title  string         `json:"title"`
			Groups []string       `json:"groups"`
			Action map[string]any `json:"action"`
		} `json:"request"`
	}
	if code := getJSON(t, s.apiURL+"/approvals/"+approval, &view); code != http.StatusOK || view.State != "pending" ||
		view.Request.Action["tool"] != "place_order" || len(view.Request.Groups) != 1 || view.Request.Groups[0] != "managers" {
		t.Fatalf("GET /approvals/%s = %d %+v, want place_order pending for managers", approval, code, view)
	}
	if args, _ := view.Request.Action["arguments"].(map[string]any); args["sku"] != "DESK-STAND" || args["quantity"] != float64(3) {
		t.Errorf("the manager sees the arguments %v, want the model's 3 x DESK-STAND", view.Request.Action["arguments"])
	}
	if n := len(supplier.allOrders()); n != 1 {
		t.Fatalf("the supplier has %d orders before the approval, want the purchase order's one", n)
	}

	// kill -9 while the call waits for the manager.
	s.kill()
	s.start(t)
	supplier.mu.Lock()
	supplier.hangFirst = true // the order taken, its answer lost
	supplier.mu.Unlock()
	out, err := exec.Command(program, "approve", approval, "--api", s.apiURL, "--as", "maria",
		"--arguments", `{"sku": "DESK-STAND", "quantity": 2, "costCentre": "CC-4100"}`, "--comment", "two will do").CombinedOutput()
	if err != nil {
		t.Fatalf("po approve --arguments: %v\n%s", err, out)
	}
	var key string
	select {
	case key = <-supplier.taken:
	case <-time.After(30 * time.Second):
		t.Fatal("the supplier got no order within 30 s of the approval")
	}
	if !strings.Contains(key, approval) {
		t.Errorf("the order's key %q does not name the approved call %s", key, approval)
	}
	// kill -9 while the supplier takes the order: the call is tried again
	// after its 10 s start-to-close timeout, with the same key.
	s.kill()
	s.start(t)
	bc, _ = harness.NewClient(t, ctx, s.apiURL+"/agents/buyer")
	var got *a2a.Task
	waitFor(t, 45*time.Second, func() bool {
		got, err = bc.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State.Terminal()
	})
	harness.WantState(t, got, a2a.TaskStateCompleted, "")
	if orders := supplier.ordersFor(key); len(orders) != 1 || orders[0]["quantity"] != float64(2) || orders[0]["sku"] != "DESK-STAND" ||
		len(supplier.allOrders()) != 2 || supplier.requestsFor(key) < 2 {
		t.Errorf("the supplier took %v (%d requests with the key), want one more order, of 2 desks, sent again after the kill", supplier.allOrders(), supplier.requestsFor(key))
	}
	if text := harness.StatusText(got); !strings.Contains(text, "SUP-000002") {
		t.Errorf("the buyer answered %q, want the supplier's order SUP-000002", text)
	}
	out, err = exec.Command(program, "replay", "--task", string(task.ID), "--temporal-addr", s.temporalAddr, "--data-dir", s.dataDir).CombinedOutput()
	if err != nil {
		t.Errorf("po replay --task %s (the buyer's): %v\n%s", task.ID, err, out)
	}
}

// newExampleBuyerLLM is a model on OpenAI's chat completions wire that buys
// for the example's buyer: asked for something, it quotes 3 standing desks
// (get_quote); shown the quote, it orders it on CC-4100 (place_order); shown
// the order's result, it answers with it.
func newExampleBuyerLLM(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"not a chat completion"}}`, http.StatusBadRequest)
			return
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results = append(results, fmt.Sprint(m.Content))
			}
		}
		msg := map[string]any{"role": "assistant", "refusal": nil}
		call := func(name string, args any) {
			raw, _ := json.Marshal(args)
			msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", len(results)), "type": "function",
				"function": map[string]any{"name": name, "arguments": string(raw)}}}
		}
		switch len(results) {
		case 0:
			msg["content"] = "Let me get a quote."
			call("get_quote", map[string]any{"item": "standing desk", "quantity": 3})
		case 1:
			var q struct {
				SKU      string  `json:"sku"`
				Quantity int     `json:"quantity"`
				QuoteID  string  `json:"quoteId"`
				Total    float64 `json:"total"`
			}
			_ = json.Unmarshal([]byte(results[0]), &q)
			msg["content"] = fmt.Sprintf("The quote is %.2f EUR; ordering.", q.Total)
			call("place_order", map[string]any{"sku": q.SKU, "quantity": q.Quantity, "costCentre": "CC-4100", "quoteId": q.QuoteID})
		default:
			msg["content"] = "Ordered: " + results[len(results)-1]
		}
		finish := "stop"
		if msg["tool_calls"] != nil {
			finish = "tool_calls"
		}
		body, _ := json.Marshal(msg)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-buyer","object":"chat.completion","created":1700000000,"model":%q,
			"choices":[{"index":0,"finish_reason":%q,"logprobs":null,"message":%s}],
			"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`, req.Model, finish, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// exampleDir is the example program's module, next to this one.
var exampleDir = filepath.Join("..", "examples", "approval-pipeline")

// buildExampleProgram builds examples/approval-pipeline, a module of its own
// (replace => ../..), into a temporary directory. It builds with a copy of
// the example's go.mod that the go command may complete (-mod=mod), so that
// a dependency added to a2aflow's go.mod does not stop this test:
// TestExampleModuleTidy is the one that asks for `go mod tidy` there.
func buildExampleProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(exampleDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "po")
	cmd := exec.Command("go", "build", "-modfile", filepath.Join(dir, "go.mod"), "-mod=mod", "-o", out, ".")
	cmd.Dir = exampleDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build examples/approval-pipeline: %v\n%s", err, b)
	}
	return out
}

// TestExampleModuleTidy: the example's go.mod and go.sum list what a2aflow
// needs, so they must follow a2aflow's go.mod; otherwise `go run .` in the
// example fails with "updates to go.mod needed".
func TestExampleModuleTidy(t *testing.T) {
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	cmd.Dir = exampleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("examples/approval-pipeline is not tidy after a change of a2aflow's go.mod: run `go mod tidy` there and commit its go.mod and go.sum (%v)\n%s", err, out)
	}
}

// exampleServe is the example program's `serve` on fresh ports and a data
// dir of its own, started again on the same ones after a kill.
type exampleServe struct {
	program                       string
	apiURL, temporalAddr, dataDir string
	args, env                     []string
	current                       *harness.Proc
}

func startExampleServe(t *testing.T, program, supplierURL string, env ...string) *exampleServe {
	t.Helper()
	s := &exampleServe{
		program:      program,
		apiURL:       fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t)),
		temporalAddr: fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)),
		dataDir:      t.TempDir(),
		env:          append([]string{"SUPPLIER_URL=" + supplierURL}, env...),
	}
	s.args = []string{"serve",
		"--http-addr", strings.TrimPrefix(s.apiURL, "http://"),
		"--temporal-addr", s.temporalAddr,
		"--ui-addr", "",
		"--data-dir", s.dataDir,
		"--log-level", "warn",
		// The quotes agent of the same program, reached over A2A like any peer.
		"--peer", "quotes=" + s.apiURL + "/agents/quotes",
		"--approver-groups", "maria:managers;frank:finance",
	}
	s.start(t)
	return s
}

func (s *exampleServe) start(t *testing.T) {
	t.Helper()
	s.current = harness.StartProgram(t, s.program, "po serve", s.env, s.args...)
	s.current.WaitOutput("a2aflow is serving", 2*time.Minute)
	harness.WaitHealthy(t, s.apiURL)
}

// kill is kill -9 of the running serve.
func (s *exampleServe) kill() { s.current.Kill() }

// exampleApprovalID is the approval ID in the status message of a task
// waiting for an approval.
func exampleApprovalID(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		t.Fatalf("task %s %q, want waiting for an approval", task.Status.State, harness.StatusText(task))
	}
	for _, p := range task.Status.Message.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if id, _ := data["approvalId"].(string); id != "" {
				return id
			}
		}
	}
	t.Fatalf("status %q has no approvalId data part", harness.StatusText(task))
	return ""
}

// examplePurchaseOrder is the purchase-order artifact of a task, as JSON.
func examplePurchaseOrder(t *testing.T, task *a2a.Task) map[string]any {
	t.Helper()
	if len(task.Artifacts) != 1 || task.Artifacts[0].Name != "purchase-order" || len(task.Artifacts[0].Parts) != 1 {
		raw, _ := json.Marshal(task.Artifacts)
		t.Fatalf("artifacts %s, want one purchase-order", raw)
	}
	data, ok := task.Artifacts[0].Parts[0].Data().(map[string]any)
	if !ok {
		t.Fatalf("purchase-order part %#v is not JSON data", task.Artifacts[0].Parts[0])
	}
	return data
}

// exampleSupplier is the supplier's ordering API as the example's
// fake-supplier serves it: POST /orders deduplicated by Idempotency-Key.
// With hangFirst, the first request takes the order, reports its key on
// taken and then never answers (until the caller goes away): an answer lost.
type exampleSupplier struct {
	hangFirst bool
	taken     chan string

	mu       sync.Mutex
	orders   []map[string]any // with "key"
	byKey    map[string]int
	requests map[string]int
}

func (x *exampleSupplier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/orders" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	var order map[string]any
	if key == "" || json.NewDecoder(r.Body).Decode(&order) != nil {
		http.Error(w, `{"error":"an order needs an Idempotency-Key and a JSON body"}`, http.StatusBadRequest)
		return
	}
	x.mu.Lock()
	if x.byKey == nil {
		x.byKey, x.requests = map[string]int{}, map[string]int{}
	}
	x.requests[key]++
	i, seen := x.byKey[key]
	if !seen {
		i = len(x.orders)
		order["key"] = key
		x.orders = append(x.orders, order)
		x.byKey[key] = i
	}
	hang := x.hangFirst && !seen
	x.hangFirst = x.hangFirst && seen
	x.mu.Unlock()
	if hang {
		x.taken <- key
		select { // the caller is killed meanwhile
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !seen {
		w.WriteHeader(http.StatusCreated)
	}
	fmt.Fprintf(w, `{"orderId": "SUP-%06d", "status": "accepted", "idempotencyKey": %q, "received": %q}`, i+1, key, time.Now().UTC().Format(time.RFC3339))
}

func exampleFirst(list []any) any {
	if len(list) == 0 {
		return nil
	}
	return list[0]
}

func (x *exampleSupplier) ordersFor(key string) []map[string]any {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []map[string]any
	for _, o := range x.orders {
		if o["key"] == key {
			out = append(out, o)
		}
	}
	return out
}

func (x *exampleSupplier) allOrders() []map[string]any {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]map[string]any(nil), x.orders...)
}

func (x *exampleSupplier) requestsFor(key string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.requests[key]
}
