package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// rpcResponse is a JSON-RPC 2.0 response as it travels on the wire.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpc posts body to url with A2A-Version 1.0 and decodes the JSON-RPC answer.
func rpc(t testing.TB, url, body string) (int, rpcResponse) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out rpcResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST %s %s: answer %d %q is not JSON-RPC: %v", url, body, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out
}

// tasksInEachState makes, on s, a travel task waiting for input and a
// canceled one, with c (a client of the travel agent), and an echo task
// completed.
func tasksInEachState(t *testing.T, ctx context.Context, s *harness.Server) (c *a2aclient.Client, waiting, canceled, done *a2a.Task) {
	t.Helper()
	c, _ = harness.NewClient(t, ctx, s.APIURL)
	waiting = harness.Send(t, ctx, c, "", "Book a flight")
	canceled = harness.Send(t, ctx, c, "", "Book a flight")
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: canceled.ID}); err != nil {
		t.Fatal(err)
	}
	echo, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
	done = harness.Send(t, ctx, echo, "", "hi")
	harness.WantState(t, done, a2a.TaskStateCompleted, "hi")
	return c, waiting, canceled, done
}

func TestJSONRPCErrorCodes(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, waiting, canceled, done := tasksInEachState(t, ctx, s)

	msg := func(taskID a2a.TaskID, parts string) string {
		tid := ""
		if taskID != "" {
			tid = `,"taskId":"` + string(taskID) + `"`
		}
		return `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"` + a2a.NewMessageID() + `","role":"ROLE_USER","parts":` + parts + tid + `}}}`
	}
	tests := []struct {
		name string
		url  string
		body string
		code int
	}{
		{"invalid JSON", s.APIURL, `{"jsonrpc":"2.0",`, -32700},
		{"not an object", s.APIURL, `[1,2]`, -32600},
		{"wrong jsonrpc version", s.APIURL, `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`, -32600},
		{"object id", s.APIURL, `{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"x"}}`, -32600},
		{"unknown method", s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"Nope","params":{}}`, -32601},
		{"params of wrong type", s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`, -32602},
		{"empty parts", s.APIURL, msg("", `[]`), -32602},
		{"agent role", s.APIURL, strings.Replace(msg("", `[{"text":"x"}]`), "ROLE_USER", "ROLE_AGENT", 1), -32602},
		{"negative historyLength", s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + string(waiting.ID) + `","historyLength":-1}}`, -32602},
		{"unknown task", s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}`, -32001},
		{"message to unknown task", s.APIURL, msg("no-such-task", `[{"text":"x"}]`), -32001},
		{"cancel unknown task", s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"no-such-task"}}`, -32001},
		{"another agent's task", s.APIURL + "/agents/echo", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + string(waiting.ID) + `"}}`, -32001},
		{"cancel canceled task", s.APIURL, `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"` + string(canceled.ID) + `"}}`, -32002},
		{"cancel completed task", s.APIURL + "/agents/echo", `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"` + string(done.ID) + `"}}`, -32002},
		{"message to canceled task", s.APIURL, msg(canceled.ID, `[{"text":"x"}]`), -32004},
		{"message to completed task", s.APIURL + "/agents/echo", msg(done.ID, `[{"text":"x"}]`), -32004},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, resp := rpc(t, tt.url, tt.body)
			if status >= 500 {
				t.Errorf("HTTP status %d, want < 500", status)
			}
			if resp.Error == nil {
				t.Fatalf("no error, result %s; want code %d", resp.Result, tt.code)
			}
			if resp.Error.Code != tt.code {
				t.Errorf("error code %d (%s), want %d", resp.Error.Code, resp.Error.Message, tt.code)
			}
		})
	}

	// The refused message left the waiting task untouched.
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: waiting.ID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, got, a2a.TaskStateInputRequired, "Where to?")
	if len(got.History) != 2 {
		t.Errorf("waiting task history has %d messages, want 2", len(got.History))
	}
}

func TestVersionNegotiation(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	post := func(version, body string) rpcResponse {
		req, _ := http.NewRequest(http.MethodPost, s.APIURL+"/agents/echo", strings.NewReader(body))
		if version != "" {
			req.Header.Set("A2A-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out rpcResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// No version: served as 0.3 (message/send, kind-tagged parts).
	v03 := post("", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"`+a2a.NewMessageID()+`","role":"user","parts":[{"kind":"text","text":"old client"}]}}}`)
	if v03.Error != nil || !bytes.Contains(v03.Result, []byte(`"completed"`)) {
		t.Errorf("0.3 message/send: error %+v, result %s; want a completed 0.3 task", v03.Error, v03.Result)
	}
	// No version, but a method only 1.0 has (a2a-java 1.0.0.Alpha3 sends
	// no A2A-Version): served as 1.0 (internal/api/a2abinding/versionless.go).
	v10 := post("", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+a2a.NewMessageID()+`","role":"ROLE_USER","parts":[{"text":"new client"}]}}}`)
	if v10.Error != nil || !bytes.Contains(v10.Result, []byte(`"TASK_STATE_COMPLETED"`)) {
		t.Errorf("unversioned SendMessage: error %+v, result %s; want a completed 1.0 task", v10.Error, v10.Result)
	}
	// An unknown version: VersionNotSupportedError.
	if r := post("2.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`); r.Error == nil || r.Error.Code != -32009 {
		t.Errorf("A2A-Version 2.0: error %+v, want code -32009", r.Error)
	}
}

func TestSendMessageIsIdempotent(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	for _, agent := range []string{"travel", "echo"} {
		t.Run(agent, func(t *testing.T) {
			c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+agent)
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Book a flight"))
			first, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			if err != nil {
				t.Fatal(err)
			}
			// The same request again, as a client retrying after a timeout would.
			again, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			if err != nil {
				t.Fatal(err)
			}
			a, b := first.(*a2a.Task), again.(*a2a.Task)
			if a.ID != b.ID || a.Status.State != b.Status.State {
				t.Errorf("retried SendMessage: task %s (%s), first was %s (%s)", b.ID, b.Status.State, a.ID, a.Status.State)
			}
			if n := len(b.History); n != len(a.History) {
				t.Errorf("retried SendMessage answered %d messages, the first %d", n, len(a.History))
			}
			// The answers hold the messages since the caller's own: the
			// whole history tells whether it was recorded twice.
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a.ID})
			if err != nil {
				t.Fatal(err)
			}
			if users := countRole(got.History, a2a.MessageRoleUser); users != 1 {
				t.Errorf("retried SendMessage recorded the message %d times, want once", users)
			}
		})
	}
}

func TestCancelWaitingTask(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.Send(t, ctx, c, "", "Book a flight")
	task = harness.Send(t, ctx, c, task.ID, "Oslo")
	harness.WantState(t, task, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")

	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, canceled, a2a.TaskStateCanceled, "")
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, got, a2a.TaskStateCanceled, "")
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("second cancel: err = %v, want ErrTaskNotCancelable", err)
	}
}

func TestAgentsAndCards(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	for _, agent := range []string{"travel", "echo"} {
		_, card := harness.NewClient(t, ctx, s.APIURL+"/agents/"+agent)
		if card.Name != agent {
			t.Errorf("card at /agents/%s names %q", agent, card.Name)
		}
		var bindings []string
		for _, i := range card.SupportedInterfaces {
			if i.ProtocolVersion == a2a.Version {
				bindings = append(bindings, string(i.ProtocolBinding))
				if i.URL != s.APIURL+"/agents/"+agent {
					t.Errorf("%s interface URL = %s, want %s/agents/%s", agent, i.URL, s.APIURL, agent)
				}
			}
		}
		if strings.Join(bindings, ",") != "JSONRPC,HTTP+JSON" {
			t.Errorf("%s 1.0 interfaces = %v, want JSONRPC and HTTP+JSON", agent, bindings)
		}
	}
	resp, err := http.Get(s.APIURL + "/agents/nope/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown agent card: status %d, want 404", resp.StatusCode)
	}
}
