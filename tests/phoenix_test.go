package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/chromedp/chromedp"

	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// phoenixVenv is the virtual environment .ci/run makes for Arize Phoenix
// (tests/phoenix/requirements.txt).
const phoenixVenv = "phoenix/.venv"

// phoenix is an Arize Phoenix server the test started on loopback.
type phoenix struct {
	url  string // its web UI and REST API
	otlp string // its OTLP/HTTP endpoint's base
}

// startPhoenix starts `phoenix serve` from tests/phoenix/.venv on free
// loopback ports, with its SQLite database in a temporary folder and its
// own telemetry off, and waits for it to answer. Without the venv it
// skips, but fails in CI, where .ci/run must have made it.
func startPhoenix(t *testing.T) *phoenix {
	t.Helper()
	exe, err := filepath.Abs(filepath.Join(phoenixVenv, "bin", "phoenix"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(exe); err != nil {
		const how = "python3 -m venv tests/phoenix/.venv && tests/phoenix/.venv/bin/pip install -r tests/phoenix/requirements.txt (.ci/run does)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("Arize Phoenix is missing: %s", how)
		}
		t.Skipf("Arize Phoenix is missing; install it with: %s", how)
	}
	httpPort, grpcPort := freePort(t), freePort(t)
	cmd := exec.Command(exe, "serve")
	cmd.Env = append(os.Environ(), "PHOENIX_WORKING_DIR="+t.TempDir(), "PHOENIX_HOST=127.0.0.1",
		"PHOENIX_PORT="+httpPort, "PHOENIX_GRPC_PORT="+grpcPort, "PHOENIX_TELEMETRY_ENABLED=false")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &phoenix{url: "http://127.0.0.1:" + httpPort, otlp: "http://127.0.0.1:" + httpPort}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Phoenix did not answer within 2 minutes:\n%s", out.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// freePort is a loopback port free now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// phoenixSpan is a span as Phoenix's REST API (GET
// /v1/projects/{project}/spans) answers it: with the OpenInference kind
// and attributes Phoenix derived from the GenAI conventions' gen_ai.*.
type phoenixSpan struct {
	Name    string `json:"name"`
	Kind    string `json:"span_kind"`
	Parent  string `json:"parent_id"`
	Context struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"context"`
	Status     string         `json:"status_code"`
	Attributes map[string]any `json:"attributes"`
}

// attr is the span's attribute key (dotted) as a string.
func (s phoenixSpan) attr(key string) string {
	if v, ok := s.Attributes[key]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

// spans reads every span of project from Phoenix.
func (p *phoenix) spans(t *testing.T, project string) []phoenixSpan {
	t.Helper()
	var all []phoenixSpan
	cursor := ""
	for {
		url := p.url + "/v1/projects/" + project + "/spans?limit=1000"
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Data []phoenixSpan `json:"data"`
			Next string        `json:"next_cursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil // no span arrived yet: no project
		}
		if err != nil {
			t.Fatalf("Phoenix spans: %s: %v", resp.Status, err)
		}
		all = append(all, page.Data...)
		if page.Next == "" {
			return all
		}
		cursor = page.Next
	}
}

// TestPhoenixShowsAgentRuns runs a2aflow with its traces going to a real
// Arize Phoenix (from PyPI, tests/phoenix/requirements.txt) on loopback,
// runs the travel agent (no model), the assistant (a fake OpenAI model that
// asks the user with ask_user and uses the calculator) and a gated tool
// call (the payables agent's pay_invoice above 1,000, approved over REST),
// and reads back through Phoenix's own REST API that each is an agent run
// (AGENT span "invoke_agent AGENT", the A2A context as its session) with
// its model calls (LLM spans with the model and token counts) and tool
// calls (TOOL spans, the gated one saying how it was decided) as its
// children, every one of a task's turns in the task's trace. With
// A2AFLOW_SCREENSHOTS=1 it writes Phoenix's view of the assistant's trace
// to docs/phoenix-trace.png.
func TestPhoenixShowsAgentRuns(t *testing.T) {
	ph := startPhoenix(t)
	const project = "a2aflow-e2e"
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ph.otlp)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	// Phoenix files spans under the project their resource names.
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name="+project)

	// One OpenAI endpoint, two fake models: the assistant's (fake-model)
	// and the payables agent's (pay-model), told apart by the model asked.
	assistantModel, toolModel := newFakeOpenAI(t), newFakeToolLLM(t)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if strings.Contains(string(raw), `"pay-model"`) {
			toolModel.Config.Handler.ServeHTTP(w, r)
			return
		}
		assistantModel.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(model.Close)
	payments := &mcptest.Payments{Ledger: filepath.Join(t.TempDir(), "ledger")}
	mcpSrv := httptest.NewServer(payments.Handler())
	t.Cleanup(mcpSrv.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`
[[mcp-servers]]
name = "payments"
url = %q

[[agents]]
name = "payables"
system-prompt = "You pay the invoices the user names."
provider = "openai"
model = "pay-model"
mcp-servers = ["payments"]

[[agents.tool-approvals]]
tool = "pay_invoice"
when = "amount > 1000"
groups = ["finance"]
`, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	fakes.UseOpenAI(t, model.URL, fakes.OpenAIKey, "fake-model")
	s := harness.StartServe(t, t.TempDir(), "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	began := time.Now()

	// The travel agent: three questions, no model.
	travel, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/travel")
	trip := harness.Send(t, ctx, travel, "", "Book a flight")
	for _, answer := range []string{"Lisbon", "2026-12-24", "2"} {
		trip = harness.Send(t, ctx, travel, trip.ID, answer)
	}
	harness.WantState(t, trip, a2a.TaskStateCompleted, "")

	// The assistant: asks the city (a turn that ends input-required), then
	// computes and answers (the next turn).
	assistant, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
	chat := harness.Send(t, ctx, assistant, "", "What is 6*7 in my city?")
	harness.WantState(t, chat, a2a.TaskStateInputRequired, "Which city are you in?")
	chat = harness.Send(t, ctx, assistant, chat.ID, "Lisbon")
	harness.WantState(t, chat, a2a.TaskStateCompleted, "")

	// The gated tool: the payment waits on finance's approval.
	payables, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables")
	pay := harness.Send(t, ctx, payables, "", "pay INV-9 1500")
	id := pendingApproval(t, pay)
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true}, nil); code != 200 {
		t.Fatalf("decision: HTTP %d", code)
	}
	paid := waitState(t, ctx, payables, pay.ID, a2a.TaskStateCompleted)
	if got := harness.StatusText(paid); !strings.HasPrefix(got, "done: paid invoice INV-9") {
		t.Fatalf("the payment: %q", got)
	}

	// What Phoenix shows.
	want := func(spans []phoenixSpan) []string {
		var missing []string
		byID := map[string]phoenixSpan{}
		for _, sp := range spans {
			byID[sp.Context.SpanID] = sp
		}
		find := func(desc string, ok func(phoenixSpan) bool) *phoenixSpan {
			for _, sp := range spans {
				if ok(sp) {
					return &sp
				}
			}
			missing = append(missing, desc)
			return nil
		}
		parentOf := func(sp *phoenixSpan) phoenixSpan { return byID[sp.Parent] }
		agentRun := func(agent, task string) func(phoenixSpan) bool {
			return func(sp phoenixSpan) bool {
				return sp.Kind == "AGENT" && sp.Name == "invoke_agent "+agent && sp.attr("a2a.task.id") == task &&
					sp.attr("session.id") != "" && sp.attr("gen_ai.agent.name") == agent
			}
		}
		find("travel's agent run", agentRun("travel", string(trip.ID)))
		runs := 0
		for _, sp := range spans {
			if agentRun("assistant", string(chat.ID))(sp) {
				runs++
			}
		}
		if runs != 2 {
			missing = append(missing, fmt.Sprintf("the assistant's two turns (found %d)", runs))
		}
		llm := find("the assistant's model call with its tokens", func(sp phoenixSpan) bool {
			return sp.Kind == "LLM" && sp.Name == "chat fake-model" && sp.attr("llm.model_name") == "fake-model" &&
				sp.attr("llm.token_count.prompt") == "100" && sp.attr("llm.token_count.completion") == "20" &&
				sp.attr("llm.provider") == "openai" && sp.attr("a2a.task.id") == string(chat.ID)
		})
		if llm != nil && !agentRun("assistant", string(chat.ID))(parentOf(llm)) {
			missing = append(missing, "the model call as a child of the assistant's run")
		}
		calc := find("the assistant's calculator call", func(sp phoenixSpan) bool {
			return sp.Kind == "TOOL" && sp.Name == "execute_tool calculator" && sp.attr("tool.name") == "calculator" &&
				sp.attr("a2aflow.tool.gated") == "false"
		})
		if calc != nil && !agentRun("assistant", string(chat.ID))(parentOf(calc)) {
			missing = append(missing, "the calculator call as a child of the assistant's run")
		}
		if llm != nil && calc != nil && llm.Context.TraceID != calc.Context.TraceID {
			missing = append(missing, "both turns of the assistant's task in one trace")
		}
		gated := find("the gated pay_invoice call, approved", func(sp phoenixSpan) bool {
			return sp.Kind == "TOOL" && sp.Name == "execute_tool pay_invoice" && sp.attr("a2aflow.tool.gated") == "true" &&
				sp.attr("a2aflow.tool.decision") == "approved" && sp.attr("a2aflow.tool.approval_id") == id &&
				sp.attr("gen_ai.tool.type") == "extension" && sp.attr("tool.id") != ""
		})
		if gated != nil && !agentRun("payables", string(pay.ID))(parentOf(gated)) {
			missing = append(missing, "the gated call as a child of the payables agent's run")
		}
		find("the payables agent's model call", func(sp phoenixSpan) bool {
			return sp.Kind == "LLM" && sp.attr("llm.model_name") == "pay-model" && sp.attr("a2a.task.id") == string(pay.ID)
		})
		find("the MCP call", func(sp phoenixSpan) bool {
			return sp.Name == "tools/call pay_invoice" && sp.attr("mcp.method.name") == "tools/call"
		})
		return missing
	}
	deadline := time.Now().Add(time.Minute)
	var spans []phoenixSpan
	for {
		spans = ph.spans(t, project)
		missing := want(spans)
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var names []string
			for _, sp := range spans {
				if sp.Kind != "UNKNOWN" {
					names = append(names, sp.Kind+" "+sp.Name)
				}
			}
			t.Fatalf("Phoenix lacks %v; its GenAI spans: %v", missing, names)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("Phoenix holds %d spans of the runs, %s after they started", len(spans), time.Since(began).Round(time.Millisecond))

	if os.Getenv("A2AFLOW_SCREENSHOTS") == "1" {
		phoenixScreenshot(t, ph, project, string(chat.ID), spans)
	}
}

// phoenixScreenshot writes Phoenix's trace view of the assistant's task to
// docs/phoenix-trace.png.
func phoenixScreenshot(t *testing.T, ph *phoenix, project, taskID string, spans []phoenixSpan) {
	exe := chromium(t)
	var traceID string
	for _, sp := range spans {
		if sp.Kind == "LLM" && sp.attr("a2a.task.id") == taskID {
			traceID = sp.Context.TraceID
		}
	}
	resp, err := http.Get(ph.url + "/v1/projects/" + project)
	if err != nil {
		t.Fatal(err)
	}
	var proj struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&proj)
	resp.Body.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	page, cancel := context.WithTimeout(browser, time.Minute)
	defer cancel()
	url := ph.url + "/projects/" + proj.Data.ID + "/traces/" + traceID
	if err := chromedp.Do(page, chromedp.Navigate(url), chromedp.WaitVisible(`body`), chromedp.Sleep(4*time.Second)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	png, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot of %s: %v", url, err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "phoenix-trace.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
