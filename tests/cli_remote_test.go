package tests

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aflow/a2aflow/tests/fakes"
)

// serveExtAs serves x as an agent that speaks one A2A variant only: a
// binding (JSON-RPC or HTTP+JSON) in protocol 1.0 (a2a-go's a2asrv) or 0.3
// (a2a-go's a2acompat/a2av0 server). Its card is in that version's own
// form: a 0.3 card has url, preferredTransport and protocolVersion "0.3.0"
// and no supportedInterfaces, as a 0.3 SDK writes it. It records the
// binding and A2A-Version header of every request but the card's.
func serveExtAs(t *testing.T, x *fakes.ExtAgent, v matrixVariant) (*httptest.Server, *wireLog) {
	t.Helper()
	var endpoint http.Handler
	handler := a2asrv.NewHandler(x)
	switch v {
	case jsonRPC10:
		endpoint = a2asrv.NewJSONRPCHandler(handler)
	case httpJSON10:
		endpoint = a2asrv.NewRESTHandler(handler)
	case jsonRPC03:
		endpoint = a2av0.NewJSONRPCHandler(handler)
	case httpJSON03:
		endpoint = a2av0.NewRESTHandler(handler)
	default:
		t.Fatalf("no server for %s", v)
	}
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, _ *http.Request) {
		skills := []map[string]any{{"id": "greet", "name": "Greet", "description": "Greets you by name.", "tags": []string{"greeting"}}}
		card := map[string]any{
			"name": "ext", "version": "1.0.0", "description": "Greets people by name.",
			"capabilities":      map[string]any{"streaming": true},
			"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
			"skills": skills,
		}
		if v.version == "0.3" {
			card["url"], card["preferredTransport"], card["protocolVersion"] = srv.URL, string(v.binding), "0.3.0"
		} else {
			card["supportedInterfaces"] = []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL, v.binding)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	})
	// The same wire record as the clients' in TestGoClients, from the
	// server's side: JSON-RPC posts to the endpoint itself.
	rec := &wireRecorder{endpoint: ""}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.note(r)
		endpoint.ServeHTTP(w, r)
	}))
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &rec.wireLog
}

// streamedTask matches the first event `send --stream` prints.
var streamedTask = regexp.MustCompile(`\[task\] (\S+) \(context `)

// TestCLIClientAnyAgent runs the client CLI against agents that are not
// a2aflow, each speaking one variant (JSON-RPC or HTTP+JSON, A2A 1.0 or
// 0.3): the CLI reads the card, picks the one interface offered and runs a
// question-and-answer task to completion, streamed and not, then get,
// cancel and the A2A errors, all in that variant only.
func TestCLIClientAnyAgent(t *testing.T) {
	for _, v := range matrixVariants {
		t.Run(v.String(), func(t *testing.T) {
			x := &fakes.ExtAgent{}
			srv, wire := serveExtAs(t, x, v)
			agent := srv.URL

			wantRun(t, runCLI(t, "card", agent), 0, "ext", "Streaming: true", string(v.binding))

			r := runCLI(t, "send", "--agent", agent, "ask")
			wantRun(t, r, 2, "input-required", "The agent needs input: What is your name?")
			id, contextID := taskIDOf(t, r)
			r = runCLI(t, "send", "--agent", agent, "--task", id, "Ada")
			wantRun(t, r, 0, "completed", "Agent: Greeted Ada", "Artifact greeting: Hello, Ada")
			if gotID, gotContext := taskIDOf(t, r); gotID != id || gotContext != contextID {
				t.Errorf("the answer went to task %s/%s, want %s/%s", gotID, gotContext, id, contextID)
			}
			wantRun(t, runCLI(t, "get", "--agent", agent, id), 0, "completed", "Greeted Ada")

			r = runCLI(t, "send", "--agent", agent, "--stream", "ask")
			wantRun(t, r, 2, "What is your name?")
			m := streamedTask.FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("no task in the stream:\n%s", r.stdout)
			}
			streamed := m[1]
			wantRun(t, runCLI(t, "send", "--agent", agent, "--stream", "--task", streamed, "Grace"), 0, "Greeted Grace")

			r = runCLI(t, "send", "--agent", agent, "ask")
			waiting, _ := taskIDOf(t, r)
			wantRun(t, runCLI(t, "cancel", "--agent", agent, waiting), 0, "canceled")
			if !x.WasCanceled(a2a.TaskID(waiting)) {
				t.Errorf("the agent saw no cancel of %s", waiting)
			}

			wantRun(t, runCLI(t, "get", "--agent", agent, "no-such-task"), 4, "task not found")
			wantRun(t, runCLI(t, "send", "--agent", agent, "--task", id, "again"), 4)

			want := []string{string(v.binding) + " " + v.version}
			if got := wire.list(); !slices.Equal(got, want) {
				t.Errorf("the agent was spoken to in %v, want only %v", got, want)
			}
			if n := len(x.Started("")); n != 3 {
				t.Errorf("the agent started %d tasks, want 3", n)
			}
		})
	}
}
