package tests

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// badCase is one malformed or hostile request and the exact answer it must
// get: for the JSON-RPC binding an HTTP status and a JSON-RPC error code,
// for the HTTP+JSON binding an HTTP status and the A2A reason of the
// google.rpc.ErrorInfo in its google.rpc.Status body.
type badCase struct {
	name   string
	method string // default POST
	path   string // under the API URL
	header map[string]string
	body   []byte
	// chunked sends the body without a Content-Length.
	chunked bool

	status  int
	rpcCode int    // JSON-RPC binding
	reason  string // HTTP+JSON binding
}

// badAnswer is what came back for a badCase.
type badAnswer struct {
	status  int
	ctype   string
	body    []byte
	rpcCode int
	reason  string
	code    int // google.rpc.Status code
}

// badClient times out rather than letting a hanging answer hang the test.
var badClient = &http.Client{Timeout: 30 * time.Second}

func badDo(t *testing.T, apiURL string, c badCase) badAnswer {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader = bytes.NewReader(c.body)
	if c.chunked {
		body = io.MultiReader(bytes.NewReader(c.body)) // hides the length
	}
	if c.body == nil {
		body = nil
	}
	req, err := http.NewRequest(method, apiURL+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.chunked {
		req.ContentLength = -1
	}
	req.Header.Set("A2A-Version", "1.0")
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := badClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, c.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, c.path, err)
	}
	a := badAnswer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: raw}
	doc := raw
	if strings.HasPrefix(a.ctype, "text/event-stream") {
		// A stream that fails at once carries its error as the first event.
		doc = nil
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				doc = []byte(data)
				break
			}
		}
	}
	var parsed struct {
		Error *struct {
			Code    int `json:"code"`
			Details []struct {
				Type   string `json:"@type"`
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatalf("%s %s: answer %d %s %q is not JSON: %v", method, c.path, a.status, a.ctype, truncateForLog(raw), err)
	}
	if parsed.Error != nil {
		a.rpcCode, a.code = parsed.Error.Code, parsed.Error.Code
		for _, d := range parsed.Error.Details {
			if d.Type == "type.googleapis.com/google.rpc.ErrorInfo" {
				a.reason = d.Reason
			}
		}
	}
	return a
}

func truncateForLog(b []byte) []byte {
	if len(b) > 500 {
		return b[:500]
	}
	return b
}

// rpcBody is a JSON-RPC request with params given as raw JSON.
func rpcBody(method, params string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":"bad-1","method":"` + method + `","params":` + params + `}`)
}

// sendParams is a SendMessage params object whose message has the given
// fields added to a valid message (a later key replaces an earlier one).
func sendParams(extra string) string {
	return `{"message":{"messageId":"` + a2a.NewMessageID() + `","role":"ROLE_USER","parts":[{"text":"Book a flight"}]` + extra + `}}`
}

func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

func TestBadInput(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	client, waiting, canceled, done := tasksInEachState(t, ctx, s)

	const limit = 4 << 20 // the API's default MaxBodyBytes
	overLimit := []byte(sendParams(`,"metadata":{"pad":"` + strings.Repeat("x", limit) + `"}`))
	invalidUTF8 := []byte(strings.Replace(string(rpcBody("SendMessage", sendParams(""))), "Book a flight", "Book \xff\xfe a flight", 1))
	forgedToken := base64.RawURLEncoding.EncodeToString(append([]byte{1}, bytes.Repeat([]byte{0xAB}, 40)...))
	huge := strings.Repeat("m", 10000)
	ctype := func(s string) map[string]string { return map[string]string{"Content-Type": s} }

	rpc := []badCase{
		{name: "invalid JSON", body: []byte(`{"jsonrpc":"2.0",`), status: 200, rpcCode: -32700},
		{name: "empty body", body: []byte(``), status: 200, rpcCode: -32700},
		{name: "trailing garbage", body: append(rpcBody("GetTask", `{"id":"x"}`), "}}"...), status: 200, rpcCode: -32700},
		{name: "invalid UTF-8", body: invalidUTF8, status: 200, rpcCode: -32700},
		{name: "array, not an object", body: []byte(`[1,2]`), status: 200, rpcCode: -32600},
		{name: "batch", body: []byte(`[` + string(rpcBody("GetTask", `{"id":"x"}`)) + `]`), status: 200, rpcCode: -32600},
		{name: "JSON string", body: []byte(`"GetTask"`), status: 200, rpcCode: -32600},
		{name: "jsonrpc 1.0", body: []byte(`{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "no jsonrpc member", body: []byte(`{"id":1,"method":"GetTask","params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "missing id", body: []byte(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "null id", body: []byte(`{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "object id", body: []byte(`{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "id out of float range", body: []byte(`{"jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "missing method", body: []byte(`{"jsonrpc":"2.0","id":1,"params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "method not a string", body: []byte(`{"jsonrpc":"2.0","id":1,"method":5,"params":{"id":"x"}}`), status: 200, rpcCode: -32600},
		{name: "unknown method", body: rpcBody("Nope", `{}`), status: 200, rpcCode: -32601},
		{name: "0.3 method name in 1.0", body: rpcBody("tasks/get", `{"id":"x"}`), status: 200, rpcCode: -32601},
		{name: "params an array", body: rpcBody("GetTask", `["x"]`), status: 200, rpcCode: -32602},
		{name: "params a string", body: rpcBody("GetTask", `"x"`), status: 200, rpcCode: -32602},
		{name: "missing params", body: []byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask"}`), status: 200, rpcCode: -32602},
		{name: "task id a number", body: rpcBody("GetTask", `{"id":5}`), status: 200, rpcCode: -32602},
		{name: "message missing", body: rpcBody("SendMessage", `{}`), status: 200, rpcCode: -32602},
		{name: "message a string", body: rpcBody("SendMessage", `{"message":"hi"}`), status: 200, rpcCode: -32602},
		{name: "empty parts", body: rpcBody("SendMessage", sendParams(`,"parts":[]`)), status: 200, rpcCode: -32602},
		{name: "part of no known kind", body: rpcBody("SendMessage", sendParams(`,"parts":[{"foo":1}]`)), status: 200, rpcCode: -32602},
		{name: "part of two kinds", body: rpcBody("SendMessage", sendParams(`,"parts":[{"text":"a","url":"http://x"}]`)), status: 200, rpcCode: -32602},
		{name: "unknown role", body: rpcBody("SendMessage", sendParams(`,"role":"ROLE_ROBOT"`)), status: 200, rpcCode: -32602},
		{name: "agent role", body: rpcBody("SendMessage", sendParams(`,"role":"ROLE_AGENT"`)), status: 200, rpcCode: -32602},
		{name: "missing messageId", body: rpcBody("SendMessage", sendParams(`,"messageId":""`)), status: 200, rpcCode: -32602},
		{name: "huge messageId", body: rpcBody("SendMessage", sendParams(`,"messageId":"`+huge+`"`)), status: 200, rpcCode: -32602},
		{name: "negative historyLength", body: rpcBody("GetTask", `{"id":"`+string(waiting.ID)+`","historyLength":-1}`), status: 200, rpcCode: -32602},
		{name: "negative configuration.historyLength", body: rpcBody("SendMessage", strings.TrimSuffix(sendParams(""), "}")+`,"configuration":{"historyLength":-3}}`), status: 200, rpcCode: -32602},
		{name: "unknown task state filter", body: rpcBody("ListTasks", `{"status":"TASK_STATE_BOGUS"}`), status: 200, rpcCode: -32602},
		{name: "page size over the maximum", body: rpcBody("ListTasks", `{"pageSize":1000}`), status: 200, rpcCode: -32602},
		{name: "negative page size", body: rpcBody("ListTasks", `{"pageSize":-1}`), status: 200, rpcCode: -32602},
		{name: "page token not base64", body: rpcBody("ListTasks", `{"pageToken":"!!!"}`), status: 200, rpcCode: -32602},
		{name: "forged page token", body: rpcBody("ListTasks", `{"pageToken":"`+forgedToken+`"}`), status: 200, rpcCode: -32602},
		{name: "ListTasks negative historyLength", body: rpcBody("ListTasks", `{"historyLength":-1}`), status: 200, rpcCode: -32602},
		{name: "unknown task", body: rpcBody("GetTask", `{"id":"no-such-task"}`), status: 200, rpcCode: -32001},
		{name: "task id with NUL", body: rpcBody("GetTask", `{"id":"a\u0000b"}`), status: 200, rpcCode: -32602},
		{name: "task id not ASCII", body: rpcBody("CancelTask", `{"id":"t\u00e2che"}`), status: 200, rpcCode: -32602},
		{name: "message to a task id with NUL", body: rpcBody("SendMessage", sendParams(`,"taskId":"a\u0000b"`)), status: 200, rpcCode: -32602},
		{name: "messageId with NUL (accepted)", body: rpcBody("SendMessage", sendParams(`,"messageId":"m\u0000`+a2a.NewMessageID()+`"`)), status: 200, rpcCode: 0},
		{name: "task id over Temporal's limit", body: rpcBody("GetTask", `{"id":"`+huge+`"}`), status: 200, rpcCode: -32602},
		{name: "another agent's task", path: "/agents/echo", body: rpcBody("GetTask", `{"id":"`+string(waiting.ID)+`"}`), status: 200, rpcCode: -32001},
		{name: "cancel unknown task", body: rpcBody("CancelTask", `{"id":"no-such-task"}`), status: 200, rpcCode: -32001},
		{name: "cancel completed task", path: "/agents/echo", body: rpcBody("CancelTask", `{"id":"`+string(done.ID)+`"}`), status: 200, rpcCode: -32002},
		{name: "cancel canceled task", body: rpcBody("CancelTask", `{"id":"`+string(canceled.ID)+`"}`), status: 200, rpcCode: -32002},
		{name: "message to completed task", path: "/agents/echo", body: rpcBody("SendMessage", sendParams(`,"taskId":"`+string(done.ID)+`"`)), status: 200, rpcCode: -32004},
		{name: "subscribe to completed task", path: "/agents/echo", body: rpcBody("SubscribeToTask", `{"id":"`+string(done.ID)+`"}`), status: 200, rpcCode: -32004},
		{name: "push to the metadata address", body: rpcBody("CreateTaskPushNotificationConfig", `{"taskId":"`+string(waiting.ID)+`","url":"http://169.254.169.254/latest"}`), status: 200, rpcCode: -32602},
		{name: "A2A-Version 9.9", header: map[string]string{"A2A-Version": "9.9"}, body: rpcBody("GetTask", `{"id":"x"}`), status: 200, rpcCode: -32009},
		{name: "deeply nested JSON", body: rpcBody("SendMessage", strings.TrimSuffix(sendParams(""), "}")+`,"metadata":`+nested(20000)+`}`), status: 200, rpcCode: -32600},
		{name: "nested past the depth limit", body: rpcBody("SendMessage", strings.TrimSuffix(sendParams(""), "}")+`,"metadata":`+nested(150)+`}`), status: 200, rpcCode: -32600},
		{name: "wrong content type", header: ctype("text/xml"), body: rpcBody("GetTask", `{"id":"x"}`), status: 415, rpcCode: -32600},
		{name: "not JSON as text/plain", header: ctype("text/plain"), body: []byte(`{'jsonrpc': '2.0', 'id': 1}`), status: 415, rpcCode: -32700},
		{name: "curl's default content type (accepted)", header: ctype("application/x-www-form-urlencoded"), body: rpcBody("GetTask", `{"id":"`+string(waiting.ID)+`"}`), status: 200, rpcCode: 0},
		{name: "multipart content type", header: ctype("multipart/form-data; boundary=x"), body: rpcBody("GetTask", `{"id":"x"}`), status: 415, rpcCode: -32600},
		{name: "wrong HTTP method", method: http.MethodGet, path: "/", status: 405, rpcCode: -32600},
		{name: "body over the limit", body: []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + string(overLimit) + `}`), status: 413, rpcCode: -32600},
		{name: "chunked body over the limit", chunked: true, body: []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + string(overLimit) + `}`), status: 413, rpcCode: -32600},
	}
	rest := []badCase{
		{name: "invalid JSON", path: "/message:send", body: []byte(`{"message":`), status: 400, reason: "PARSE_ERROR"},
		{name: "empty body", path: "/message:send", body: []byte(``), status: 400, reason: "PARSE_ERROR"},
		{name: "invalid UTF-8", path: "/message:send", body: []byte(strings.Replace(sendParams(""), "Book", "B\xffok", 1)), status: 400, reason: "PARSE_ERROR"},
		{name: "wrong type", path: "/message:send", body: []byte(`{"message":{"messageId":5}}`), status: 400, reason: "INVALID_PARAMS"},
		{name: "message missing", path: "/message:send", body: []byte(`{}`), status: 400, reason: "INVALID_PARAMS"},
		{name: "empty parts", path: "/message:send", body: []byte(sendParams(`,"parts":[]`)), status: 400, reason: "INVALID_PARAMS"},
		{name: "part of no known kind", path: "/message:send", body: []byte(sendParams(`,"parts":[{"foo":1}]`)), status: 400, reason: "INVALID_PARAMS"},
		{name: "unknown role", path: "/message:send", body: []byte(sendParams(`,"role":"ROLE_ROBOT"`)), status: 400, reason: "INVALID_PARAMS"},
		{name: "huge messageId", path: "/message:send", body: []byte(sendParams(`,"messageId":"` + huge + `"`)), status: 400, reason: "INVALID_PARAMS"},
		{name: "message to completed task", path: "/agents/echo/message:send", body: []byte(sendParams(`,"taskId":"` + string(done.ID) + `"`)), status: 400, reason: "UNSUPPORTED_OPERATION"},
		{name: "streaming message, empty parts", path: "/message:stream", body: []byte(sendParams(`,"parts":[]`)), status: 400, reason: "INVALID_PARAMS"},
		{name: "deeply nested JSON", path: "/message:send", body: []byte(strings.TrimSuffix(sendParams(""), "}") + `,"metadata":` + nested(20000) + `}`), status: 400, reason: "INVALID_REQUEST"},
		{name: "wrong content type", path: "/message:send", header: ctype("text/xml"), body: []byte(`<message/>`), status: 415, reason: "INVALID_REQUEST"},
		{name: "body over the limit", path: "/message:send", body: overLimit, status: 413, reason: "INVALID_REQUEST"},
		{name: "chunked body over the limit", path: "/message:send", chunked: true, body: overLimit, status: 413, reason: "INVALID_REQUEST"},
		{name: "unknown task", method: http.MethodGet, path: "/tasks/no-such-task", status: 404, reason: "TASK_NOT_FOUND"},
		{name: "another agent's task", method: http.MethodGet, path: "/agents/echo/tasks/" + string(waiting.ID), status: 404, reason: "TASK_NOT_FOUND"},
		{name: "task id not UTF-8", method: http.MethodGet, path: "/tasks/%ff%fe", status: 400, reason: "INVALID_PARAMS"},
		{name: "negative historyLength", method: http.MethodGet, path: "/tasks/" + string(waiting.ID) + "?historyLength=-1", status: 400, reason: "INVALID_PARAMS"},
		{name: "historyLength not a number", method: http.MethodGet, path: "/tasks/" + string(waiting.ID) + "?historyLength=abc", status: 400, reason: "INVALID_REQUEST"},
		{name: "cancel completed task", path: "/agents/echo/tasks/" + string(done.ID) + ":cancel", status: 400, reason: "TASK_NOT_CANCELABLE"},
		{name: "cancel canceled task", path: "/tasks/" + string(canceled.ID) + ":cancel", status: 400, reason: "TASK_NOT_CANCELABLE"},
		{name: "cancel unknown task", path: "/tasks/no-such-task:cancel", status: 404, reason: "TASK_NOT_FOUND"},
		{name: "unknown task action", path: "/tasks/" + string(waiting.ID) + ":frobnicate", status: 400, reason: "INVALID_REQUEST"},
		{name: "subscribe to completed task", method: http.MethodGet, path: "/agents/echo/tasks/" + string(done.ID) + ":subscribe", status: 400, reason: "UNSUPPORTED_OPERATION"},
		{name: "bad page token", method: http.MethodGet, path: "/tasks?pageToken=%21%21%21", status: 400, reason: "INVALID_PARAMS"},
		{name: "forged page token", method: http.MethodGet, path: "/tasks?pageToken=" + forgedToken, status: 400, reason: "INVALID_PARAMS"},
		{name: "page size over the maximum", method: http.MethodGet, path: "/tasks?pageSize=1000", status: 400, reason: "INVALID_PARAMS"},
		{name: "page size not a number", method: http.MethodGet, path: "/tasks?pageSize=ten", status: 400, reason: "INVALID_REQUEST"},
		{name: "unknown task state filter", method: http.MethodGet, path: "/tasks?status=TASK_STATE_BOGUS", status: 400, reason: "INVALID_PARAMS"},
		{name: "statusTimestampAfter not a time", method: http.MethodGet, path: "/tasks?statusTimestampAfter=yesterday", status: 400, reason: "INVALID_REQUEST"},
		{name: "contextId not UTF-8", method: http.MethodGet, path: "/tasks?contextId=%ff", status: 400, reason: "INVALID_PARAMS"},
		{name: "push to the metadata address", path: "/tasks/" + string(waiting.ID) + "/pushNotificationConfigs", body: []byte(`{"url":"http://169.254.169.254/latest"}`), status: 400, reason: "INVALID_PARAMS"},
		{name: "A2A-Version 9.9", header: map[string]string{"A2A-Version": "9.9"}, method: http.MethodGet, path: "/tasks/" + string(waiting.ID), status: 400, reason: "VERSION_NOT_SUPPORTED"},
		{name: "PUT on message:send", method: http.MethodPut, path: "/message:send", body: []byte(sendParams("")), status: 405, reason: "METHOD_NOT_FOUND"},
		{name: "DELETE on a task", method: http.MethodDelete, path: "/tasks/" + string(waiting.ID), status: 405, reason: "METHOD_NOT_FOUND"},
		{name: "GET on message:send", method: http.MethodGet, path: "/message:send", status: 405, reason: "METHOD_NOT_FOUND"},
		{name: "unknown path", method: http.MethodGet, path: "/no/such/path", status: 404, reason: "METHOD_NOT_FOUND"},
	}

	check := func(t *testing.T, c badCase, jsonRPC bool) {
		start := time.Now()
		a := badDo(t, s.APIURL, c)
		if a.status >= 500 {
			t.Errorf("HTTP status %d: a 5xx", a.status)
		}
		if a.status != c.status {
			t.Errorf("HTTP status %d, want %d (answer %q)", a.status, c.status, truncateForLog(a.body))
		}
		if !strings.HasPrefix(a.ctype, "application/json") && !strings.HasPrefix(a.ctype, "text/event-stream") {
			t.Errorf("Content-Type %q, want JSON", a.ctype)
		}
		if jsonRPC && a.rpcCode != c.rpcCode {
			t.Errorf("JSON-RPC error code %d, want %d (answer %q)", a.rpcCode, c.rpcCode, truncateForLog(a.body))
		}
		if !jsonRPC {
			if a.reason != c.reason {
				t.Errorf("A2A reason %q, want %q (answer %q)", a.reason, c.reason, truncateForLog(a.body))
			}
			if a.status != http.StatusOK && a.code != a.status {
				t.Errorf("google.rpc.Status code %d, want the HTTP status %d", a.code, a.status)
			}
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("answered after %s", took)
		}
	}
	for _, c := range rpc {
		t.Run("JSON-RPC/"+c.name, func(t *testing.T) { check(t, c, true) })
	}
	for _, c := range rest {
		t.Run("HTTP+JSON/"+c.name, func(t *testing.T) { check(t, c, false) })
	}
	if n := len(rpc) + len(rest); n < 40 {
		t.Errorf("%d bad inputs, want at least 40", n)
	}

	// None of it touched the waiting task, and the server still serves.
	got, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: waiting.ID})
	if err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, got, a2a.TaskStateInputRequired, "Where to?")
	if len(got.History) != 2 {
		t.Errorf("waiting task history has %d messages, want 2", len(got.History))
	}
	t.Logf("%s", fmt.Sprintf("%d JSON-RPC and %d HTTP+JSON bad inputs", len(rpc), len(rest)))
}
