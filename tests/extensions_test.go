package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2aext"

	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// headerRecorder is an http.RoundTripper that keeps the A2A-Extensions
// header of every answer.
type headerRecorder struct {
	mu       sync.Mutex
	answered []string
}

func (h *headerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		h.mu.Lock()
		h.answered = append(h.answered, resp.Header.Get(a2a.SvcParamExtensions))
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headerRecorder) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.answered
	h.answered = nil
	return out
}

// TestExtensions drives the report agent's artifact-versions extension
// (artifactVersionsExtension) end to end with a2a-go's client over
// JSON-RPC and HTTP+JSON: the card declares it, a2aext's activator asks
// for it because the card does, the answer names it in its A2A-Extensions
// header, the skill sees it (the artifact lists it and says what it
// refines) and a message's own extension fields come back untouched. A
// client that does not activate it gets the plain artifact and no header.
func TestExtensions(t *testing.T) {
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	agentURL := s.APIURL + "/agents/report"
	card, err := agentcard.DefaultResolver.Resolve(ctx, agentURL)
	if err != nil {
		t.Fatal(err)
	}
	// The agent's own extension, and a2aflow's fork extension every card declares.
	var uris []string
	for _, e := range card.Capabilities.Extensions {
		uris = append(uris, e.URI)
	}
	if want := []string{artifactVersionsExtension, taskservice.ForkExtensionURI, taskservice.LiveExtensionURI}; !slices.Equal(uris, want) {
		t.Fatalf("report card declares extensions %+v, want %v", card.Capabilities.Extensions, want)
	}
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			rec := &headerRecorder{}
			hc := &http.Client{Transport: rec, Timeout: time.Minute}
			newClient := func(opts ...a2aclient.FactoryOption) *a2aclient.Client {
				opts = append(opts, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}),
					a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
				c, err := a2aclient.NewFromCard(ctx, card, opts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Destroy() })
				return c
			}
			// The activator asks for the extension because the card has it;
			// it would leave out one the card lacks.
			activating := newClient(a2aclient.WithCallInterceptors(a2aext.NewActivator(artifactVersionsExtension, "urn:example:not-declared")))
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Q3 review\nRevenue grew 12%."))
			msg.Extensions = []string{"urn:example:note-ext"}
			msg.Metadata = map[string]any{"urn:example:note-ext": map[string]any{"tag": "go"}}
			rec.take()
			task := sendTask(t, ctx, activating, msg)
			if got := rec.take(); !slices.Equal(got, []string{artifactVersionsExtension}) {
				t.Errorf("A2A-Extensions answered: %q, want [%s]", got, artifactVersionsExtension)
			}
			if len(task.Artifacts) != 1 {
				t.Fatalf("task %s has %d artifacts, want 1", task.ID, len(task.Artifacts))
			}
			a := task.Artifacts[0]
			if !slices.Equal(a.Extensions, []string{artifactVersionsExtension}) || a.Metadata["refines"] != "" || a.Metadata["version"] != float64(1) {
				t.Errorf("artifact with the extension: extensions %q metadata %v, want [%s] and version 1, refines \"\"", a.Extensions, a.Metadata, artifactVersionsExtension)
			}
			read, err := activating.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			first := read.History[0]
			if !slices.Equal(first.Extensions, msg.Extensions) || !jsonEqual(first.Metadata, msg.Metadata) {
				t.Errorf("the message's extension fields came back as %q %v, want %q %v", first.Extensions, first.Metadata, msg.Extensions, msg.Metadata)
			}

			plain := newClient()
			rec.take()
			task = sendTask(t, ctx, plain, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Plain\nNo extension.")))
			if got := rec.take(); slices.ContainsFunc(got, func(h string) bool { return h != "" }) {
				t.Errorf("A2A-Extensions answered without activation: %q, want none", got)
			}
			if a := task.Artifacts[0]; len(a.Extensions) != 0 || a.Metadata["refines"] != nil {
				t.Errorf("artifact without the extension: extensions %q metadata %v, want none and no refines", a.Extensions, a.Metadata)
			}
		})
	}

	// Without --card-key cards are unsigned: no key set, and --verify fails.
	if code, raw := getBody(t, s.APIURL+"/.well-known/jwks.json"); code != http.StatusNotFound {
		t.Errorf("GET /.well-known/jwks.json without a key: %d %s, want 404", code, raw)
	}
	wantRun(t, runCLI(t, "card", agentURL, "--verify"), 1, "does not verify", "no signature")

	// 0.3 clients name the header X-A2A-Extensions; comma-separated lists
	// and unknown URIs are fine, only the agent's are activated.
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"ext-v03","role":"user","parts":[{"kind":"text","text":"Legacy\nnotes"}]}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, agentURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-A2A-Extensions", "urn:example:unknown, "+artifactVersionsExtension)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("X-A2A-Extensions"); got != artifactVersionsExtension {
		t.Errorf("0.3 answer X-A2A-Extensions %q, want %s\n%s", got, artifactVersionsExtension, raw)
	}
	if !bytes.Contains(raw, []byte(artifactVersionsExtension)) {
		t.Errorf("0.3 answer's artifact does not list the extension:\n%s", raw)
	}
}

func sendTask(t *testing.T, ctx context.Context, c *a2aclient.Client, msg *a2a.Message) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("SendMessage answered %+v, want a completed task", res)
	}
	return task
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestJSExtensions is TestExtensions with the JavaScript SDK
// (tests/js/extensions.mjs): @a2a-js/sdk's withA2AExtensions activates the
// report agent's extension over its 1.0 JSON-RPC and HTTP+JSON transports.
func TestJSExtensions(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; .ci/run installs Node.js to run the JavaScript client tests")
	}
	requireNode20(t, node)
	dir := ensureJSDeps(t)
	s := harness.StartServe(t, t.TempDir())
	for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
		t.Run(binding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "extensions.mjs", s.APIURL+"/agents/report", binding, artifactVersionsExtension)
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node extensions.mjs %s: %v\nstdout:\n%s\nstderr:\n%s", binding, err, &stdout, &stderr)
			}
			var got struct {
				CardExtensions []string `json:"cardExtensions"`
				Activated      struct {
					ResponseHeader     string   `json:"responseHeader"`
					ArtifactExtensions []string `json:"artifactExtensions"`
					ArtifactRefines    *string  `json:"artifactRefines"`
					ArtifactVersion    any      `json:"artifactVersion"`
				} `json:"activated"`
				RoundTrip struct {
					Extensions []string       `json:"extensions"`
					Metadata   map[string]any `json:"metadata"`
				} `json:"roundTrip"`
				Plain struct {
					ResponseHeader     string   `json:"responseHeader"`
					ArtifactExtensions []string `json:"artifactExtensions"`
				} `json:"plain"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("extensions.mjs printed no report: %v\n%s\n%s", err, &stdout, &stderr)
			}
			uri := artifactVersionsExtension
			if want := []string{uri, taskservice.ForkExtensionURI, taskservice.LiveExtensionURI}; !slices.Equal(got.CardExtensions, want) {
				t.Errorf("card extensions %q, want %q", got.CardExtensions, want)
			}
			if got.Activated.ResponseHeader != uri || !slices.Equal(got.Activated.ArtifactExtensions, []string{uri}) ||
				got.Activated.ArtifactRefines == nil || *got.Activated.ArtifactRefines != "" {
				t.Errorf("with the extension: %+v, want header and artifact extensions %s and refines \"\"", got.Activated, uri)
			}
			if !slices.Equal(got.RoundTrip.Extensions, []string{"urn:example:note-ext"}) ||
				!jsonEqual(got.RoundTrip.Metadata, map[string]any{"urn:example:note-ext": map[string]any{"tag": "js"}}) {
				t.Errorf("message extension fields came back as %+v", got.RoundTrip)
			}
			if got.Plain.ResponseHeader != "" || len(got.Plain.ArtifactExtensions) != 0 {
				t.Errorf("without the extension: %+v, want no header and no artifact extensions", got.Plain)
			}
		})
	}
}

// artifactVersionsExtension is the URI of the report agent's extension
// (the a2aflow command's demo agents).
const artifactVersionsExtension = "https://github.com/a2aflow/a2aflow/extensions/artifact-versions/v1"
