package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2aext"
	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

const (
	requiredExt = "urn:a2aflow:test:required"
	optionalExt = "urn:a2aflow:test:optional"
)

// sendRecorder is a fake Temporal that records the SendMessage updates it
// is asked to start and answers that it is unavailable: the tests here are
// about what reaches Temporal, not what it does.
type sendRecorder struct {
	client.Client
	mu   sync.Mutex
	sent []wire.SendMessageInput
}

func (f *sendRecorder) NewWithStartWorkflowOperation(client.StartWorkflowOptions, any, ...any) client.WithStartWorkflowOperation {
	return fuzzStartOp{}
}

func (f *sendRecorder) UpdateWithStartWorkflow(_ context.Context, opts client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in, ok := opts.UpdateOptions.Args[0].(wire.SendMessageInput); ok {
		f.sent = append(f.sent, in)
	}
	return nil, serviceerror.NewUnavailable("fake Temporal records and is unavailable")
}

func (f *sendRecorder) takeSent() []wire.SendMessageInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.sent
	f.sent = nil
	return out
}

func extensionServer(t *testing.T) (*httptest.Server, *sendRecorder) {
	t.Helper()
	agent := &workflows.Agent{
		Name: "strict", Description: "needs an extension",
		Extensions: []a2a.AgentExtension{
			{URI: requiredExt, Required: true, Description: "must be activated"},
			{URI: optionalExt, Params: map[string]any{"level": "basic"}},
		},
		Handle: func(workflow.Context, *workflows.Task) error { return nil },
	}
	reg, err := engine.NewRegistry(agent)
	if err != nil {
		t.Fatal(err)
	}
	fake := &sendRecorder{}
	srv := httptest.NewServer(api.New(fake, reg, api.Config{WaitTimeout: 2 * time.Second}).Handler())
	t.Cleanup(srv.Close)
	return srv, fake
}

// TestRequiredExtension: an agent's required extension is declared in its
// card, a request that does not activate it is refused with
// ExtensionSupportRequired on both bindings (a2a-go's client reads the
// error as such), and one that does reaches Temporal with the activated
// extensions, which the answer's A2A-Extensions header names.
func TestRequiredExtension(t *testing.T) {
	srv, fake := extensionServer(t)
	ctx := t.Context()
	card, err := agentcard.DefaultResolver.Resolve(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := []a2a.AgentExtension{
		{URI: requiredExt, Required: true, Description: "must be activated"},
		{URI: optionalExt, Params: map[string]any{"level": "basic"}},
		{URI: taskservice.ForkExtensionURI, Description: "a2aflow's fork and retry: the JSON-RPC methods ForkTask {id, atMessage, contextId?} and RetryTask {id}, " +
			"and POST /tasks/{id}:fork and /tasks/{id}:retry over HTTP+JSON, start a new task that reuses the original's recorded steps"}, // on every card
		{URI: taskservice.LiveExtensionURI, Description: "a2aflow's live answers on A2A 1.1 streams: an answer's chunks while it is written, " +
			"as events marked with the metadata key a2aflow.live that carry no generation (they change no task state); " +
			"clients leave them out of generation tracking. A2A 1.0 and 0.3 streams always carry them"}, // on every card
	}
	if diff := cmp.Diff(want, card.Capabilities.Extensions); diff != "" {
		t.Errorf("card extensions (-want +got):\n%s", diff)
	}
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			prefer := a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}})
			plain, err := a2aclient.NewFromCard(ctx, card, prefer)
			if err != nil {
				t.Fatal(err)
			}
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
			_, err = plain.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			if !errors.Is(err, a2a.ErrExtensionSupportRequired) || !strings.Contains(err.Error(), requiredExt) {
				t.Errorf("SendMessage without the required extension: %v, want ExtensionSupportRequired naming %s", err, requiredExt)
			}
			_, err = plain.GetTask(ctx, &a2a.GetTaskRequest{ID: "some-task"})
			if !errors.Is(err, a2a.ErrExtensionSupportRequired) {
				t.Errorf("GetTask without the required extension: %v, want ExtensionSupportRequired", err)
			}
			if sent := fake.takeSent(); len(sent) != 0 {
				t.Errorf("a refused request reached Temporal: %+v", sent)
			}

			activating, err := a2aclient.NewFromCard(ctx, card, prefer,
				a2aclient.WithCallInterceptors(a2aext.NewActivator(optionalExt, requiredExt, "urn:a2aflow:test:unknown")))
			if err != nil {
				t.Fatal(err)
			}
			_, err = activating.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
			if errors.Is(err, a2a.ErrExtensionSupportRequired) {
				t.Errorf("SendMessage with the required extension refused: %v", err)
			}
			sent := fake.takeSent()
			if len(sent) != 1 {
				t.Fatalf("Temporal got %d SendMessage updates, want 1", len(sent))
			}
			if diff := cmp.Diff([]string{requiredExt, optionalExt}, sent[0].Extensions); diff != "" {
				t.Errorf("activated extensions in the update (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequiredExtensionWire checks the wire forms: the JSON-RPC code
// -32008, HTTP+JSON 400 with reason EXTENSION_SUPPORT_REQUIRED, and the
// activated extensions in the answer's header, 0.3's X- header included.
func TestRequiredExtensionWire(t *testing.T) {
	srv, _ := extensionServer(t)
	post := func(t *testing.T, path, body string, header map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(raw)
	}
	rpc := `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	rest := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	v1 := map[string]string{"A2A-Version": "1.0"}

	resp, body := post(t, "/", rpc, v1)
	if !strings.Contains(body, `"code":-32008`) || !strings.Contains(body, `"id":7`) || !strings.Contains(body, requiredExt) {
		t.Errorf("JSON-RPC without the extension: %d %s, want error -32008 for id 7 naming %s", resp.StatusCode, body, requiredExt)
	}
	resp, body = post(t, "/message:send", rest, v1)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "EXTENSION_SUPPORT_REQUIRED") {
		t.Errorf("HTTP+JSON without the extension: %d %s, want 400 with reason EXTENSION_SUPPORT_REQUIRED", resp.StatusCode, body)
	}

	// Several header values, commas, spaces and unknown URIs: the agent's
	// are activated, in the order it declares them.
	resp, body = post(t, "/message:send", rest, map[string]string{"A2A-Version": "1.0",
		"A2A-Extensions": " urn:x:unknown ,, " + optionalExt + "," + requiredExt})
	if got := resp.Header.Get("A2A-Extensions"); got != requiredExt+", "+optionalExt {
		t.Errorf("answer's A2A-Extensions %q, want %q (%d %s)", got, requiredExt+", "+optionalExt, resp.StatusCode, body)
	}
	if strings.Contains(body, "EXTENSION_SUPPORT_REQUIRED") {
		t.Errorf("activated request refused: %s", body)
	}
	resp, _ = post(t, "/", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
		map[string]string{"X-A2A-Extensions": requiredExt})
	if got := resp.Header.Get("X-A2A-Extensions"); got != requiredExt {
		t.Errorf("0.3 answer's X-A2A-Extensions %q, want %q", got, requiredExt)
	}
}
