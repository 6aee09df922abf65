package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// hardeningTimeout is the HTTP read and write timeout of the serve under
// TestHTTPHardening: short, so that streams are seen to outlive it.
const hardeningTimeout = time.Second

// TestHTTPHardening runs `a2aflow serve` with a 1 s read and write
// timeout, two streams per client and an allowed host list, and checks each
// behaviour over real HTTP: streams outlive the write timeout on both
// bindings, a third stream gets 429, a body slower than the read timeout is
// cut, another Host name gets 421, a decision without JSON gets 415.
func TestHTTPHardening(t *testing.T) {
	s := harness.StartServe(t, t.TempDir(),
		"--http-read-timeout", hardeningTimeout.String(), "--http-write-timeout", hardeningTimeout.String(),
		"--wait-timeout", "500ms", "--max-streams-per-principal", "2", "--allowed-hosts", "agents.test")

	bindings := []struct {
		name      string
		subscribe func(taskID string) *http.Request
	}{
		{"JSON-RPC", func(id string) *http.Request {
			return hardeningRequest(t, http.MethodPost, s.APIURL+"/agents/travel",
				`{"jsonrpc":"2.0","id":"sub","method":"SubscribeToTask","params":{"id":"`+id+`"}}`)
		}},
		{"HTTP+JSON", func(id string) *http.Request {
			return hardeningRequest(t, http.MethodGet, s.APIURL+"/agents/travel/tasks/"+id+":subscribe", "")
		}},
	}

	t.Run("streams outlive the write timeout", func(t *testing.T) {
		for _, b := range bindings {
			t.Run(b.name, func(t *testing.T) {
				id := hardeningTravelTask(t, s.APIURL)
				events := hardeningStream(t, b.subscribe(id))
				if first := events.next(t); !strings.Contains(first, id) {
					t.Fatalf("first event %s is not the task", first)
				}
				time.Sleep(3 * hardeningTimeout)
				hardeningAnswer(t, s.APIURL, id, "Lisbon")
				if e := events.next(t); !strings.Contains(e, "TASK_STATE_") {
					t.Errorf("event after %s: %s, want a status update", 3*hardeningTimeout, e)
				}
			})
		}
	})

	t.Run("a stream over the cap gets 429", func(t *testing.T) {
		id := hardeningTravelTask(t, s.APIURL)
		for range 2 {
			hardeningStream(t, bindings[0].subscribe(id)).next(t)
		}
		for _, b := range bindings {
			resp, err := http.DefaultClient.Do(b.subscribe(id))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: third stream %s (Retry-After %q): %s, want 429 with Retry-After", b.name, resp.Status, resp.Header.Get("Retry-After"), body)
			}
		}
	})

	t.Run("a body slower than the read timeout is cut", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.APIURL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		begin := time.Now()
		// Headers promise 100 bytes of body; one comes, then nothing.
		if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * hardeningTimeout))
		_, _ = io.ReadAll(conn) // the answer, if any, then the close
		if took := time.Since(begin); took >= 10*hardeningTimeout {
			t.Errorf("the connection was still open after %s; want it cut at the read timeout %s", took, hardeningTimeout)
		}
	})

	t.Run("another host name gets 421", func(t *testing.T) {
		req := hardeningRequest(t, http.MethodGet, s.APIURL+"/agents", "")
		req.Host = "rebinding.attacker.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %s, want 421", req.Host, resp.Status)
		}
		req.Host = "agents.test:8080"
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s (allowed): %s, want 200", req.Host, resp.Status)
		}
	})

	t.Run("a decision without JSON gets 415", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, s.APIURL+"/approvals/some-task-approval-1/decision", strings.NewReader(`{"approved": true}`))
		req.Header.Set("Content-Type", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("a text/plain decision: %s, want 415", resp.Status)
		}
	})
}

func hardeningRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// hardeningTravelTask starts a travel task, which then waits for the
// user's first answer, and returns its ID.
func hardeningTravelTask(t *testing.T, apiURL string) string {
	t.Helper()
	return hardeningSend(t, apiURL, `{"messageId":"`+a2a.NewMessageID()+`","role":"ROLE_USER","parts":[{"text":"Book a flight"}]}`)
}

// hardeningAnswer sends text to the task.
func hardeningAnswer(t *testing.T, apiURL, taskID, text string) {
	t.Helper()
	hardeningSend(t, apiURL, `{"messageId":"`+a2a.NewMessageID()+`","taskId":"`+taskID+`","role":"ROLE_USER","parts":[{"text":"`+text+`"}]}`)
}

func hardeningSend(t *testing.T, apiURL, message string) string {
	t.Helper()
	resp, err := http.DefaultClient.Do(hardeningRequest(t, http.MethodPost, apiURL+"/agents/travel",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":`+message+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil || out.Result.Task.ID == "" {
		t.Fatalf("SendMessage: %s %s", resp.Status, raw)
	}
	return out.Result.Task.ID
}

// sseEvents are the data lines of an open stream.
type sseEvents chan string

// hardeningStream opens req as a stream, closed at the end of the test. A
// 429 is retried for a while: the streams of the test before may not have
// given their slots back yet.
func hardeningStream(t *testing.T, req *http.Request) sseEvents {
	t.Helper()
	body, _ := io.ReadAll(req.Body)
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		var err error
		if resp, err = http.DefaultClient.Do(r); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("not a stream: %s %s", resp.Status, body)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(sseEvents, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
				events <- string(bytes.TrimSpace(data))
			}
		}
	}()
	return events
}

// next waits up to 30 s for the stream's next event.
func (e sseEvents) next(t *testing.T) string {
	t.Helper()
	select {
	case ev, ok := <-e:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
		return ""
	}
}
