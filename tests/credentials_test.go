package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// fakeGitHub is GitHub's REST API for the issues agent: the issues of
// octo/widgets (two issues and a pull request, which GitHub lists among
// them) to the bearer of good, 401 to anyone else. It records every call.
type fakeGitHub struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string // "METHOD PATH good|refused"
}

func newFakeGitHub(t *testing.T, good string) *fakeGitHub {
	t.Helper()
	g := &fakeGitHub{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := r.Header.Get("Authorization") == "Bearer "+good
		g.mu.Lock()
		g.calls = append(g.calls, fmt.Sprintf("%s %s %t", r.Method, r.URL.Path, ok))
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		if r.URL.Path != "/repos/octo/widgets/issues" || r.Header.Get("Accept") != "application/vnd.github+json" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `[{"number":7,"title":"Widgets wobble","html_url":"https://github.com/octo/widgets/issues/7","state":"open","user":{"login":"ann"}},`+
			`{"number":8,"title":"Add sprockets","html_url":"https://github.com/octo/widgets/pull/8","state":"open","user":{"login":"bob"},"pull_request":{"url":"x"}},`+
			`{"number":9,"title":"Docs","html_url":"https://github.com/octo/widgets/issues/9","state":"open","user":{"login":"cy"}}]`)
	}))
	t.Cleanup(g.Close)
	return g
}

// called returns the calls so far, "METHOD PATH true" for one with the
// good token.
func (g *fakeGitHub) called() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// pushRecorder is a webhook that keeps every push notification it is
// sent: the body, then the Authorization header.
type pushRecorder struct {
	*httptest.Server
	mu     sync.Mutex
	pushed bytes.Buffer
}

func newPushRecorder(t *testing.T) *pushRecorder {
	p := &pushRecorder{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.pushed.Write(body)
		p.pushed.WriteString(r.Header.Get("Authorization"))
	}))
	t.Cleanup(p.Close)
	return p
}

// waitCompleted waits until a notification of a completed task came and
// returns every one so far.
func (p *pushRecorder) waitCompleted(t *testing.T) string {
	t.Helper()
	var all string
	eventually(t, 10*time.Second, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		all = p.pushed.String()
		if !strings.Contains(all, "TASK_STATE_COMPLETED") {
			return fmt.Errorf("the webhook has not seen the completed task yet")
		}
		return nil
	})
	return all
}

// TestCredentialsNeverInHistory runs the issues agent, which asks for a
// GitHub token (auth-required), against a fake GitHub speaking its REST
// API. The user first gives a token GitHub refuses, then a good one; the
// task lists the repository's issues. Neither token is anywhere a2aflow
// shows or keeps: not in the task's history in Temporal, not in the Temporal
// UI's API, not in GetTask, ListTasks or the stream, not in a push
// notification, not in the server's logs, and only sealed in the payload
// store.
func TestCredentialsNeverInHistory(t *testing.T) {
	const good, bad = "ghp_GoodTokenOfTheUser1234567890", "ghp_RefusedToken0987654321"
	github := newFakeGitHub(t, good)
	hook := newPushRecorder(t)

	dataDir := t.TempDir()
	// The issues agent is a demo of the a2aflow command: it reads its GitHub
	// API from its own environment variable, not from a2aflow's flags.
	s := harness.StartServeEnv(t, dataDir, []string{"A2AFLOW_GITHUB_API_URL=" + github.URL}, "--push-allow-hosts", "loopback", "--log-level", "debug")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/issues")

	// The task asks which repository is meant, with a webhook watching it.
	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("List the open issues of octo/widgets"))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: first, Config: &a2a.SendMessageConfig{
		PushConfig: &a2a.PushConfig{ID: "watch", URL: hook.URL + "/a2a"}}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	harness.WantState(t, task, a2a.TaskStateAuthRequired, "")
	if data := task.Status.Message.Parts[len(task.Status.Message.Parts)-1].Data(); fmt.Sprint(data) != "map[authType:bearer service:github]" {
		t.Errorf("the auth-required status carries %v, want the auth type and the service", data)
	}

	// A token GitHub refuses: asked again.
	task = harness.Send(t, ctx, c, task.ID, bad)
	harness.WantState(t, task, a2a.TaskStateAuthRequired, "")
	if !strings.Contains(harness.StatusText(task), "GitHub refused that token") {
		t.Errorf("after a refused token the task says %q", harness.StatusText(task))
	}
	// The good one, as a data part this time, over a stream.
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"credential": good}))
	m.TaskID = task.ID
	var streamed bytes.Buffer
	for e, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}) {
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(e)
		streamed.Write(raw)
	}
	got := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
	if harness.StatusText(got) != "2 open issue(s) in octo/widgets." || len(got.Artifacts) != 1 {
		t.Fatalf("completed task says %q with %d artifacts", harness.StatusText(got), len(got.Artifacts))
	}
	if calls := github.called(); len(calls) != 2 {
		t.Errorf("GitHub was called %v, want twice (the refused token, the good one)", calls)
	}

	// Where the tokens must not be.
	var places = map[string]string{}
	rawTask, _ := json.Marshal(got)
	places["GetTask"] = string(rawTask)
	list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{IncludeArtifacts: true})
	if err != nil {
		t.Fatal(err)
	}
	rawList, _ := json.Marshal(list)
	places["ListTasks"] = string(rawList)
	places["the stream"] = streamed.String()
	places["push notifications"] = hook.waitCompleted(t)

	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	var history bytes.Buffer
	iter := tc.GetWorkflowHistory(ctx, string(task.ID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := proto.Marshal(e) // payloads as their bytes, not base64
		history.Write(raw)
	}
	places["Temporal history"] = history.String()
	resp, err := http.Get(s.UIURL + "/api/v1/namespaces/default/workflows/" + string(task.ID) + "/history")
	if err != nil {
		t.Fatal(err)
	}
	uiHistory, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(uiHistory) < 1000 {
		t.Errorf("the UI's history API answered %d with %d bytes", resp.StatusCode, len(uiHistory))
	}
	places["the Temporal UI's API"] = withDecodedStrings(uiHistory)
	places["the server's logs"] = s.Proc().Out.String()
	var blobs strings.Builder
	_ = filepath.WalkDir(filepath.Join(dataDir, "blobs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			raw, _ := os.ReadFile(path)
			blobs.Write(raw)
		}
		return nil
	})
	places["the payload store"] = blobs.String()

	for where, text := range places {
		for _, token := range []string{good, bad} {
			if strings.Contains(text, token) {
				t.Errorf("a token is in %s", where)
			}
		}
	}
	// The searches see payloads' contents: the reference is found.
	for _, where := range []string{"Temporal history", "the Temporal UI's API"} {
		if !strings.Contains(places[where], "credentialRef") {
			t.Errorf("%s has no credential reference: the search does not see payloads, or the answer skipped the credential store", where)
		}
	}
	if !strings.Contains(blobs.String(), "a2aflow-sealed:v2:") {
		t.Error("the payload store holds no sealed credential")
	}
}

// withDecodedStrings returns a JSON document's text followed by every string
// in it that is base64, decoded: how payloads (whose data is base64 in
// protobuf JSON) are searched.
func withDecodedStrings(raw []byte) string {
	var out strings.Builder
	out.Write(raw)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				out.Write(b)
			}
		}
	}
	var doc any
	if json.Unmarshal(raw, &doc) == nil {
		walk(doc)
	}
	return out.String()
}
