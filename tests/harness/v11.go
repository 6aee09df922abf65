package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// V11 is a minimal A2A 1.1 client (the specification's dev-1.1 branch),
// written against its JSON: no SDK implements 1.1 yet. It speaks
// JSON-RPC and HTTP+JSON with A2A-Version 1.1 (Version, when set, instead)
// to an agent's endpoint.
type V11 struct {
	URL        string // the agent's endpoint
	Version    string // "" is 1.1
	HTTP       *http.Client
	Extensions []string // activated with A2A-Extensions
}

func (c *V11) version() string {
	if c.Version == "" {
		return "1.1"
	}
	return c.Version
}

func (c *V11) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Data    []json.RawMessage `json:"data"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Call makes a JSON-RPC call and decodes its result into out (a
// map[string]any or a struct).
func (c *V11) Call(ctx context.Context, method string, params any, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", c.version())
	if len(c.Extensions) > 0 {
		req.Header.Set("A2A-Extensions", strings.Join(c.Extensions, ", "))
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("%s: %d, %w", method, resp.StatusCode, err)
	}
	if env.Error != nil {
		return env.Error
	}
	return json.Unmarshal(env.Result, out)
}

// REST makes an HTTP+JSON request (path under the endpoint) and returns its
// status and decoded body.
func (c *V11) REST(ctx context.Context, method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", c.version())
	if len(c.Extensions) > 0 {
		req.Header.Set("A2A-Extensions", strings.Join(c.Extensions, ", "))
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, out, nil
}

// Stream makes a streaming JSON-RPC call and returns each event's result
// (or the error ending the stream).
func (c *V11) Stream(ctx context.Context, method string, params any) ([]map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	c.streamHeaders(req)
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var events []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var env struct {
			Result map[string]any `json:"result"`
			Error  *RPCError      `json:"error"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &env); err != nil {
			return events, err
		}
		if env.Error != nil {
			return events, env.Error
		}
		events = append(events, env.Result)
	}
	return events, sc.Err()
}

// Generation reads the generation of a task or event object (A2A 1.1's
// int64, in ProtoJSON a string; a number is read too). ok is false when
// the object has none.
func Generation(obj map[string]any) (gen int64, ok bool) {
	switch v := obj["generation"].(type) {
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	case float64:
		return int64(v), true
	}
	return 0, false
}

// StreamObject returns the object a stream response holds (its task,
// statusUpdate, artifactUpdate or message) and its kind.
func StreamObject(t testing.TB, res map[string]any) (string, map[string]any) {
	t.Helper()
	for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
		if o, ok := res[k].(map[string]any); ok {
			return k, o
		}
	}
	t.Fatalf("stream response of no known kind: %v", res)
	return "", nil
}

// UserMessage is a user message's JSON, to taskID ("" for a new task).
func UserMessage(id, taskID, text string) map[string]any {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return m
}

// RESTStream makes an HTTP+JSON streaming request (path under the
// endpoint, POST with body) and returns its status and Content-Type, and
// either the events of the stream (on a text/event-stream answer, read to
// its end) or the answer's JSON body (any other).
func (c *V11) RESTStream(ctx context.Context, path string, body any) (status int, contentType string, events []map[string]any, doc map[string]any, err error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+path, bytes.NewReader(b))
	if err != nil {
		return 0, "", nil, nil, err
	}
	c.streamHeaders(req)
	resp, err := c.client().Do(req)
	if err != nil {
		return 0, "", nil, nil, err
	}
	defer resp.Body.Close()
	status, contentType = resp.StatusCode, resp.Header.Get("Content-Type")
	if !strings.HasPrefix(contentType, "text/event-stream") {
		err = json.NewDecoder(resp.Body).Decode(&doc)
		return status, contentType, nil, doc, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &e); err != nil {
			return status, contentType, events, nil, err
		}
		events = append(events, e)
	}
	return status, contentType, events, nil, sc.Err()
}

// streamHeaders sets what a 1.1 streaming request carries: JSON in, SSE
// out, the version and the extensions the client activates.
func (c *V11) streamHeaders(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", c.version())
	if len(c.Extensions) > 0 {
		req.Header.Set("A2A-Extensions", strings.Join(c.Extensions, ", "))
	}
}
