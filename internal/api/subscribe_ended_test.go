package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// jsonRPCClient is a2a-go's JSON-RPC client transport to url.
func jsonRPCClient(t *testing.T, url string) a2aclient.Transport {
	t.Helper()
	tr := a2aclient.NewJSONRPCTransport(url, http.DefaultClient)
	t.Cleanup(func() { _ = tr.Destroy() })
	return tr
}

// TestSubscribeEndedJSONRPC: over JSON-RPC, SubscribeToTask of a task that
// has ended answers 200 text/event-stream whose first and only event is
// the UnsupportedOperation error (-32004), and a2a-go's JSON-RPC client
// reads it as that error. (Over HTTP+JSON the refusal is an HTTP error
// before any stream: a2abinding's refuseSubscription.)
func TestSubscribeEndedJSONRPC(t *testing.T) {
	srv := httptest.NewServer(fuzzHandler(t))
	t.Cleanup(srv.Close)

	body := `{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":"` + fuzzKnownTask + `"}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/agents/echo", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("answer %d %s, want 200 text/event-stream", resp.StatusCode, ct)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			events = append(events, strings.TrimSpace(data))
		}
	}
	if len(events) != 1 {
		t.Fatalf("events %q, want the error alone", events)
	}
	var event struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(events[0]), &event); err != nil || event.Error.Code != -32004 || string(event.ID) != "7" {
		t.Errorf("event %s (%v), want the request's id and error -32004", events[0], err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := jsonRPCClient(t, srv.URL+"/agents/echo")
	if err := firstError(tr.SubscribeToTask(ctx, nil, &a2a.SubscribeToTaskRequest{ID: fuzzKnownTask})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("a2a-go's JSON-RPC client reads %v, want UnsupportedOperation", err)
	}
}

// TestSubscribeRefusalBeforeStreamLost is why a2aflow does not refuse such
// a subscription with a plain JSON-RPC error response before any stream,
// the other reading of A2A: a2a-go v2.4.0's JSON-RPC client reads a
// streaming answer as SSE only (a2aclient/jsonrpc.go
// sendStreamingRequest, internal/sse ParseDataStream), so it finds no event
// and no error in such a response: the subscription ends as if the task
// had nothing to say. (@a2a-js/sdk 1.3.0 reads both forms: the plain error
// typed, the error event as an Error whose cause is the typed error;
// tests/js.) When this test fails, a2a-go reads the plain form too, and the
// choice can be made again.
func TestSubscribeRefusalBeforeStreamLost(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"task t is TASK_STATE_COMPLETED; there is nothing to subscribe to"}}`))
	}))
	t.Cleanup(plain.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := jsonRPCClient(t, plain.URL)
	var events int
	var streamErr error
	for e, err := range tr.SubscribeToTask(ctx, nil, &a2a.SubscribeToTaskRequest{ID: "t"}) {
		if err != nil {
			streamErr = err
			break
		}
		if e != nil {
			events++
		}
	}
	if streamErr != nil || events != 0 {
		t.Errorf("a2a-go's JSON-RPC client no longer ignores a plain JSON-RPC error answering a subscription: "+
			"it read %d events and error %v (UnsupportedOperation: %v). Refusing before the stream may reach its callers now: "+
			"see the choice in a2abinding/streams.go refuseSubscription", events, streamErr, errors.Is(streamErr, a2a.ErrUnsupportedOperation))
	}
}
