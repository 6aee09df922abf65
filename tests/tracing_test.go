package tests

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// otlpReceiver is an OTLP/HTTP traces endpoint (POST /v1/traces, protobuf)
// keeping the spans it receives, with their resource's service name.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service map[string]bool
	svcOf   map[*tracepb.Span]string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		svc := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				svc = kv.GetValue().GetStringValue()
				o.service[svc] = true
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
			for _, sp := range ss.Spans {
				o.svcOf[sp] = svc
			}
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// of returns the spans received of trace id.
func (o *otlpReceiver) of(traceID string) []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range o.spans {
		if hex.EncodeToString(s.TraceId) == traceID {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// TestTraces runs a travel task on serve with OTEL_EXPORTER_OTLP_ENDPOINT
// at an in-test OTLP/HTTP receiver, its requests sent with a W3C
// traceparent: the API's server spans (with the task ID), Temporal's
// spans of the update and workflow, and the activities' spans all arrive in
// the caller's trace, as service a2aflow; the access lines carry the trace
// ID.
func TestTraces(t *testing.T) {
	recv := &otlpReceiver{service: map[string]bool{}, svcOf: map[*tracepb.Span]string{}}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	// The push webhook: outbound requests carry the trace.
	var hookMu sync.Mutex
	var hookParents []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hookMu.Lock()
		hookParents = append(hookParents, r.Header.Get("traceparent"))
		hookMu.Unlock()
	}))
	t.Cleanup(hook.Close)
	s := harness.StartServe(t, t.TempDir(), "--log-format", "json", "--log-level", "info", "--push-allow-hosts", "loopback")

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	send := func(message string) (id, state string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.APIURL+"/", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":`+message+`,`+
				`"configuration":{"taskPushNotificationConfig":{"url":"`+hook.URL+`"}}}}`))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result struct {
				Task struct {
					ID     string `json:"id"`
					Status struct {
						State string `json:"state"`
					} `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &out); err != nil || out.Result.Task.ID == "" {
			t.Fatalf("SendMessage: %s %s", resp.Status, raw)
		}
		return out.Result.Task.ID, out.Result.Task.Status.State
	}
	text := func(taskID, text string) string {
		task := ""
		if taskID != "" {
			task = `"taskId":"` + taskID + `",`
		}
		return `{"messageId":"` + a2a.NewMessageID() + `",` + task + `"role":"ROLE_USER","parts":[{"text":"` + text + `"}]}`
	}
	taskID, _ := send(text("", "Book a flight"))
	for _, answer := range []string{"Lisbon", "2026-12-24", "2"} {
		if _, state := send(text(taskID, answer)); answer == "2" && state != "TASK_STATE_COMPLETED" {
			t.Fatalf("task %s is %s, want completed", taskID, state)
		}
	}

	// Every kind of span wanted, by name prefix.
	want := []string{"RunWorkflow:", "RunActivity:", "HandleUpdate:", "UpdateWithStartWorkflow:", "HTTP "}
	var missing []string
	var serverSpan bool
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans := recv.of(traceID)
		serverSpan, missing = false, nil
		for _, sp := range spans {
			if sp.Kind == tracepb.Span_SPAN_KIND_SERVER && spanAttr(sp, "a2a.task_id") == taskID && spanAttr(sp, "agent") != "" {
				serverSpan = true
			}
		}
		for _, prefix := range want {
			found := false
			for _, sp := range spans {
				if strings.HasPrefix(sp.Name, prefix) {
					found = true
				}
			}
			if !found {
				missing = append(missing, prefix)
			}
		}
		// The workflow's start goes in an update-with-start or a start.
		started := false
		for _, sp := range spans {
			if strings.HasPrefix(sp.Name, "UpdateWithStartWorkflow:") || strings.HasPrefix(sp.Name, "StartWorkflow:") || strings.HasPrefix(sp.Name, "UpdateWorkflow:") {
				started = true
			}
		}
		if !started {
			missing = append(missing, "UpdateWithStartWorkflow/StartWorkflow/UpdateWorkflow")
		}
		if serverSpan && len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			names := make([]string, 0, len(spans))
			for _, sp := range spans {
				names = append(names, sp.Name)
			}
			t.Fatalf("trace %s: server span with task %s: %v; missing %v; spans: %v", traceID, taskID, serverSpan, missing, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
	names := map[string]bool{}
	for _, sp := range recv.of(traceID) {
		names[sp.Name] = true
	}
	t.Logf("spans of trace %s: %v", traceID, names)
	for _, sp := range recv.of(traceID) {
		if (strings.HasPrefix(sp.Name, "RunWorkflow:") || strings.HasPrefix(sp.Name, "RunActivity:")) &&
			(spanAttr(sp, "a2a.task_id") != taskID || spanAttr(sp, "agent") == "") {
			t.Errorf("span %s: a2a.task_id %q agent %q, want %s and the agent", sp.Name, spanAttr(sp, "a2a.task_id"), spanAttr(sp, "agent"), taskID)
		}
	}
	if !names["POST /"] {
		t.Errorf("no span POST / (the JSON-RPC endpoint)")
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		hookMu.Lock()
		parents := strings.Join(hookParents, " ")
		hookMu.Unlock()
		if strings.Contains(parents, "00-"+traceID+"-") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no push notification carried trace %s: traceparents %q", traceID, parents)
		}
		time.Sleep(100 * time.Millisecond)
	}
	recv.mu.Lock()
	services := recv.service
	recv.mu.Unlock()
	if !services["a2aflow"] {
		t.Errorf("service names %v, want a2aflow", services)
	}
	if out := s.Proc().Out.String(); !strings.Contains(out, `"msg":"exporting traces"`) {
		t.Errorf("serve did not log that it exports traces:\n%s", out)
	}
	if out := s.Proc().Out.String(); !strings.Contains(out, `"TraceID":"`+traceID+`"`) {
		t.Errorf("no activity line carries TraceID %s:\n%s", traceID, out)
	}
	if out := s.Proc().Out.String(); !strings.Contains(out, `"trace_id":"`+traceID+`"`) {
		t.Errorf("no log line carries trace_id %s:\n%s", traceID, out)
	}
}

// TestTracesAcrossDelegation: a2aflow A's router delegates, by @mention, to
// the travel agent of a2aflow B; both export to one OTLP receiver as two
// services. The caller's trace goes through A into B: B's server span of
// the delegated request is in the caller's trace, the child of A's client
// span.
func TestTracesAcrossDelegation(t *testing.T) {
	recv := &otlpReceiver{service: map[string]bool{}, svcOf: map[*tracepb.Span]string{}}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_SERVICE_NAME", "a2aflow-b")
	b := harness.StartServe(t, t.TempDir())
	t.Setenv("OTEL_SERVICE_NAME", "a2aflow-a")
	dataDir := t.TempDir()
	harness.AddAgent(t, dataDir, "peer", b.APIURL+"/agents/travel")
	a := harness.StartServe(t, dataDir)

	const traceID = "0af7651916cd43dd8448eb211c80319c"
	req, _ := http.NewRequest(http.MethodPost, a.APIURL+"/agents/router", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+a2a.NewMessageID()+
			`","role":"ROLE_USER","parts":[{"text":"@peer Book a flight"}]}}}`))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-b7ad6b7169203331-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"task"`) {
		t.Fatalf("SendMessage to the router: %s %s", resp.Status, raw)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		spans := recv.of(traceID)
		recv.mu.Lock()
		clientSpans := map[string]bool{} // A's client spans' IDs
		for _, sp := range spans {
			if recv.svcOf[sp] == "a2aflow-a" && sp.Kind == tracepb.Span_SPAN_KIND_CLIENT {
				clientSpans[hex.EncodeToString(sp.SpanId)] = true
			}
		}
		var found bool
		var seen []string
		for _, sp := range spans {
			seen = append(seen, recv.svcOf[sp]+"/"+sp.Name)
			if recv.svcOf[sp] == "a2aflow-b" && sp.Kind == tracepb.Span_SPAN_KIND_SERVER && clientSpans[hex.EncodeToString(sp.ParentSpanId)] {
				found = true
			}
		}
		recv.mu.Unlock()
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server span of a2aflow-b child of a client span of a2aflow-a in trace %s; spans: %v", traceID, seen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
