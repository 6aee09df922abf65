package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// openTask is the one task streamTemporal knows: working until finish.
const openTask = "open-task"

// streamTemporal is a fake Temporal holding one working task whose events
// the test adds; streams on it stay open until the task ends. The embedded
// nil Client panics on any other call.
type streamTemporal struct {
	client.Client
	mu     sync.Mutex
	events []wire.Event
}

func (*streamTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

func (f *streamTemporal) QueryWorkflowWithOptions(_ context.Context, req *client.QueryWorkflowWithOptionsRequest) (*client.QueryWorkflowWithOptionsResponse, error) {
	if req.WorkflowID != openTask || req.QueryType != wire.QueryEvents || len(req.Args) != 1 {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	in := req.Args[0].(wire.EventsInput)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := wire.EventsOutput{Last: int64(len(f.events))}
	for _, e := range f.events {
		if e.Seq > in.After {
			out.Events = append(out.Events, e)
		}
	}
	if in.WithTask {
		state := a2a.TaskStateWorking
		if len(f.events) > 0 {
			state = f.events[len(f.events)-1].Status.Status.State
		}
		out.Task = &wire.TaskSnapshot{Task: &a2a.Task{ID: openTask, ContextID: "ctx-1", Status: a2a.TaskStatus{State: state}}, EventSeq: out.Last}
	}
	return &client.QueryWorkflowWithOptionsResponse{QueryResult: fuzzValue{out}}, nil
}

// finish ends the task with a completed status event.
func (f *streamTemporal) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, wire.Event{Seq: int64(len(f.events) + 1), Status: &a2a.TaskStatusUpdateEvent{
		TaskID: openTask, ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}})
}

// limitsServer serves the API over streamTemporal with limits and, when
// keys is set, API keys, on a real HTTP server whose write and read
// timeouts are writeTimeout (0: none).
func limitsServer(t *testing.T, limits guard.Limits, keys map[string]string, writeTimeout time.Duration) (*httptest.Server, *streamTemporal) {
	t.Helper()
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(&workflows.Agent{Name: "echo", Handle: handle})
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PollInterval: 20 * time.Millisecond, Limits: limits}
	if keys != nil {
		if cfg.Auth, err = guard.NewAuthenticator(context.Background(), guard.AuthConfig{APIKeys: keys}); err != nil {
			t.Fatal(err)
		}
	}
	fake := &streamTemporal{}
	srv := httptest.NewUnstartedServer(api.New(fake, reg, cfg).Handler())
	srv.Config.WriteTimeout, srv.Config.ReadTimeout = writeTimeout, writeTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, fake
}

// call is one request of the tests; body "" sends none.
type call struct {
	method, path, body string
	header             map[string]string
}

func (c call) do(t *testing.T, base string) *http.Response {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// answer is what the tests compare of a response: status, Retry-After and
// the error's code (JSON-RPC code or google.rpc.Status code name).
type answer struct {
	Status     int
	RetryAfter string
	Error      string
}

func readAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	var doc struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &doc) == nil && len(doc.Error) > 0 {
		var e struct {
			Code   any    `json:"code"`
			Status string `json:"status"`
		}
		if json.Unmarshal(doc.Error, &e) == nil {
			if e.Status != "" {
				a.Error = e.Status
			} else {
				a.Error = fmt.Sprint(e.Code)
			}
		} else {
			a.Error = "text"
		}
	}
	return a
}

var (
	// extendedCard is a JSON-RPC request served without Temporal.
	extendedCard = call{method: http.MethodPost, path: "/agents/echo", body: `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`}
	// listAgents is a plain GET served without Temporal.
	listAgents = call{method: http.MethodGet, path: "/agents"}
	// extendedCardREST is the HTTP+JSON GetExtendedAgentCard: not public,
	// served without Temporal.
	extendedCardREST = call{method: http.MethodGet, path: "/agents/echo/extendedAgentCard"}
)

func with(c call, header map[string]string) call {
	c.header = header
	return c
}

// TestAllowedHosts: a Host header naming a host not in AllowedHosts gets
// 421 in the shape of the route; listed names (on any port, or on theirs),
// IP addresses, and any host without a list are served.
func TestAllowedHosts(t *testing.T) {
	listed := []string{"agents.example.com", "api.example.com:8443"}
	misdirectedRPC := answer{Status: 421, Error: "-31421"}
	misdirectedREST := answer{Status: 421, Error: "FAILED_PRECONDITION"}
	tests := []struct {
		name  string
		hosts []string
		host  string
		req   call
		want  answer
	}{
		{"listed name", listed, "agents.example.com", listAgents, answer{Status: 200}},
		{"listed name, any port, any case", listed, "Agents.Example.COM:8080", listAgents, answer{Status: 200}},
		{"listed name:port", listed, "api.example.com:8443", listAgents, answer{Status: 200}},
		{"listed name, other port", listed, "api.example.com:9999", listAgents, misdirectedREST},
		{"rebinding name, HTTP+JSON", listed, "attacker.example:8080", listAgents, misdirectedREST},
		{"rebinding name, JSON-RPC", listed, "attacker.example", extendedCard, misdirectedRPC},
		{"rebinding name, card", listed, "attacker.example", call{method: http.MethodGet, path: "/.well-known/agent-card.json"}, misdirectedREST},
		{"localhost is a name", listed, "localhost:8080", listAgents, misdirectedREST},
		{"IPv4 address", listed, "127.0.0.1:8080", listAgents, answer{Status: 200}},
		{"IPv6 address", listed, "[::1]:8080", listAgents, answer{Status: 200}},
		{"no list: any name", nil, "attacker.example", listAgents, answer{Status: 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := limitsServer(t, guard.Limits{AllowedHosts: tt.hosts}, nil, 0)
			got := readAnswer(t, with(tt.req, map[string]string{"Host": tt.host}).do(t, srv.URL))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Host %q (-want +got):\n%s", tt.host, diff)
			}
		})
	}
}

// TestDecisionNeedsJSON: a decision is refused with 415 unless its
// Content-Type is application/json, which no cross-site form can send.
func TestDecisionNeedsJSON(t *testing.T) {
	tests := []struct {
		contentType string
		refused     bool
	}{
		{"application/json", false},
		{"application/json; charset=utf-8", false},
		{"", true},
		{"application/x-www-form-urlencoded", true},
		{"text/plain", true},
		{"multipart/form-data; boundary=x", true},
		{"application/jsonx", true},
	}
	srv, _ := limitsServer(t, guard.Limits{}, nil, 0)
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/approvals/no-such-approval/decision", strings.NewReader(`{"approved": true}`))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct{ Error string }
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if refused := resp.StatusCode == http.StatusUnsupportedMediaType; refused != tt.refused {
				t.Errorf("status %d (%q), want refused=%v", resp.StatusCode, body.Error, tt.refused)
			}
			if tt.refused && !strings.Contains(body.Error, "application/json") {
				t.Errorf("415 body error %q does not say to send application/json", body.Error)
			}
		})
	}
}

// TestRateLimit: a client over its token bucket gets 429 with Retry-After,
// as a JSON-RPC error or a google.rpc.Status; clients are their principals
// (their IP without one), requests refused authentication count against
// their IP without locking out valid credentials from it, and /healthz is
// never limited.
func TestRateLimit(t *testing.T) {
	limits := guard.Limits{RatePerSecond: 0.2, RateBurst: 2} // 2 at once, then one per 5 s
	keys := map[string]string{"alice": "k-alice", "bob": "k-bob"}
	alice, bob, wrong := map[string]string{"X-API-Key": "k-alice"}, map[string]string{"X-API-Key": "k-bob"}, map[string]string{"X-API-Key": "k-wrong"}
	ok, limitedRPC, limitedREST := answer{Status: 200}, answer{Status: 429, RetryAfter: "5", Error: "-31429"}, answer{Status: 429, RetryAfter: "5", Error: "RESOURCE_EXHAUSTED"}
	unauthorized := answer{Status: 401, Error: "UNAUTHENTICATED"}
	tests := []struct {
		name  string
		keys  map[string]string
		calls []call
		want  []answer
	}{
		{"JSON-RPC, by IP", nil,
			[]call{extendedCard, extendedCard, extendedCard},
			[]answer{ok, ok, limitedRPC}},
		{"HTTP+JSON, by IP", nil,
			[]call{listAgents, listAgents, listAgents},
			[]answer{ok, ok, limitedREST}},
		{"health never limited", nil,
			[]call{{method: http.MethodGet, path: "/healthz"}, {method: http.MethodGet, path: "/healthz"}, {method: http.MethodGet, path: "/healthz"}},
			[]answer{ok, ok, ok}},
		{"by principal", keys,
			[]call{with(listAgents, alice), with(listAgents, alice), with(listAgents, alice), with(listAgents, bob)},
			[]answer{ok, ok, limitedREST, ok}},
		{"refused credentials by IP", keys,
			[]call{with(extendedCardREST, wrong), with(extendedCardREST, wrong), with(extendedCardREST, wrong), with(extendedCardREST, alice)},
			[]answer{unauthorized, unauthorized, limitedREST, ok}},
		{"refused credentials, JSON-RPC", keys,
			[]call{with(extendedCard, wrong), with(extendedCard, wrong), with(extendedCard, wrong)},
			[]answer{{Status: 401, Error: "-31401"}, {Status: 401, Error: "-31401"}, limitedRPC}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := limitsServer(t, limits, tt.keys, 0)
			var got []answer
			for _, c := range tt.calls {
				a := readAnswer(t, c.do(t, srv.URL))
				if a.Status == 200 {
					a.Error = "" // the card's -32007 and the like are not the point
				}
				got = append(got, a)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

// stream is an open SSE response.
type stream struct {
	resp   *http.Response
	events chan string
}

// openSSE sends c and, when it is answered with a stream, reads its data
// lines in the background.
func openSSE(t *testing.T, base string, c call) (*stream, answer) {
	t.Helper()
	resp := c.do(t, base)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return nil, readAnswer(t, resp)
	}
	s := &stream{resp: resp, events: make(chan string, 16)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				s.events <- strings.TrimSpace(data)
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return s, answer{Status: resp.StatusCode}
}

// next waits for the stream's next event.
func (s *stream) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(timeout):
		t.Fatalf("no event within %s", timeout)
		return ""
	}
}

var (
	subscribeRPC  = call{method: http.MethodPost, path: "/agents/echo", body: `{"jsonrpc":"2.0","id":"sub-7","method":"SubscribeToTask","params":{"id":"` + openTask + `"}}`}
	subscribeREST = call{method: http.MethodGet, path: "/agents/echo/tasks/" + openTask + ":subscribe"}
	subscribeV03  = call{method: http.MethodPost, path: "/agents/echo", body: `{"jsonrpc":"2.0","id":8,"method":"tasks/resubscribe","params":{"id":"` + openTask + `"}}`,
		header: map[string]string{"A2A-Version": "0.3"}}
)

// TestStreamCap: a client with MaxStreamsPerPrincipal streams open gets 429
// with Retry-After for another (a JSON-RPC error with the request's id, or
// a google.rpc.Status), can open one again once one closes, and does not
// use up another principal's streams.
func TestStreamCap(t *testing.T) {
	alice, bob := map[string]string{"X-API-Key": "k-alice"}, map[string]string{"X-API-Key": "k-bob"}
	tests := []struct {
		name      string
		keys      map[string]string
		open      []call // opened and kept open
		over      call   // refused
		wantOver  answer
		wantRPCID any
		other     call // then served
	}{
		{"JSON-RPC, by IP", nil, []call{subscribeRPC, subscribeREST}, subscribeRPC, answer{Status: 429, RetryAfter: "5", Error: "-31429"}, "sub-7", subscribeREST},
		{"HTTP+JSON, by IP", nil, []call{subscribeRPC, subscribeV03}, subscribeREST, answer{Status: 429, RetryAfter: "5", Error: "RESOURCE_EXHAUSTED"}, nil, subscribeRPC},
		{"0.3, by IP", nil, []call{subscribeRPC, subscribeREST}, subscribeV03, answer{Status: 429, RetryAfter: "5", Error: "-31429"}, 8.0, subscribeV03},
		{"by principal", map[string]string{"alice": "k-alice", "bob": "k-bob"},
			[]call{with(subscribeRPC, alice), with(subscribeREST, alice)}, with(subscribeREST, alice),
			answer{Status: 429, RetryAfter: "5", Error: "RESOURCE_EXHAUSTED"}, nil, with(subscribeREST, bob)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := limitsServer(t, guard.Limits{MaxStreamsPerPrincipal: 2}, tt.keys, 0)
			var open []*stream
			for _, c := range tt.open {
				s, a := openSSE(t, srv.URL, c)
				if s == nil {
					t.Fatalf("opening a stream under the cap: %+v", a)
				}
				s.next(t, 5*time.Second) // the task: the stream is live
				open = append(open, s)
			}
			resp := tt.over.do(t, srv.URL)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got := readAnswer(t, &http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(raw))})
			if diff := cmp.Diff(tt.wantOver, got); diff != "" {
				t.Errorf("a stream over the cap (-want +got):\n%s\nbody %s", diff, raw)
			}
			if tt.wantRPCID != nil {
				var doc struct{ ID any }
				_ = json.Unmarshal(raw, &doc)
				if doc.ID != tt.wantRPCID {
					t.Errorf("JSON-RPC id of the refusal = %v, want the request's %v", doc.ID, tt.wantRPCID)
				}
			}
			if tt.keys == nil {
				// Closing a stream gives its slot back.
				open[0].resp.Body.Close()
				waitFor(t, func() bool {
					s, _ := openSSE(t, srv.URL, tt.other)
					if s == nil {
						return false
					}
					s.resp.Body.Close()
					return true
				})
				return
			}
			if s, a := openSSE(t, srv.URL, tt.other); s == nil {
				t.Errorf("another principal's stream: %+v, want it served", a)
			}
		})
	}
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}

// TestStreamOutlivesWriteTimeout: on a server whose write and read timeouts
// are 200 ms, a stream stays open for several times that and delivers the
// event that comes then, on every binding.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, c := range []struct {
		name string
		call call
	}{{"JSON-RPC", subscribeRPC}, {"HTTP+JSON", subscribeREST}, {"0.3 JSON-RPC", subscribeV03}} {
		t.Run(c.name, func(t *testing.T) {
			srv, fake := limitsServer(t, guard.Limits{}, nil, timeout)
			s, a := openSSE(t, srv.URL, c.call)
			if s == nil {
				t.Fatalf("subscribe: %+v", a)
			}
			s.next(t, 5*time.Second)
			time.Sleep(5 * timeout)
			fake.finish()
			if e := s.next(t, 5*time.Second); !strings.Contains(e, "COMPLETED") && !strings.Contains(e, "completed") {
				t.Errorf("event after %s: %s, want the completed status", 5*timeout, e)
			}
			// And a plain request on the same server is served as usual.
			if got := readAnswer(t, listAgents.do(t, srv.URL)); got.Status != http.StatusOK {
				t.Errorf("GET /agents: %+v", got)
			}
		})
	}
}
