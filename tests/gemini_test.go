package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/llmtest"
	"github.com/a2aflow/a2aflow/internal/mcptest"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// geminiKey is the API key the test gives a2aflow for the fake Gemini.
const geminiKey = "AIza-e2e-gemini-0123456789"

// fakeGemini speaks Gemini's REST wire format (generateContent, and
// streamGenerateContent with alt=sse) as the payables model of
// TestGatedToolCalls does on OpenAI's and Anthropic's: told "pay INVOICE
// AMOUNT", it calls pay_invoice; shown the function's response, it answers
// "done: " and the result; told anything else, it answers in words,
// streamed one by one.
type fakeGemini struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	keys  []string
}

func newFakeGemini(t *testing.T) *fakeGemini {
	f := &fakeGemini{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.keys = append(f.keys, r.Header.Get("X-Goog-Api-Key"))
		f.mu.Unlock()
		model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
		if !ok || (method != "generateContent" && method != "streamGenerateContent") {
			http.Error(w, `{"error":{"code":404,"message":"no such method","status":"NOT_FOUND"}}`, http.StatusNotFound)
			return
		}
		var req struct {
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text             string `json:"text"`
					FunctionResponse *struct {
						Name     string         `json:"name"`
						Response map[string]any `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Contents) == 0 {
			http.Error(w, `{"error":{"code":400,"message":"bad request","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		last := req.Contents[len(req.Contents)-1]
		var userText, result string
		isTool := false
		for _, p := range last.Parts {
			userText += p.Text
			if fr := p.FunctionResponse; fr != nil {
				isTool = true
				result += fmt.Sprint(fr.Response["output"]) + fmt.Sprint(fr.Response["error"])
				result = strings.ReplaceAll(result, "<nil>", "")
			}
		}
		sc := llmtest.Script{Model: model + "-001", InputTokens: 100, OutputTokens: 20, Gap: 30 * time.Millisecond}
		text, call := decide(userText, result, isTool)
		if !isTool && call == nil && userText != "" && !payRequest.MatchString(userText) {
			text = "Gemini streams this answer word by word."
		}
		sc.Pieces = strings.SplitAfter(text, " ")
		if call != nil {
			args, _ := json.Marshal(call)
			sc.ToolCalls = []llmtest.ToolCall{{Name: "pay_invoice", Arguments: string(args)}}
		}
		if method == "streamGenerateContent" {
			llmtest.WriteGemini(w, sc)
			return
		}
		llmtest.WriteGeminiJSON(w, sc)
	}))
	t.Cleanup(f.Close)
	return f
}

// TestGeminiAgent runs a config-file agent with provider = "gemini" (Google's
// Go SDK against a fake Gemini speaking its REST wire format) beside the
// OpenAI and Anthropic ones of TestGatedToolCalls: it answers, its answer
// streaming into the live answer (streamGenerateContent) before the final
// message; it calls a gated MCP tool, which waits for finance's approval
// and runs once approved; and each task reports its tokens and its cost by
// the [[llm-prices]] of provider gemini.
func TestGeminiAgent(t *testing.T) {
	model := newFakeGemini(t)
	payments := &mcptest.Payments{Ledger: filepath.Join(t.TempDir(), "ledger")}
	mcpSrv := httptest.NewServer(payments.Handler())
	t.Cleanup(mcpSrv.Close)
	config := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`
[[mcp-servers]]
name = "payments"
url = %q

[[llm-prices]]
provider = "gemini"
model = "gemini-2.5-flash*"
input = 1.5
output = 5

[[agents]]
name = "payables-gemini"
system-prompt = "You pay the invoices the user names."
provider = "gemini"
model = "gemini-2.5-flash"
mcp-servers = ["payments"]

[[agents.tool-approvals]]
tool = "pay_invoice"
when = "amount > 1000"
groups = ["finance"]
`, mcpSrv.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GEMINI_API_KEY=" + geminiKey, "GOOGLE_GEMINI_BASE_URL=" + model.URL, "GOOGLE_API_KEY=",
		"OPENAI_BASE_URL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "A2AFLOW_LLM_PROVIDER=", "A2AFLOW_LLM_MODEL="}
	s := harness.StartServeEnv(t, t.TempDir(), env, "--config", config, "--approver-groups", "fiona:finance")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/payables-gemini")

	// It answers, streaming.
	const answer = "Gemini streams this answer word by word."
	r := harness.StreamLive(t, ctx, c, "Tell me about streaming", 0)
	if r.State != a2a.TaskStateCompleted || r.Final != answer || r.Text != answer || r.BeforeFinal < 2 {
		t.Fatalf("the streamed answer: %s %q, live %q in %d chunks before the final message", r.State, r.Final, r.Text, r.BeforeFinal)
	}

	// A gated tool call: approved, it runs once.
	pay := harness.Send(t, ctx, c, "", "pay INV-G 1500")
	id := pendingApproval(t, pay)
	if code := postJSON(t, s.APIURL+"/approvals/"+id+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true}, nil); code != 200 {
		t.Fatalf("decision: HTTP %d", code)
	}
	paid := waitState(t, ctx, c, pay.ID, a2a.TaskStateCompleted)
	if got := harness.StatusText(paid); !strings.HasPrefix(got, "done: paid invoice INV-G: 1500.00 EUR") {
		t.Fatalf("the payment: the model answered %q", got)
	}
	ledger, _ := os.ReadFile(payments.Ledger)
	if n := strings.Count(string(ledger), `"INV-G"`); n != 1 {
		t.Errorf("the MCP server paid INV-G %d times, want once:\n%s", n, ledger)
	}

	// Tokens and cost: two calls of 100 + 20 tokens at 1.5 and 5 USD per
	// million.
	var usage struct {
		InputTokens  int64   `json:"inputTokens"`
		OutputTokens int64   `json:"outputTokens"`
		Calls        int     `json:"calls"`
		CostUSD      float64 `json:"costUSD"`
	}
	raw, _ := json.Marshal(paid.Metadata["a2aflow.llmUsage"])
	if err := json.Unmarshal(raw, &usage); err != nil || usage.Calls != 2 || usage.InputTokens != 200 || usage.OutputTokens != 40 ||
		fmt.Sprintf("%.6f", usage.CostUSD) != "0.000500" {
		t.Errorf("the task's usage: %s, want 2 calls, 200 and 40 tokens, 0.0005 USD", raw)
	}

	model.mu.Lock()
	defer model.mu.Unlock()
	paths := strings.Join(model.paths, " ")
	if !strings.Contains(paths, "/v1beta/models/gemini-2.5-flash:streamGenerateContent") {
		t.Errorf("the model was called at %v, want streamGenerateContent", model.paths)
	}
	for _, k := range model.keys {
		if k != geminiKey {
			t.Errorf("a call carried the key %q, want the configured one", k)
		}
	}
	if strings.Contains(s.Proc().Out.String(), geminiKey) {
		t.Errorf("the server's output holds the Gemini key")
	}
}
