package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestJSONRPCNotJSON: a JSON-RPC body that is not JSON is -32700 Parse
// error (JSON-RPC 2.0 §5.1: "Invalid JSON was received by the server"),
// whatever its Content-Type says; a JSON body under a media type the
// endpoint does not read is -32600 Invalid Request. A Content-Type that
// is no JSON type answers 415 either way.
func TestJSONRPCNotJSON(t *testing.T) {
	h := fuzzHandler(t)
	// The TCK's JSONRPC-SSE-002 posts a Python repr as text/plain.
	const pyRepr = `{'jsonrpc': '2.0', 'method': 'SendMessage', 'id': 1}`
	const getTask = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"known-task"}}`
	for _, tc := range []struct {
		name, contentType, body string
		status, code            int
		message                 string
	}{
		{"a Python repr as text/plain", "text/plain", pyRepr, 415, -32700, "parse error: the request body is not JSON"},
		{"an empty text/plain body", "text/plain", "", 415, -32700, "parse error"},
		{"not UTF-8 as text/plain", "text/plain", "\xff\xfe", 415, -32700, "parse error"},
		{"JSON-RPC as text/plain", "text/plain", getTask, 415, -32600, `Content-Type "text/plain" is not supported`},
		{"a Python repr as application/json", "application/json", pyRepr, 200, -32700, "parse error"},
		{"a Python repr without Content-Type", "", pyRepr, 200, -32700, "parse error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatalf("answer %d %q: %v", rec.Code, rec.Body, err)
			}
			if rec.Code != tc.status || resp.Error.Code != tc.code || !strings.Contains(resp.Error.Message, tc.message) {
				t.Errorf("answer %d %d %q, want %d %d containing %q", rec.Code, resp.Error.Code, resp.Error.Message, tc.status, tc.code, tc.message)
			}
			if resp.JSONRPC != "2.0" || string(resp.ID) != "null" {
				t.Errorf("envelope jsonrpc %q id %s, want 2.0 and null (the request's id is unknown)", resp.JSONRPC, resp.ID)
			}
		})
	}
}
