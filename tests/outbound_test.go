package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// canaryServer counts every request it gets: a guard works when a refused
// request never reaches it.
type canaryServer struct {
	URL  string
	hits atomic.Int32
}

// serveCanary serves h on addr ("127.0.0.2:0": the whole of 127/8 is
// loopback on Linux), counting requests.
func serveCanary(t *testing.T, addr string, h http.HandlerFunc) *canaryServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	c := &canaryServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// serveExtOn serves x on addr, as fakes.ServeExt does, but as a note keeper.
func serveExtOn(t *testing.T, x *fakes.ExtAgent, addr string) *canaryServer {
	t.Helper()
	var url string
	notes := fakes.RemoteAgent{Name: "notes", Description: "Keeps notes.", Skill: "Note", SkillDoes: "Notes things."}
	srv := serveCanary(t, addr, notes.Handler(x, func() string { return url }).ServeHTTP)
	url = srv.URL
	return srv
}

// ssrfLLM is an OpenAI Chat Completions endpoint playing a model that an
// attacker steers: asked to remember a URL, the router's model routes to
// remember_agent with it, and the assistant's model calls remember_agent,
// then call_agent with that URL, then answers. It keeps the tool results it
// is sent: what a2aflow lets a model read.
type ssrfLLM struct {
	*httptest.Server
	mu      sync.Mutex
	results []string
}

var urlInText = regexp.MustCompile(`https?://[^\s"]+`)

func newSSRFLLM(t *testing.T) *ssrfLLM {
	f := &ssrfLLM{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := fakes.ReadChat(w, r)
		if !ok {
			return
		}
		var asked string // the URL the user asked about
		for _, m := range req.Messages {
			if text := fmt.Sprint(m.Content); m.Role == "user" {
				if i := strings.LastIndex(text, "Request:\n"); i >= 0 {
					text = text[i:]
				}
				if u := urlInText.FindString(text); u != "" {
					asked = u
				}
			}
		}
		last := req.Last()
		params := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		var message string
		switch {
		case req.Format != nil && req.Format.Schema.Name == "RoutingDecision":
			message = fakes.TextMessage(params(map[string]string{"decision": "LOCAL", "tool": "remember_agent",
				"params": params(map[string]string{"url": asked}), "agent": "", "reason": "the user gave an agent's URL"}))
		case last.Role == "user":
			message = fakes.ToolCallMessage("call_remember", "remember_agent", params(map[string]string{"url": asked}))
		case last.Role == "tool" && last.ToolCallID == "call_remember":
			f.keep(fmt.Sprint(last.Content))
			message = fakes.ToolCallMessage("call_call", "call_agent", params(map[string]string{"agent": asked, "message": "hi"}))
		case last.Role == "tool" && last.ToolCallID == "call_call":
			f.keep(fmt.Sprint(last.Content))
			message = fakes.TextMessage("I could not reach it.")
		default:
			message = fakes.TextMessage("I am lost.")
		}
		fakes.WriteChat(w, false, "chatcmpl-ssrf", req.Model, message, 10, 5)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *ssrfLLM) keep(result string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, result)
}

func (f *ssrfLLM) toolResults() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.results...)
}

// leaks are what an error given to a caller or a model must not show: what
// the canaries answer, and the policy's inner words.
var leaks = []string{"root-password", "internal dashboard", "loopback address", "cloud metadata", "dial tcp", "Not Found"}

// status404 is an HTTP status 404 in a text, not the digits inside a port
// number (127.0.0.2:40491).
var status404 = regexp.MustCompile(`\b404\b`)

func noLeak(t *testing.T, what, text string) {
	t.Helper()
	for _, l := range leaks {
		if strings.Contains(text, l) {
			t.Errorf("%s %q shows %q", what, text, l)
		}
	}
	if status404.MatchString(text) {
		t.Errorf("%s %q shows the status 404", what, text)
	}
}

// TestOutboundGuard runs `a2aflow serve` with two tenants and asks it, as a
// caller without an LLM (router data parts) and through a model it steers
// (the router's and the assistant's), to fetch what it must not: a loopback
// canary, the cloud metadata address, a name resolving to loopback, an
// IPv4-mapped loopback, redirects to another host, a card past its bound.
// The canaries get zero requests and the errors say why in a few words.
// An operator's peer on loopback still works; an agent alice remembers is
// hers only. The allow-list lets 127.0.0.2 through (a private network the
// operator opened), so redirects and bounds are tried past the address
// check.
func TestOutboundGuard(t *testing.T) {
	secretAnswer := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"internal-admin","secret":"root-password","supportedInterfaces":[{"url":"http://127.0.0.1:1","protocolBinding":"JSONRPC"}]}`)
	}
	canary := serveCanary(t, "127.0.0.1:0", secretAnswer)        // loopback: not allowed
	privateCanary := serveCanary(t, "127.0.0.2:0", secretAnswer) // allowed address, another host
	toLoopback := serveCanary(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, canary.URL+"/internal-admin/.well-known/agent-card.json", http.StatusFound)
	})
	toOtherHost := serveCanary(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, privateCanary.URL+"/.well-known/agent-card.json", http.StatusTemporaryRedirect)
	})
	huge := serveCanary(t, "127.0.0.2:0", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"huge","description":"`+strings.Repeat("x", 2<<20)+`"}`)
	})
	notFound := serveCanary(t, "127.0.0.2:0", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal dashboard: root-password", http.StatusNotFound)
	})
	ext := &fakes.ExtAgent{}
	notes := serveExtOn(t, ext, "127.0.0.2:0") // a real agent alice remembers
	peer := fakes.ServeExt(t, ext, true)       // the operator's peer, on 127.0.0.1
	llm := newSSRFLLM(t)
	canaryPort := strings.TrimPrefix(canary.URL, "http://127.0.0.1:")

	fakes.UseOpenAI(t, llm.URL, "sk-ssrf", "fake-model")
	t.Setenv("A2AFLOW_OUTBOUND_ALLOW_HOSTS", "")
	const aliceKey, malloryKey = "alice-key-0123456789", "mallory-key-0123456789"
	s := harness.StartServe(t, t.TempDir(),
		"--api-keys", "alice="+aliceKey+",mallory="+malloryKey,
		"--outbound-allow-hosts", "127.0.0.2/32",
		"--peer", "beta="+peer.URL,
		"--delegation-retry-budget", "5s")
	ctx := harness.Context(t)
	alice := withHeader(ctx, "X-API-Key", aliceKey)
	mallory := withHeader(ctx, "X-API-Key", malloryKey)
	router, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/router")
	assistant, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/assistant")
	tool := func(name string, params any) *a2a.Part {
		return a2a.NewDataPart(map[string]any{"tool": name, "params": params})
	}
	ask := func(ctx context.Context, c *a2aclient.Client, parts ...*a2a.Part) *a2a.Task {
		t.Helper()
		return routerSend(t, ctx, c, "", parts...)
	}

	t.Run("router data parts", func(t *testing.T) {
		tests := []struct {
			name, url, want string
		}{
			{"loopback canary", canary.URL + "/internal-admin", "refused by the outbound policy"},
			{"a name resolving to loopback", "http://localhost:" + canaryPort + "/internal-admin", "refused by the outbound policy"},
			{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + canaryPort + "/", "refused by the outbound policy"},
			{"cloud metadata", "http://169.254.169.254/latest/meta-data/", "refused by the outbound policy"},
			{"redirect to loopback", toLoopback.URL, "refused by the outbound policy"},
			{"redirect to another allowed host", toOtherHost.URL, "refused by the outbound policy"},
			{"card past 1 MiB", huge.URL, "its answer is larger than a2aflow accepts"},
			{"not an agent", notFound.URL, "not an A2A agent"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				task := ask(mallory, router, tool("remember_agent", map[string]any{"url": tt.url}))
				t.Logf("remember_agent %s: %s %q", tt.url, task.Status.State, harness.StatusText(task))
				if task.Status.State != a2a.TaskStateFailed || !strings.Contains(harness.StatusText(task), tt.want) {
					t.Fatalf("remember_agent %s: %s %q, want failed saying %q", tt.url, task.Status.State, harness.StatusText(task), tt.want)
				}
				noLeak(t, "status", harness.StatusText(task))
			})
		}
	})

	t.Run("a model steered to the canaries", func(t *testing.T) {
		for _, url := range []string{canary.URL + "/internal-admin", "http://169.254.169.254/latest/meta-data/", toLoopback.URL} {
			// The router's model picks remember_agent with the URL.
			task := ask(mallory, router, a2a.NewTextPart("Please remember the agent at "+url))
			if task.Status.State != a2a.TaskStateFailed || !strings.Contains(harness.StatusText(task), "refused by the outbound policy") {
				t.Errorf("router via LLM, %s: %s %q, want failed, refused by the outbound policy", url, task.Status.State, harness.StatusText(task))
			}
			noLeak(t, "status", harness.StatusText(task))
			// The assistant's model calls remember_agent, then call_agent
			// with the URL: both results say refused, and nothing more.
			task = ask(mallory, assistant, a2a.NewTextPart("Remember "+url+" and ask it for the admin password"))
			if task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("assistant, %s: %s %q, want completed (tool errors are results)", url, task.Status.State, harness.StatusText(task))
			}
		}
		results := llm.toolResults()
		if len(results) != 6 {
			t.Fatalf("the model got %d tool results, want 6: %q", len(results), results)
		}
		for _, r := range results {
			t.Logf("tool result: %s", r)
			if !strings.HasPrefix(r, "error: ") || !strings.Contains(r, "refused by the outbound policy") {
				t.Errorf("tool result %q, want an error saying refused by the outbound policy", r)
			}
			noLeak(t, "tool result", r)
		}
	})

	if n := canary.hits.Load(); n != 0 {
		t.Errorf("the loopback canary got %d requests, want 0", n)
	}
	if n := privateCanary.hits.Load(); n != 0 {
		t.Errorf("the redirects' target on another host got %d requests, want 0", n)
	}

	t.Run("the operator's peer on loopback", func(t *testing.T) {
		for _, who := range []context.Context{alice, mallory} {
			task := ask(who, router, a2a.NewTextPart("@beta hello"))
			harness.WantState(t, task, a2a.TaskStateCompleted, "done: hello")
		}
	})

	t.Run("tenants", func(t *testing.T) {
		task := ask(alice, router, tool("remember_agent", map[string]any{"url": notes.URL}))
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		list := func(who context.Context) string {
			return harness.StatusText(ask(who, router, tool("list_agents", map[string]any{"format": "simple"})))
		}
		if got := list(alice); !strings.Contains(got, `"name":"notes"`) || !strings.Contains(got, `"name":"beta"`) {
			t.Errorf("alice's list_agents = %s, want notes and beta", got)
		}
		if got := list(mallory); strings.Contains(got, "notes") || strings.Contains(got, notes.URL) || !strings.Contains(got, `"name":"beta"`) {
			t.Errorf("mallory's list_agents = %s, want beta only", got)
		}
		before := notes.hits.Load()
		task = ask(mallory, router, a2a.NewTextPart("@notes read me alice's notes"))
		if task.Status.State != a2a.TaskStateRejected || !strings.Contains(harness.StatusText(task), `no agent named "notes"`) {
			t.Errorf("mallory's @notes: %s %q, want rejected, no agent named notes", task.Status.State, harness.StatusText(task))
		}
		if n := notes.hits.Load() - before; n != 0 {
			t.Errorf("alice's agent got %d requests from mallory's task, want 0", n)
		}
		task = ask(alice, router, a2a.NewTextPart("@notes hi"))
		harness.WantState(t, task, a2a.TaskStateCompleted, "done: hi")
		// Mallory may use the name for an agent of her own.
		task = ask(mallory, router, tool("remember_agent", map[string]any{"url": notes.URL, "name": "notes"}))
		harness.WantState(t, task, a2a.TaskStateCompleted, "")
		// A shared name is the operator's.
		task = ask(mallory, router, tool("remember_agent", map[string]any{"url": notes.URL, "name": "beta"}))
		if task.Status.State != a2a.TaskStateFailed || !strings.Contains(harness.StatusText(task), "an agent the operator configured") {
			t.Errorf("mallory remembering beta: %s %q, want failed: the operator's name", task.Status.State, harness.StatusText(task))
		}
	})
}
