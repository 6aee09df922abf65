package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestMessageOnlyAgent: an agent the config file declares message-only
// (the echo agent, which answers at once) answers a new message with its
// reply as an A2A Message naming no task (A2A §3.1.1; the TCK's
// DM-MSG-001), over JSON-RPC, HTTP+JSON and a stream, to a2a-go's client;
// another agent still answers with the task.
func TestMessageOnlyAgent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(path, []byte("[[agents]]\nname = \"echo\"\nmessage-only = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := harness.StartServe(t, filepath.Join(dir, "data"), "--config", path)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
	reply := func(t *testing.T, res a2a.SendMessageResult) {
		t.Helper()
		m, ok := res.(*a2a.Message)
		if !ok {
			t.Fatalf("answer %T %+v, want a Message", res, res)
		}
		if m.Role != a2a.MessageRoleAgent || len(m.Parts) != 1 || m.Parts[0].Text() != "hello" || m.TaskID != "" || m.ContextID == "" {
			t.Errorf("message %+v, want the agent's \"hello\" in a context, naming no task", m)
		}
	}

	t.Run("JSON-RPC", func(t *testing.T) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
		if err != nil {
			t.Fatal(err)
		}
		reply(t, res)
	})
	t.Run("stream", func(t *testing.T) {
		var events []a2a.Event
		for e, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))}) {
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		if len(events) != 1 {
			t.Fatalf("events %+v, want the reply alone", events)
		}
		reply(t, events[0].(a2a.SendMessageResult))
	})
	t.Run("HTTP+JSON", func(t *testing.T) {
		body := `{"message":{"messageId":"` + a2a.NewMessageID() + `","role":"ROLE_USER","parts":[{"text":"hello"}]}}`
		req, _ := http.NewRequest(http.MethodPost, s.APIURL+"/agents/echo/message:send", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(raw, &got); err != nil || resp.StatusCode != http.StatusOK || got["message"] == nil || got["task"] != nil {
			t.Errorf("answer %d %s, want {\"message\": ...}", resp.StatusCode, raw)
		}
	})
	t.Run("another agent answers with the task", func(t *testing.T) {
		travel, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/travel")
		if task := harness.Send(t, ctx, travel, "", "Book a flight"); task.ID == "" {
			t.Errorf("travel answered %+v, want a task", task)
		}
	})
}
