package demo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestReplayHistories replays tasks recorded on a real server. A workflow
// change that would break tasks already running fails here. Record a new
// fixture only for an intended, versioned change, e.g.:
//
//	A2AFLOW_RECORD_HISTORY=1 go test ./tests/ -run TestReplayRecordedExpensesHistory
//
// The *-continued-* fixtures are single runs of tasks that continued as new;
// they hold no payload-store references, so they replay without the store.
// Record them, and only them (-run TestReplayRecorded alone would rewrite
// every fixture above too), with:
//
//	A2AFLOW_RECORD_HISTORY=1 go test ./tests/ -run 'TestReplayRecorded.*Continued'
func TestReplayHistories(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
	}{
		// Book a flight: three answers, a booking activity, completion.
		{name: "travel", fixture: "testdata/travel.history.json"},
		// An expense over the limit: it waits for finance (the approval
		// webhook activity runs), is approved through REST, and completes
		// with its receipt.
		{name: "expenses", fixture: "testdata/expenses.history.json"},
		// The router delegates "@ext ask" to a remote agent (a2a-go's
		// server): our task waits with the remote question, forwards the
		// answer, and copies the remote artifact.
		{name: "router-delegation", fixture: "testdata/router-delegation.history.json"},
		// The same, recorded since the router sends an @mention without
		// reading the directory in an activity first (GetVersion
		// router-mention-no-directory-read at 1).
		{name: "router-delegation-mention", fixture: "testdata/router-delegation-mention.history.json"},
		// The same, recorded since a blocking send asks for the task in
		// the update's result (SendMessageInput.WantTask: the result
		// carries it), the delegation's activities get the task's owner
		// in a header (engine.NewOwnerInterceptor), and the answer to
		// the remote question names it (RemoteSendInput.Answered): the
		// send streams the remote task past it, and no follow activity
		// runs.
		{name: "router-delegation-owner", fixture: "testdata/router-delegation-owner.history.json"},
		// "@beta @issues ...": the router delegates to another a2aflow's
		// router, which delegates to an issues agent asking for a GitHub
		// token (auth-required, twice: the first token is refused). Recorded
		// before a delegated credential request was asked as a credential:
		// the question relayed as a plain one, the token in the answer.
		{name: "router-delegation-auth", fixture: "testdata/router-delegation-auth.history.json"},
		// The same since it is (GetVersion a2aflow.delegated-credential at
		// 1): the task is auth-required with a credential request naming
		// the agent, and the answers and the sends carry references.
		{name: "router-delegation-credential", fixture: "testdata/router-delegation-credential.history.json"},
		// "@writer write": the remote agent (a2a-go's server) streams an
		// artifact in three chunks and a second one whole; the activities
		// relay them live and the task copies them, once each, under the
		// IDs the live chunks had (GetVersion a2aflow.relayed-artifacts
		// at 1). Recorded by tests.TestRemoteArtifactsRelayed.
		{name: "router-relayed-artifacts", fixture: "testdata/router-relayed-artifacts.history.json"},
		// The router's LLM routes to the remote agent and answers the remote
		// question itself (HANDLE_DIRECTLY).
		{name: "router-llm", fixture: "testdata/router-llm.history.json"},
		// The same since the task's token usage and cost go into its memo
		// once per LLM answer (GetVersion a2aflow.llm-usage-memo at 1).
		{name: "router-llm-usage", fixture: "testdata/router-llm-usage.history.json"},
		// The router's LLM finds the city missing (human_input): the task
		// asks the user, and routes again with the answer (the clock tool).
		{name: "router-human-input", fixture: "testdata/router-human-input.history.json"},
		// Continue-as-new mid-conversation (Temporal suggesting it after 40
		// events): the first run of a travel task asks for the destination
		// and the date, takes invalid dates and continues as new while the
		// date question waits, handing over the slots and the parked wait.
		{name: "travel-continued-ask", fixture: "testdata/travel-continued-ask.history.json"},
		// The last run of that task: it starts from the continued task,
		// picks up the waiting date question without asking it again, takes
		// the date and the travellers, books once and completes.
		{name: "travel-continued-resume", fixture: "testdata/travel-continued-resume.history.json"},
		// Continue-as-new mid-approval: an expense over the limit waits for
		// finance (webhook notice, 48 h timer); plain messages queued while
		// it waits grow the run until it continues as new, the approval
		// pending.
		{name: "expenses-continued-approval", fixture: "testdata/expenses-continued-approval.history.json"},
		// The next run: it starts from the continued task, waits for the same
		// approval (no second notice, a timer for what is left of the
		// deadline), is approved through REST and completes with its receipt.
		{name: "expenses-continued-resume", fixture: "testdata/expenses-continued-resume.history.json"},
		// A change request waits for its ticket (a waitpoint): refused
		// completions leave no trace, the ticket system completes it over
		// REST with the token, and the task completes with its record.
		{name: "changes-waitpoint", fixture: "testdata/changes-waitpoint.history.json"},
		// The same, recorded since a waitpoint's tokens are bound to it
		// (GetVersion a2aflow.waitpoint-bound-tokens at 1).
		{name: "changes-waitpoint-bound", fixture: "testdata/changes-waitpoint-bound.history.json"},
		// A travel task with a webhook, recorded on a split deployment
		// (temporal, worker, api) whose worker was stopped with SIGSTOP for
		// 11 s at a time while 20 such tasks ran: 9 workflow tasks timed
		// out (some holding an accepted update), sticky queues expired,
		// and the push deliveries (one activity per event) interleave
		// with the answers. Every run of that session replayed.
		{name: "travel-worker-paused", fixture: "testdata/travel-worker-paused.history.json"},
		// A run of a schedule (Temporal Schedules): the task workflow
		// started with its first message and the schedule's push config in
		// its input (TaskInput.Schedule), an expense over the limit
		// approved through REST.
		{name: "expenses-scheduled", fixture: "testdata/expenses-scheduled.history.json"},
		// Tasks the API started with merged writes (wire.MergedWrites, then
		// the boolean MergedWrites of their input:
		// A2ATaskState once per workflow task, the memo when the task
		// waits or ends), recorded before lean writes: a travel booking,
		// an expense approved through REST, and an @mention delegation
		// completed in its first turn (GetVersion
		// router-mention-no-directory-read at 1, which a task started
		// with merged writes no longer asks).
		{name: "travel-merged", fixture: "testdata/travel-merged.history.json"},
		{name: "expenses-merged", fixture: "testdata/expenses-merged.history.json"},
		{name: "router-delegation-merged", fixture: "testdata/router-delegation-merged.history.json"},
		// The same since lean writes (wire.LeanWrites): no A2ATaskState
		// for a completion while visibility has the task working, the
		// approvals' search attributes in the state's upsert, and the
		// delegation without a version marker (14 events).
		{name: "travel-lean", fixture: "testdata/travel-lean.history.json"},
		{name: "expenses-lean", fixture: "testdata/expenses-lean.history.json"},
		{name: "router-delegation-lean", fixture: "testdata/router-delegation-lean.history.json"},
		// The same since the waiting memo (wire.WaitingMemo): a parked
		// task says what it waits for in the memo upsert of its park
		// (a2aflow.waiting), and one upsert removes it when it moves on
		// (TestReplayWaitingMemoFixtures checks the fixtures hold them).
		{name: "travel-waiting", fixture: "testdata/travel-waiting.history.json"},
		{name: "expenses-waiting", fixture: "testdata/expenses-waiting.history.json"},
		{name: "router-delegation-waiting", fixture: "testdata/router-delegation-waiting.history.json"},
		// The continue-as-new runs above, recorded since the waiting
		// memo: what the memo says crosses into the next run
		// (continuedTask.Waiting), which writes it only when the task
		// waits for something else, and removes it when the task moves on.
		{name: "travel-continued-ask-waiting", fixture: "testdata/travel-continued-ask-waiting.history.json"},
		{name: "travel-continued-resume-waiting", fixture: "testdata/travel-continued-resume-waiting.history.json"},
		{name: "expenses-continued-approval-waiting", fixture: "testdata/expenses-continued-approval-waiting.history.json"},
		{name: "expenses-continued-resume-waiting", fixture: "testdata/expenses-continued-resume-waiting.history.json"},
		// A fork (docs/guides/fork.md): a travel task forked at its fourth
		// message (the date question) with the original's recorded results
		// and inputs in its input (TaskInput.Fork), started with the
		// a2aflow.ForkSettled update and merged writes; the destination
		// comes from the records, the fork takes another date and books.
		{name: "travel-fork", fixture: "testdata/travel-fork.history.json"},
		// A retry: the assistant's task failed while its LLM provider was
		// down; retried, its model calls and the user's answer before the
		// failed call come from the records, the failed call runs again
		// and the task completes.
		{name: "assistant-retry", fixture: "testdata/assistant-retry.history.json"},
		// The assistant asks the user (ask_user), a2aflow is killed while
		// the task waits, the user answers and the model uses the
		// calculator: its model calls are local activities (the API's
		// wire.LocalModelCalls), each one LocalActivity marker.
		{name: "assistant-local-model-calls", fixture: "testdata/assistant-local-model-calls.history.json"},
		// Expenses judged by approval policies (GetVersion
		// approval-policies at 1, a DecidePolicy local activity before each
		// Approve): one a policy allowed, settled by "policy" under version
		// 1 without a person, and one a policy handed to managers,
		// approved through REST.
		{name: "expenses-policy-allowed", fixture: "testdata/expenses-policy-allowed.history.json"},
		{name: "expenses-policy-approved", fixture: "testdata/expenses-policy-approved.history.json"},
	}
	replayer, err := engine.NewReplayer(Builtin(), engine.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := replayer.ReplayFile(tt.fixture); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReplayFindsIncompatibleChange: a travel agent whose handler books
// before asking (a change that needed workflow.GetVersion) no longer replays
// the recorded travel task, and the error says it is a non-determinism.
func TestReplayFindsIncompatibleChange(t *testing.T) {
	changed := Travel()
	changed.Handle = func(ctx workflow.Context, task *workflows.Task) error {
		if err := workflow.Sleep(ctx, time.Minute); err != nil { // a new first step
			return err
		}
		return Travel().Handle(ctx, task)
	}
	reg, err := engine.NewRegistry(changed)
	if err != nil {
		t.Fatal(err)
	}
	replayer, err := engine.NewReplayer(reg, engine.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = replayer.ReplayFile("testdata/travel.history.json")
	if !engine.IsNondeterminism(err) {
		t.Fatalf("replay of the changed agent = %v, want a non-determinism error", err)
	}
	if !strings.Contains(err.Error(), "testdata/travel.history.json: task ") {
		t.Errorf("error %q does not name the file and the task", err)
	}
}

// TestReplayLongTasksInput: a task the API started with wire.LongTasks
// but a worker that did not know it ran (it asked workflow.GetVersion and
// recorded its marker) replays on this code, which does not ask: the
// version marker and its search attribute are skipped. The API said it
// with the boolean LongTasks of the task's input before wire.Recording,
// and in Recording since: both replay. The fixtures above cover the other
// two cases: input without it and the marker (older tasks, tasks started
// outside the API), and the tests' fresh histories replayed in ./tests
// (the level, no marker).
func TestReplayLongTasksInput(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/*.history.json")
	if err != nil {
		t.Fatal(err)
	}
	replayer, err := engine.NewReplayer(Builtin(), engine.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, fixture := range fixtures {
		h := readHistory(t, fixture)
		marked := false
		for _, e := range h.Events {
			for _, p := range e.GetMarkerRecordedEventAttributes().GetDetails() {
				for _, d := range p.GetPayloads() {
					marked = marked || strings.Contains(string(d.GetData()), "a2aflow.long-tasks")
				}
			}
		}
		input := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
		recorded := input.Data
		var in map[string]any
		if err := json.Unmarshal(recorded, &in); err != nil {
			t.Fatal(err)
		}
		if !marked || in["Continued"] != nil {
			continue // from before the change, or a continued run (no marker either way)
		}
		for key, value := range map[string]any{"LongTasks": true, "Recording": wire.LongTasks} {
			t.Run(fixture+"/"+key, func(t *testing.T) {
				var in map[string]any
				if err := json.Unmarshal(recorded, &in); err != nil {
					t.Fatal(err)
				}
				in[key] = value
				if input.Data, err = json.Marshal(in); err != nil {
					t.Fatal(err)
				}
				if err := replayer.Replay(h); err != nil {
					t.Fatal(err)
				}
			})
		}
		tested++
	}
	if tested < 2 {
		t.Fatalf("%d fixtures have the a2aflow.long-tasks version marker, want at least 2", tested)
	}
}

// TestReplayRecordingBooleans: the fixtures recorded before wire.Recording,
// whose input says what the task records with a boolean per change, read
// as the level they recorded at and replay (TestReplayHistories replays
// them all; here, which holds which booleans, so that a fixture recorded
// again with Recording does not take the booleans' path out of the test).
func TestReplayRecordingBooleans(t *testing.T) {
	replayer, err := engine.NewReplayer(Builtin(), engine.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		fixtures []string
		booleans []string
		want     wire.Recording
	}{
		{[]string{"changes-waitpoint-bound", "expenses-scheduled", "router-delegation-auth", "router-delegation-credential",
			"router-delegation-owner", "router-llm-usage"},
			[]string{"LongTasks"}, wire.LongTasks},
		{[]string{"assistant-retry", "expenses-merged", "router-delegation-merged", "router-relayed-artifacts", "travel-fork", "travel-merged"},
			[]string{"LongTasks", "MergedWrites"}, wire.LongTasks | wire.MergedWrites},
		{[]string{"expenses-lean", "router-delegation-lean", "travel-lean"},
			[]string{"LongTasks", "MergedWrites", "LeanWrites"}, wire.LongTasks | wire.MergedWrites | wire.LeanWrites},
		{[]string{"assistant-local-model-calls"},
			[]string{"LongTasks", "MergedWrites", "LeanWrites", "LocalModelCalls"},
			wire.LongTasks | wire.MergedWrites | wire.LeanWrites | wire.LocalModelCalls},
	} {
		for _, name := range tt.fixtures {
			t.Run(name, func(t *testing.T) {
				fixture := "testdata/" + name + ".history.json"
				h := readHistory(t, fixture)
				data := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0].GetData()
				var keys map[string]any
				if err := json.Unmarshal(data, &keys); err != nil {
					t.Fatal(err)
				}
				var booleans []string
				for _, k := range []string{"LongTasks", "MergedWrites", "LeanWrites", "LocalModelCalls"} {
					if keys[k] == true {
						booleans = append(booleans, k)
					}
				}
				if diff := cmp.Diff(tt.booleans, booleans); diff != "" || keys["Recording"] != nil {
					t.Fatalf("the input's booleans (-want +got):\n%s(Recording: %v)", diff, keys["Recording"])
				}
				var in wire.TaskInput
				if err := json.Unmarshal(data, &in); err != nil {
					t.Fatal(err)
				}
				if got := in.RecordingLevel(); got != tt.want {
					t.Errorf("recording level %04b, want %04b", got, tt.want)
				}
				if err := replayer.ReplayFile(fixture); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestReplayWaitingMemoFixtures: the fixtures of the waiting memo
// (wire.WaitingMemo) hold what they are kept for: the travel task's three
// questions each set a2aflow.waiting (input) and its booking removes it;
// the expense sets it for its approval (with the approver group) and
// removes it once approved; the delegation, which never parks, writes none.
// The fixtures recorded before it hold no such key.
func TestReplayWaitingMemoFixtures(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		want    []string
	}{
		{"travel-waiting", []string{"input", "input", "input", "removed"}},
		{"expenses-waiting", []string{"approval finance", "removed"}},
		{"router-delegation-waiting", nil},
		// The last run of a continued task starts with the memo of the
		// question it is parked on, writes the next question and the
		// removal; the expense's, with its approval's, the removal only.
		{"travel-continued-resume-waiting", []string{"input", "removed"}},
		{"expenses-continued-resume-waiting", []string{"removed"}},
		{"travel-lean", nil},
		{"expenses-lean", nil},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			h := readHistory(t, "testdata/"+tt.fixture+".history.json")
			if !strings.HasSuffix(tt.fixture, "-waiting") {
				var in wire.TaskInput
				data := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0].GetData()
				if err := json.Unmarshal(data, &in); err != nil || in.RecordingLevel().WaitingMemo() {
					t.Fatalf("%s records the waiting memo (%v)", tt.fixture, err)
				}
			}
			if strings.Contains(tt.fixture, "-resume-") {
				var in struct {
					Continued *struct {
						Waiting *wire.Waiting `json:"waiting"`
					}
				}
				data := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0].GetData()
				if err := json.Unmarshal(data, &in); err != nil || in.Continued == nil || in.Continued.Waiting == nil {
					t.Fatalf("%s starts without the memo of the run before (%v)", tt.fixture, err)
				}
			}
			var got []string
			for _, e := range h.Events {
				p, ok := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[wire.WaitingMemoKey]
				if !ok {
					continue
				}
				var w *wire.Waiting
				if err := json.Unmarshal(p.GetData(), &w); err != nil || w == nil {
					got = append(got, "removed")
					continue
				}
				s := w.Kind
				for _, a := range w.Approvals {
					s += " " + strings.Join(a.Groups, ",")
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("a2aflow.waiting upserts (-want +got):\n%s", diff)
			}
		})
	}
}

// readHistory reads a recorded history.
func readHistory(t *testing.T, fixture string) *historypb.History {
	t.Helper()
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
