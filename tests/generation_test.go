package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestGenerationSurvivesKillAndContinueAsNew is A2A 1.1's generation
// (docs/guides/protocol-versions.md) over a travel conversation: a 1.1
// client streams every turn over JSON-RPC and sees the generations 1, 2,
// 3... with no gap and no repeat, across a kill -9 of serve and the task
// continuing as new; GetTask agrees; a 1.0 client sees no generation.
func TestGenerationSurvivesKillAndContinueAsNew(t *testing.T) {
	s := startContinuingServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := &harness.V11{URL: s.APIURL}

	var seen []int64 // every generation, in order: the tasks' and the events'
	var taskID string
	turn := func(i int, text string) map[string]any {
		t.Helper()
		events, err := c.Stream(ctx, "SendStreamingMessage", map[string]any{
			"message": harness.UserMessage(fmt.Sprintf("gen-%03d", i), taskID, text)})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		var last map[string]any
		for j, e := range events {
			kind, obj := harness.StreamObject(t, e)
			gen, ok := harness.Generation(obj)
			if !ok {
				t.Fatalf("turn %d: %s without a generation: %v", i, kind, obj)
			}
			if j == 0 {
				// The stream starts with the task as it was when the
				// message was recorded: the generation last seen.
				if kind != "task" {
					t.Fatalf("turn %d: the stream starts with a %s", i, kind)
				}
				taskID, _ = obj["id"].(string)
				if len(seen) > 0 && gen != seen[len(seen)-1] {
					t.Fatalf("turn %d starts at generation %d; the last seen is %d", i, gen, seen[len(seen)-1])
				}
				if len(seen) == 0 {
					seen = append(seen, gen)
				}
			} else {
				seen = append(seen, gen)
			}
			last = obj
		}
		return last
	}

	turn(0, "Book a flight")
	turn(1, "Lisbon")
	for i := 2; i < 14; i++ {
		turn(i, fmt.Sprintf("day %d", i))
		if i == 7 {
			s.Proc().Kill()
			s.Restart()
		}
	}
	turn(14, "2026-12-24")
	last := turn(15, "2")
	if st, _ := last["status"].(map[string]any); st == nil || st["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("the last event is %v, want the completed status", last)
	}
	for i, g := range seen {
		if g != int64(i+1) {
			t.Fatalf("generations %v: want 1, 2, 3... with no gap or repeat (at %d)", seen, i)
		}
	}

	var task map[string]any
	if err := c.Call(ctx, "GetTask", map[string]any{"id": taskID}, &task); err != nil {
		t.Fatal(err)
	}
	if gen, _ := harness.Generation(task); gen != seen[len(seen)-1] {
		t.Errorf("GetTask's generation %d, want the last event's %d", gen, seen[len(seen)-1])
	}
	continued := 0
	for _, r := range listRuns(t, ctx, s.TemporalAddr, a2a.TaskID(taskID)) {
		if r.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			continued++
		}
	}
	if continued == 0 {
		t.Errorf("the task never continued as new: the test does not test that")
	}
	t.Logf("generations 1..%d over 16 turns, %d continue-as-new, one kill -9", len(seen), continued)

	// 1.0 and 0.3: nothing new.
	for _, v := range []string{"1.0", "0.3"} {
		old := &harness.V11{URL: s.APIURL, Version: v}
		var got map[string]any
		method := map[string]string{"1.0": "GetTask", "0.3": "tasks/get"}[v]
		if err := old.Call(ctx, method, map[string]any{"id": taskID}, &got); err != nil {
			t.Fatal(err)
		}
		meta, _ := got["metadata"].(map[string]any)
		if _, ok := got["generation"]; ok || meta["a2aflow.generation"] != nil {
			t.Errorf("an A2A %s GetTask shows a generation: %v %v", v, got["generation"], meta)
		}
		if got["id"] != taskID {
			t.Errorf("A2A %s GetTask = %v", v, got)
		}
	}
}

// TestGenerationMatchRace sends, twice over each binding, two messages
// with the same ifGenerationMatch to a travel task waiting for input, at
// once: exactly one wins, the other gets TaskGenerationMismatchError
// (JSON-RPC -32010; HTTP+JSON 409, ABORTED, TASK_GENERATION_MISMATCH). A
// stale generation is refused too, a new task ignores the field, and
// GetTask's currentGeneration long-polls.
func TestGenerationMatchRace(t *testing.T) {
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	s := harness.StartServe(t, t.TempDir(), "--grpc-addr", grpcAddr)
	ctx := harness.Context(t)
	c := &harness.V11{URL: s.APIURL}
	g := &harness.V11GRPC{Addr: grpcAddr}
	defer g.Close()

	var res map[string]any
	// A new task: ifGenerationMatch is ignored.
	if err := c.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage("race-0", "", "Book a flight"),
		"configuration": map[string]any{"ifGenerationMatch": "7"}}, &res); err != nil {
		t.Fatal(err)
	}
	task, _ := res["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	generation := func() int64 {
		var got map[string]any
		if err := c.Call(ctx, "GetTask", map[string]any{"id": taskID}, &got); err != nil {
			t.Fatal(err)
		}
		g, ok := harness.Generation(got)
		if !ok {
			t.Fatalf("GetTask without a generation: %v", got)
		}
		return g
	}

	rpc := func(id string, gen int64) error {
		var out map[string]any
		return c.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage(id, taskID, "Lisbon"),
			"configuration": map[string]any{"ifGenerationMatch": fmt.Sprint(gen)}}, &out)
	}
	rest := func(id string, gen int64) error {
		code, body, err := c.REST(ctx, http.MethodPost, "/message:send", map[string]any{
			"message":       harness.UserMessage(id, taskID, "day x"),
			"configuration": map[string]any{"ifGenerationMatch": gen}}) // a JSON number is read too
		if err != nil {
			return err
		}
		if code == http.StatusOK {
			return nil
		}
		e, _ := body["error"].(map[string]any)
		details, _ := e["details"].([]any)
		reason := ""
		for _, d := range details {
			if m, _ := d.(map[string]any); m["reason"] != nil {
				reason, _ = m["reason"].(string)
			}
		}
		return fmt.Errorf("HTTP %d %v %s", code, e["status"], reason)
	}
	// HTTP+JSON message:stream: a refusal is 409 before any stream, a
	// winner's answer a stream.
	restStream := func(id string, gen int64) error {
		code, ct, events, doc, err := c.RESTStream(ctx, "/message:stream", map[string]any{
			"message":       harness.UserMessage(id, taskID, "day w"),
			"configuration": map[string]any{"ifGenerationMatch": fmt.Sprint(gen)}})
		switch {
		case err != nil:
			return err
		case code == http.StatusOK && strings.HasPrefix(ct, "text/event-stream"):
			for _, e := range events {
				if e["error"] != nil {
					return fmt.Errorf("a stream with an error event: %v", events)
				}
			}
			return nil
		}
		e, _ := doc["error"].(map[string]any)
		details, _ := e["details"].([]any)
		reason := ""
		for _, d := range details {
			if m, _ := d.(map[string]any); m["reason"] != nil {
				reason, _ = m["reason"].(string)
			}
		}
		return fmt.Errorf("HTTP %d %s %v %s", code, ct, e["status"], reason)
	}
	wantRESTStream := func(err error) bool {
		return err != nil && err.Error() == "HTTP 409 application/json ABORTED TASK_GENERATION_MISMATCH"
	}
	overGRPC := func(id string, gen int64) error {
		_, err := g.Call(ctx, "SendMessage", "SendMessageRequest", "SendMessageResponse", map[string]any{
			"message":       harness.UserMessage(id, taskID, "day z"),
			"configuration": map[string]any{"ifGenerationMatch": fmt.Sprint(gen)}})
		return err
	}
	wantGRPC := func(err error) bool {
		st, _ := status.FromError(err)
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok && st.Code() == codes.Aborted && info.Reason == "TASK_GENERATION_MISMATCH" {
				return true
			}
		}
		return false
	}
	wantRPC := func(err error) bool {
		var rpcErr *harness.RPCError
		return errors.As(err, &rpcErr) && rpcErr.Code == -32010
	}
	wantREST := func(err error) bool {
		return err != nil && err.Error() == "HTTP 409 ABORTED TASK_GENERATION_MISMATCH"
	}
	for round, b := range []struct {
		name string
		send func(string, int64) error
		want func(error) bool
	}{{"JSON-RPC", rpc, wantRPC}, {"HTTP+JSON", rest, wantREST}, {"gRPC", overGRPC, wantGRPC}, {"HTTP+JSON stream", restStream, wantRESTStream},
		{"JSON-RPC", rpc, wantRPC}, {"HTTP+JSON", rest, wantREST}, {"gRPC", overGRPC, wantGRPC}, {"HTTP+JSON stream", restStream, wantRESTStream}} {
		gen := generation()
		if err := b.send(fmt.Sprintf("stale-%d", round), gen-1); !b.want(err) {
			t.Errorf("%s with a stale generation: %v, want the mismatch error", b.name, err)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { errs[i] = b.send(fmt.Sprintf("race-%d-%d", round, i), gen) })
		}
		wg.Wait()
		won, lost := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case b.want(err):
				lost++
			default:
				t.Errorf("%s round %d: %v", b.name, round, err)
			}
		}
		if won != 1 || lost != 1 {
			t.Errorf("%s round %d at generation %d: %d won, %d refused; want exactly one of each (%v)", b.name, round, gen, won, lost, errs)
		}
		if after := generation(); after <= gen {
			t.Errorf("%s round %d: generation %d after the winning message, want past %d", b.name, round, after, gen)
		}
	}

	// Long-poll: held until the next message moves the task.
	gen := generation()
	go func() {
		time.Sleep(500 * time.Millisecond)
		var out map[string]any
		_ = c.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage("poke", taskID, "day y")}, &out)
	}()
	start := time.Now()
	var got map[string]any
	if err := c.Call(ctx, "GetTask", map[string]any{"id": taskID, "currentGeneration": fmt.Sprint(gen)}, &got); err != nil {
		t.Fatal(err)
	}
	if g, _ := harness.Generation(got); g <= gen || time.Since(start) < 400*time.Millisecond {
		t.Errorf("long-poll past %d answered generation %d after %v; want a later one, after the message", gen, g, time.Since(start))
	}
	now, _ := harness.Generation(got)
	start = time.Now()
	code, rt, err := c.REST(ctx, http.MethodGet, "/tasks/"+taskID+"?currentGeneration="+fmt.Sprint(now-1), nil)
	if g, _ := harness.Generation(rt); err != nil || code != http.StatusOK || g < now || time.Since(start) > 5*time.Second {
		t.Errorf("HTTP+JSON long-poll past an old generation: %d %v %v after %v; want the task at once", code, rt, err, time.Since(start))
	}
	if code, _, _ := c.REST(ctx, http.MethodGet, "/tasks/"+taskID+"?currentGeneration=abc", nil); code != http.StatusBadRequest {
		t.Errorf("currentGeneration=abc: %d, want 400", code)
	}
}

// TestGenerationGRPC is A2A 1.1's generation over gRPC, with a 1.1 client
// built from the dev-1.1 proto (harness.V11GRPC): a conversation streamed
// over SendStreamingMessage sees the generations 1, 2, 3... with no gap,
// GetTask agrees and long-polls with currentGeneration, a negative one is
// INVALID_ARGUMENT, and a 1.0 call on the same task reads no generation.
// (The race over gRPC is TestGenerationMatchRace's.)
func TestGenerationGRPC(t *testing.T) {
	want := "[SendMessageConfiguration.if_generation_match=5? Task.generation=7 TaskStatusUpdateEvent.generation=5 " +
		"TaskArtifactUpdateEvent.generation=7 GetTaskRequest.current_generation=4?]"
	if got := fmt.Sprint(harness.V11ProtoFields()); got != want {
		t.Fatalf("the dev-1.1 proto's generation fields: %s, want %s (the numbers grpcv11.go writes)", got, want)
	}
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	harness.StartServe(t, t.TempDir(), "--grpc-addr", grpcAddr)
	ctx := harness.Context(t)
	g := &harness.V11GRPC{Addr: grpcAddr}
	defer g.Close()

	var seen []int64
	taskID := ""
	for i, text := range []string{"Book a flight", "Lisbon", "next friday"} {
		events, err := g.Stream(ctx, "SendStreamingMessage", "SendMessageRequest", map[string]any{
			"message": harness.UserMessage(fmt.Sprintf("grpc-gen-%d", i), taskID, text)})
		if err != nil {
			t.Fatalf("turn %d: %v (events %v)", i, err, events)
		}
		for j, e := range events {
			kind, obj := harness.StreamObject(t, e)
			gen, ok := harness.Generation(obj)
			if !ok {
				t.Fatalf("turn %d: %s without a generation: %v", i, kind, obj)
			}
			switch {
			case j == 0 && len(seen) == 0:
				taskID, _ = obj["id"].(string)
				seen = append(seen, gen)
			case j == 0:
				if gen != seen[len(seen)-1] {
					t.Fatalf("turn %d starts at generation %d; the last seen is %d", i, gen, seen[len(seen)-1])
				}
			default:
				seen = append(seen, gen)
			}
		}
	}
	for i, gen := range seen {
		if gen != int64(i+1) {
			t.Fatalf("generations over gRPC %v: want 1, 2, 3... with no gap or repeat", seen)
		}
	}
	if len(seen) < 3 {
		t.Fatalf("generations over gRPC %v: want at least 3", seen)
	}
	last := seen[len(seen)-1]
	task, err := g.Call(ctx, "GetTask", "GetTaskRequest", "Task", map[string]any{"id": taskID})
	if gen, _ := harness.Generation(task); err != nil || gen != last {
		t.Errorf("GetTask over gRPC: generation %d (%v), want %d", gen, err, last)
	}

	// Long-poll: held until a message moves the task.
	go func() {
		time.Sleep(500 * time.Millisecond)
		_, _ = g.Call(ctx, "SendMessage", "SendMessageRequest", "SendMessageResponse",
			map[string]any{"message": harness.UserMessage("grpc-poke", taskID, "Porto")})
	}()
	start := time.Now()
	task, err = g.Call(ctx, "GetTask", "GetTaskRequest", "Task", map[string]any{"id": taskID, "currentGeneration": fmt.Sprint(last)})
	if gen, _ := harness.Generation(task); err != nil || gen <= last || time.Since(start) < 400*time.Millisecond {
		t.Errorf("gRPC long-poll past %d: generation %d (%v) after %v; want a later one, after the message", last, gen, err, time.Since(start))
	}
	_, err = g.Call(ctx, "GetTask", "GetTaskRequest", "Task", map[string]any{"id": taskID, "currentGeneration": "-1"})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("currentGeneration -1 over gRPC: %v, want INVALID_ARGUMENT", err)
	}

	// A 1.0 call reads no generation.
	g10 := &harness.V11GRPC{Addr: grpcAddr, Version: "1.0"}
	defer g10.Close()
	task, err = g10.Call(ctx, "GetTask", "GetTaskRequest", "Task", map[string]any{"id": taskID})
	if _, ok := harness.Generation(task); err != nil || ok {
		t.Errorf("GetTask over gRPC 1.0: %v %v, want a task without generation", task, err)
	}
}

// TestGenerationPush checks that a push config created by an A2A 1.1
// request, over JSON-RPC, in a message's configuration or over gRPC, gets
// every event with its generation (its number plus one, as streams have
// it), and that a 1.0 config on the same task gets none
// (docs/guides/protocol-versions.md#push-notifications).
func TestGenerationPush(t *testing.T) {
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	s := harness.StartServe(t, t.TempDir(), "--grpc-addr", grpcAddr, "--push-allow-hosts", "loopback")
	ctx := harness.Context(t)
	rc := &generationReceiver{bodies: map[string][]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	c := &harness.V11{URL: s.APIURL}
	c10 := &harness.V11{URL: s.APIURL, Version: "1.0"}
	g := &harness.V11GRPC{Addr: grpcAddr}
	defer g.Close()

	var res map[string]any
	if err := c.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage("push-gen-0", "", "Book a flight"),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "in-message", "url": srv.URL + "/v11-message"}}}, &res); err != nil {
		t.Fatal(err)
	}
	task, _ := res["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	var out map[string]any
	if err := c.Call(ctx, "CreateTaskPushNotificationConfig", map[string]any{"taskId": taskID, "id": "v11", "url": srv.URL + "/v11"}, &out); err != nil {
		t.Fatal(err)
	}
	if err := c10.Call(ctx, "CreateTaskPushNotificationConfig", map[string]any{"taskId": taskID, "id": "v10", "url": srv.URL + "/v10"}, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Call(ctx, "CreateTaskPushNotificationConfig", "TaskPushNotificationConfig", "TaskPushNotificationConfig",
		map[string]any{"taskId": taskID, "id": "grpc", "url": srv.URL + "/v11-grpc"}); err != nil {
		t.Fatal(err)
	}
	if err := c10.Call(ctx, "SendMessage", map[string]any{"message": harness.UserMessage("push-gen-1", taskID, "Lisbon")}, &out); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/v11-message", "/v11", "/v10", "/v11-grpc"}
	deadline := time.Now().Add(time.Minute)
	for !rc.each(paths, 1) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for _, path := range paths {
		bodies := rc.get(path)
		if len(bodies) == 0 {
			t.Errorf("%s got no push notification", path)
		}
		for _, body := range bodies {
			var sr map[string]map[string]any
			if err := json.Unmarshal([]byte(body), &sr); err != nil {
				t.Fatalf("%s: %s: %v", path, body, err)
			}
			for _, e := range sr {
				meta, _ := e["metadata"].(map[string]any)
				seq, _ := meta["a2aflowEventSeq"].(float64)
				gen, ok := harness.Generation(e)
				switch {
				case path == "/v10" && ok:
					t.Errorf("a 1.0 config got a generation: %s", body)
				case path != "/v10" && (!ok || gen != int64(seq)+1):
					t.Errorf("%s: a 1.1 config got generation %d (present: %v) for event %v, want %d: %s", path, gen, ok, seq, int64(seq)+1, body)
				}
			}
		}
	}
}

// generationReceiver records the bodies of the push notifications it
// gets, by path.
type generationReceiver struct {
	mu     sync.Mutex
	bodies map[string][]string
}

func (g *generationReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bodies[r.URL.Path] = append(g.bodies[r.URL.Path], string(b))
}

func (g *generationReceiver) get(path string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.bodies[path])
}

func (g *generationReceiver) each(paths []string, n int) bool {
	for _, p := range paths {
		if len(g.get(p)) < n {
			return false
		}
	}
	return true
}

// TestGenerationLiveAnswers checks live answers on A2A 1.1 streams: a 1.1
// stream that did not activate a2aflow's live-answers extension carries
// only the task's events, each with its generation; one that did gets the
// answer's chunks too, marked a2aflow.live and without a generation, and
// its other events still count 1, 2, 3... with no gap.
func TestGenerationLiveAnswers(t *testing.T) {
	fakes.UseLiveModel(t, fakes.NewLiveModel(t, 100*time.Millisecond, 20*time.Millisecond))
	s := harness.StartServe(t, t.TempDir())
	ctx := harness.Context(t)
	for _, tc := range []struct {
		name string
		ext  []string
	}{{"plain", nil}, {"live-answers", []string{taskservice.LiveExtensionURI}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &harness.V11{URL: s.APIURL + "/agents/assistant", Extensions: tc.ext}
			events, err := c.Stream(ctx, "SendStreamingMessage", map[string]any{
				"message": harness.UserMessage("live-gen-"+tc.name, "", "tell me about streaming")})
			if err != nil {
				t.Fatal(err)
			}
			var gens []int64
			var text strings.Builder
			live := 0
			for _, e := range events {
				kind, obj := harness.StreamObject(t, e)
				meta, _ := obj["metadata"].(map[string]any)
				gen, hasGen := harness.Generation(obj)
				if meta[wire.LiveMetadataKey] != nil {
					live++
					if hasGen {
						t.Errorf("a live chunk with a generation: %v", obj)
					}
					if a, _ := obj["artifact"].(map[string]any); a != nil {
						parts, _ := a["parts"].([]any)
						for _, p := range parts {
							s, _ := p.(map[string]any)["text"].(string)
							text.WriteString(s)
						}
					}
					continue
				}
				if !hasGen {
					t.Fatalf("a %s without a generation: %v", kind, obj)
				}
				gens = append(gens, gen)
			}
			for i := 1; i < len(gens); i++ {
				if gens[i] != gens[i-1]+1 {
					t.Fatalf("generations %v: want a run with no gap", gens)
				}
			}
			switch {
			case tc.ext == nil && live > 0:
				t.Errorf("%d live chunks on a 1.1 stream that did not activate the extension", live)
			case tc.ext != nil && (live == 0 || text.String() != fakes.LiveAnswerText):
				t.Errorf("%d live chunks joined to %q, want %q", live, text.String(), fakes.LiveAnswerText)
			}
			t.Logf("%d events, %d live chunks, generations %v", len(events), live, gens)
		})
	}
}
