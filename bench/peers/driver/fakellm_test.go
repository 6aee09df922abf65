package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// complete posts a chat completion request to the fake and returns the
// assistant's message (plain JSON or, with stream, its SSE chunks put back
// together).
func complete(t *testing.T, url string, body map[string]any) (text, tool, args string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	type msg struct {
		Content   *string `json:"content"`
		ToolCalls []struct {
			Function struct{ Name, Arguments string } `json:"function"`
		} `json:"tool_calls"`
	}
	take := func(m msg) {
		if m.Content != nil {
			text += *m.Content
		}
		for _, c := range m.ToolCalls {
			tool, args = c.Function.Name, c.Function.Arguments
		}
	}
	if body["stream"] == true {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var chunk struct{ Choices []struct{ Delta msg } }
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				t.Fatal(err)
			}
			take(chunk.Choices[0].Delta)
		}
		return
	}
	var out struct{ Choices []struct{ Message msg } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	take(out.Choices[0].Message)
	return
}

func tools(names ...string) []any {
	var out []any
	for _, n := range names {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{"type": "object"}}})
	}
	return out
}

// TestFakeLLMScript plays both variants of the bench's conversation against
// the fake, as a2aflow (ask_user) and as the frameworks whose question ends
// the turn, in plain JSON and streamed.
func TestFakeLLMScript(t *testing.T) {
	srv := httptest.NewServer(&fakeLLM{})
	defer srv.Close()
	user := func(s string) map[string]any { return map[string]any{"role": "user", "content": s} }
	asked := map[string]any{"role": "assistant", "content": "Where to?"}
	askCall := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "ask_user", "arguments": "{}"}}}}
	bookCall := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "book_trip", "arguments": "{}"}}}}
	for _, stream := range []bool{false, true} {
		for _, tt := range []struct {
			name                 string
			tools                []any
			msgs                 []any
			text, tool, argsPart string
		}{
			{"question as text", nil, []any{user("Book a trip")}, "Where to?", "", ""},
			{"answer as text", nil, []any{user("Book a trip"), asked, user("Lisbon")}, "Booked Lisbon", "", ""},
			{"question with ask_user", tools("ask_user"), []any{user("Book a trip")}, "", "ask_user", "Where to?"},
			{"ask_user's answer", tools("ask_user"), []any{user("Book a trip"), askCall, map[string]any{"role": "tool", "tool_call_id": "c1", "content": "Oslo"}}, "Booked Oslo", "", ""},
			{"city to book_trip", tools("book_trip"), []any{user("Book a trip"), asked, map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Lima"}}}}, "", "book_trip", `"city":"Lima"`},
			{"book_trip's result", tools("book_trip"), []any{user("Book a trip"), asked, user("Lima"), bookCall, map[string]any{"role": "tool", "tool_call_id": "c2", "content": "Booked Lima"}}, "Booked Lima", "", ""},
		} {
			text, tool, args := complete(t, srv.URL, map[string]any{"model": "fake", "stream": stream, "messages": tt.msgs, "tools": tt.tools})
			if text != tt.text || tool != tt.tool || !strings.Contains(args, tt.argsPart) {
				t.Errorf("%s (stream %v): got text %q tool %q args %q, want %q %q %q", tt.name, stream, text, tool, args, tt.text, tt.tool, tt.argsPart)
			}
		}
	}
}

// TestPeerFilesCompile compiles the peers' Python agent files (syntax only:
// their frameworks are in the venvs `make bench-peers` makes).
func TestPeerFilesCompile(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	files, _ := filepath.Glob("../*/*.py")
	if len(files) < 3 {
		t.Fatalf("found %d Python agent files, want the three peers'", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(python, "-c", "import ast, sys; ast.parse(sys.stdin.read(), sys.argv[1])", f)
		cmd.Stdin = strings.NewReader(string(src))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
}
