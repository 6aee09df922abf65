package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/go-cmp/cmp"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// seenRequest is one A2A request the recording proxy passed on.
type seenRequest struct {
	path, version, method string // method: the JSON-RPC method, "" for HTTP+JSON
}

// recordingProxy forwards to target and records each POST's path, A2A-Version
// header and JSON-RPC method: what the server received, transport-wise.
func recordingProxy(t *testing.T, target string) (*httptest.Server, func() []seenRequest) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []seenRequest
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var rpc struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &rpc)
			mu.Lock()
			seen = append(seen, seenRequest{path: r.URL.Path, version: r.Header.Get("A2A-Version"), method: rpc.Method})
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// apiKeyTransport sends its key as X-API-Key with every request.
type apiKeyTransport string

func (k apiKeyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// TestCLIMessageFlags runs `a2aflow send --file --data --metadata
// --reference-task`, `--binding`/`--protocol-version`, `push
// set|list|get|delete` and `card --extended` against a2aflow serve, and
// checks each by what the server received: the task's stored message read
// with the a2a-go client, the requests seen by a proxy, the push configs
// the a2a-go client lists, the caller the extended card names.
func TestCLIMessageFlags(t *testing.T) {
	const key = "alice-key-0123456789"
	s := harness.StartServe(t, t.TempDir(), "--api-keys", "alice="+key, "--push-allow-hosts", "loopback")
	proxy, seen := recordingProxy(t, s.APIURL)
	ctx := harness.Context(t)
	echo := proxy.URL + "/agents/echo"
	// The a2a-go clients that read what the server holds, past the proxy.
	clientOf := func(agent string) *a2aclient.Client {
		card, err := agentcard.DefaultResolver.Resolve(ctx, s.APIURL+"/agents/"+agent)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: apiKeyTransport(key)}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	c := clientOf("echo")
	stored := func(t *testing.T, id string) *a2a.Message {
		t.Helper()
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range task.History {
			if m.Role == a2a.MessageRoleUser {
				return m
			}
		}
		t.Fatalf("task %s has no user message", id)
		return nil
	}
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("buy milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "dot.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\nfake"), 0o600); err != nil {
		t.Fatal(err)
	}

	var firstTask string
	t.Run("file data metadata", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", echo, "--api-key", key, "--file", notes, "--file", "https://example.com/docs/guide.txt",
			"--data", `{"n":1}`, "--metadata", `{"source":"cli"}`, "hello")
		wantRun(t, r, 0, "completed")
		firstTask, _ = taskIDOf(t, r)
		m := stored(t, firstTask)
		type part struct {
			Text, Filename, MediaType, URL string
			Raw                            []byte
			Data                           any
		}
		var got []part
		for _, p := range m.Parts {
			got = append(got, part{Text: p.Text(), Filename: p.Filename, MediaType: p.MediaType, URL: string(p.URL()), Raw: p.Raw(), Data: p.Data()})
		}
		want := []part{
			{Text: "hello"},
			{Filename: "notes.txt", MediaType: "text/plain", Raw: []byte("buy milk\n")},
			{Filename: "guide.txt", MediaType: "text/plain", URL: "https://example.com/docs/guide.txt"},
			{Data: map[string]any{"n": float64(1)}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("parts the server stored (-want +got):\n%s", diff)
		}
		if m.Metadata["source"] != "cli" {
			t.Errorf("metadata the server stored = %v, want source=cli", m.Metadata)
		}
	})

	t.Run("reference task", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", echo, "--api-key", key, "--reference-task", firstTask, "refine it")
		wantRun(t, r, 0, "completed")
		id, _ := taskIDOf(t, r)
		if got := stored(t, id).ReferenceTasks; len(got) != 1 || string(got[0]) != firstTask {
			t.Errorf("referenceTaskIds the server stored = %v, want [%s]", got, firstTask)
		}
	})

	t.Run("a file the agent does not take", func(t *testing.T) {
		r := runCLI(t, "send", "--agent", echo, "--api-key", key, "--file", png, "look")
		wantRun(t, r, 4, "image/png", "it takes text/plain, application/json")
	})

	t.Run("binding and protocol version", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want seenRequest
		}{
			{[]string{"--binding", "rest"}, seenRequest{path: "/agents/echo/message:send", version: "1.0"}},
			{[]string{"--binding", "jsonrpc"}, seenRequest{path: "/agents/echo", version: "1.0", method: "SendMessage"}},
			{[]string{"--binding", "jsonrpc", "--protocol-version", "0.3"}, seenRequest{path: "/agents/echo", version: "0.3", method: "message/send"}},
			{[]string{"--binding", "rest", "--protocol-version", "0.3"}, seenRequest{path: "/agents/echo/v1/message:send", version: "0.3"}},
		} {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				seen()
				r := runCLI(t, append([]string{"send", "--agent", echo, "--api-key", key, "hi"}, tc.args...)...)
				wantRun(t, r, 0, "completed")
				got := seen()
				if len(got) != 1 {
					t.Fatalf("the server got %d requests, want 1: %+v", len(got), got)
				}
				if got[0] != tc.want {
					t.Errorf("the server got %+v, want %+v", got[0], tc.want)
				}
			})
		}
		r := runCLI(t, "send", "--agent", echo, "--api-key", key, "--binding", "grpc", "hi")
		wantRun(t, r, 1, "offers no grpc interface")
		if got := seen(); len(got) != 0 {
			t.Errorf("a refused binding still sent %+v", got)
		}
	})

	t.Run("push set list get delete", func(t *testing.T) {
		travel := proxy.URL + "/agents/travel"
		r := runCLI(t, "send", "--agent", travel, "--api-key", key, "Book a trip")
		wantRun(t, r, 2, "input-required")
		task, _ := taskIDOf(t, r)
		hook := "http://127.0.0.1:9/hook"
		r = runCLI(t, "push", "set", "--agent", travel, "--api-key", key, task, hook, "--id", "h1", "--token", "tok-0123456789")
		wantRun(t, r, 0, "h1", hook)
		if strings.Contains(r.stdout, "tok-0123456789") {
			t.Errorf("push set printed the token:\n%s", r.stdout)
		}
		tc := clientOf("travel")
		configs, err := tc.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: a2a.TaskID(task)})
		if err != nil {
			t.Fatal(err)
		}
		if len(configs) != 1 || configs[0].ID != "h1" || configs[0].URL != hook {
			t.Fatalf("push configs the server holds = %+v, want h1 -> %s", configs, hook)
		}
		wantRun(t, runCLI(t, "push", "list", "--agent", travel, "--api-key", key, task), 0, "h1", hook)
		wantRun(t, runCLI(t, "push", "get", "--agent", travel, "--api-key", key, task, "h1"), 0, "h1", hook)
		wantRun(t, runCLI(t, "push", "get", "--agent", travel, "--api-key", key, task, "nope"), 4)
		wantRun(t, runCLI(t, "push", "delete", "--agent", travel, "--api-key", key, task, "h1"), 0, "Deleted push config h1")
		configs, err = tc.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: a2a.TaskID(task)})
		if err != nil {
			t.Fatal(err)
		}
		if len(configs) != 0 {
			t.Errorf("push configs after delete = %+v, want none", configs)
		}
	})

	t.Run("extended card", func(t *testing.T) {
		r := runCLI(t, "card", "--extended", "--json", "--api-key", key, echo)
		wantRun(t, r, 0, `"principal": "alice"`)
		r = runCLI(t, "card", "--extended", echo)
		if r.code == 0 {
			t.Errorf("card --extended without credentials succeeded:\n%s", r.stdout)
		}
	})
}
