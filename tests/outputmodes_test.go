package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestAcceptedOutputModes: a SendMessage whose configuration.acceptedOutputModes
// shares no media type with what the agent produces (text/plain and
// application/json for the built-in agents) is refused with
// UnsupportedContentType: JSON-RPC -32005, HTTP+JSON 400 (A2A 1.0.1 §5.4) with reason
// CONTENT_TYPE_NOT_SUPPORTED, naming what the agent produces. Any overlap,
// wildcards included, is served.
func TestAcceptedOutputModes(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)

	const produces = "it produces text/plain, application/json"
	tests := []struct {
		name    string
		modes   []string
		refused bool
	}{
		{"an image only", []string{"image/png"}, true},
		{"images and audio", []string{"image/png", "audio/*"}, true},
		{"a type wildcard that matches nothing", []string{"image/*"}, true},
		{"a media type without subtype", []string{"text"}, true},
		{"text/plain", []string{"text/plain"}, false},
		{"application/json among others", []string{"image/png", "application/json"}, false},
		{"case and parameters ignored", []string{"TEXT/Plain; charset=utf-8"}, false},
		{"text/*", []string{"text/*"}, false},
		{"*/*", []string{"*/*"}, false},
		{"blank entries only", []string{" "}, false},
		{"none", nil, false},
	}
	bindings := []struct {
		name string
		// request builds the request for one SendMessage with config.
		request func(msg, config string) badCase
	}{
		{"JSON-RPC", func(msg, config string) badCase {
			return badCase{path: "/agents/echo", body: rpcBody("SendMessage", `{"message":`+msg+`,"configuration":`+config+`}`)}
		}},
		{"JSON-RPC streaming", func(msg, config string) badCase {
			return badCase{path: "/agents/echo", body: rpcBody("SendStreamingMessage", `{"message":`+msg+`,"configuration":`+config+`}`)}
		}},
		{"HTTP+JSON", func(msg, config string) badCase {
			return badCase{path: "/agents/echo/message:send", body: []byte(`{"message":` + msg + `,"configuration":` + config + `}`)}
		}},
		{"HTTP+JSON streaming", func(msg, config string) badCase {
			return badCase{path: "/agents/echo/message:stream", body: []byte(`{"message":` + msg + `,"configuration":` + config + `}`)}
		}},
		{"JSON-RPC 0.3", func(msg, config string) badCase {
			// The 0.3 form: method names and part shapes of A2A 0.3.
			msg = strings.Replace(strings.Replace(msg, `"ROLE_USER"`, `"user"`, 1), `{"text"`, `{"kind":"text","text"`, 1)
			c := badCase{path: "/agents/echo", header: map[string]string{"A2A-Version": "0.3"},
				body: []byte(`{"jsonrpc":"2.0","id":"v03","method":"message/send","params":{"message":` + msg + `,"configuration":` + config + `}}`)}
			return c
		}},
	}
	n := 0
	for _, b := range bindings {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				n++
				msg := fmt.Sprintf(`{"messageId":"modes-%d","role":"ROLE_USER","parts":[{"text":"hi"}]}`, n)
				modes, err := json.Marshal(tt.modes)
				if err != nil {
					t.Fatal(err)
				}
				c := b.request(msg, `{"acceptedOutputModes":`+string(modes)+`}`)
				got := badDo(t, s.APIURL, c)
				rest := strings.HasPrefix(b.name, "HTTP+JSON")
				type answer struct {
					Status  int
					RPCCode int
					Reason  string
				}
				want := answer{Status: 200}
				switch {
				case tt.refused && b.name == "HTTP+JSON streaming":
					// a2a-go opens an HTTP+JSON stream (200) before the service
					// sees the request: the refusal is the stream's error event,
					// with a2a-go's status code for it (400), as for any error
					// found after the stream opened.
					want = answer{Status: 200, RPCCode: 400, Reason: "CONTENT_TYPE_NOT_SUPPORTED"}
				case tt.refused && rest:
					want = answer{Status: 400, RPCCode: 400, Reason: "CONTENT_TYPE_NOT_SUPPORTED"}
				case tt.refused:
					want = answer{Status: 200, RPCCode: -32005}
				}
				// badDo reads the google.rpc.Status code and the JSON-RPC code into the same field.
				gotAnswer := answer{Status: got.status, RPCCode: got.rpcCode, Reason: got.reason}
				if !rest {
					gotAnswer.Reason = ""
				}
				if gotAnswer != want {
					t.Fatalf("answer %+v, want %+v; body %s", gotAnswer, want, truncateForLog(got.body))
				}
				body := string(got.body)
				if tt.refused && !strings.Contains(body, produces) {
					t.Errorf("refusal %s does not say %q", truncateForLog(got.body), produces)
				}
				if !tt.refused && !strings.Contains(body, `hi`) {
					t.Errorf("served answer %s does not carry the echo", truncateForLog(got.body))
				}
			})
		}
	}

	t.Run("a2a-go client", func(t *testing.T) {
		c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg,
			Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"image/png"}}})
		if !errors.Is(err, a2a.ErrUnsupportedContentType) {
			t.Fatalf("SendMessage accepting image/png: error %v, want %v", err, a2a.ErrUnsupportedContentType)
		}
		if !strings.Contains(err.Error(), produces) {
			t.Errorf("error %q does not say %q", err, produces)
		}
		msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg,
			Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/plain"}}})
		if err != nil {
			t.Fatalf("SendMessage accepting text/plain: %v", err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("SendMessage returned %T, want a task", res)
		}
		harness.WantState(t, task, a2a.TaskStateCompleted, "hi")
	})
}
