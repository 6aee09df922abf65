package tests

import (
	"database/sql"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	_ "modernc.org/sqlite"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// TestProductHasNoDemos: a program built on a2aflow.Main (tests/testdata/
// product) serves its own agents only. None of the a2aflow command's demo
// agents is on its cards, none of their flags on its commands, none of their
// tables in its database, and the name of the demo's booking activity,
// BookTrip, is the program's own: its trips agent books with it.
func TestProductHasNoDemos(t *testing.T) {
	program := buildVersioned(t, "v1")
	for _, verb := range []string{"serve", "worker", "api"} {
		out, err := exec.Command(program, "help", verb).CombinedOutput()
		if err != nil {
			t.Fatalf("help %s: %v\n%s", verb, err, out)
		}
		for _, demo := range []string{"github", "GITHUB", "booking", "travel"} {
			if strings.Contains(string(out), demo) {
				t.Errorf("`help %s` of a program mentions the demos (%q):\n%s", verb, demo, out)
			}
		}
	}

	dataDir := t.TempDir()
	s := harness.StartServeProgram(t, program, dataDir, nil)
	ctx := harness.Context(t)
	c, card := harness.NewClient(t, ctx, s.APIURL+"/agents/trips")
	if card.Name != "trips" {
		t.Fatalf("card of /agents/trips names %q", card.Name)
	}
	task := harness.Send(t, ctx, c, "", "Lisbon")
	if task.Status.State != a2a.TaskStateCompleted || workflows.MessageText(task.Status.Message) != "product booked Lisbon" {
		t.Errorf("trips task: %s %q, want completed by the program's own BookTrip", task.Status.State, workflows.MessageText(task.Status.Message))
	}
	for _, demo := range []string{"travel", "echo", "expenses", "assistant", "report", "router", "issues", "changes"} {
		resp, err := http.Get(s.APIURL + "/agents/" + demo + "/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the program serves the demo agent %s (HTTP %d)", demo, resp.StatusCode)
		}
	}

	db, err := sql.Open("sqlite", filepath.Join(dataDir, "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'bookings'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the program's database has the demo's bookings table")
	}
}

// TestWaitpointsAcrossContinueAsNew: the product's tickets task completes a
// waitpoint, talks until it has continued as new, and opens another. The new
// waitpoint has a new ID; the first one's token does not open it (403); the
// first waitpoint is still readable with its token after continue-as-new,
// and answers its own payload sent again as before (idempotent); the second
// completes with its own token.
func TestWaitpointsAcrossContinueAsNew(t *testing.T) {
	program := buildVersioned(t, "v1")
	s := harness.StartServeProgram(t, program, t.TempDir(), nil, "--temporal-dynamic-config",
		fmt.Sprintf("limit.historyCount.suggestContinueAsNew=%d", suggestContinueAsNewAfter))
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/tickets")
	tc := dialTemporal(t, s)

	task := harness.Send(t, ctx, c, "", "a change")
	first := waitpointIn(t, task)
	if want := string(task.ID) + "-waitpoint-1"; first != want {
		t.Fatalf("first waitpoint %s, want %s", first, want)
	}
	var view resources.WaitpointView
	if code, msg := (waitpointCall{method: http.MethodGet, id: first}).do(t, s, &view); code != 200 || view.Token == "" {
		t.Fatalf("GET %s as the owner: %d %s", first, code, msg)
	}
	token1 := view.Token
	payload := map[string]any{"payload": map[string]any{"ticket": "CHG-1"}}
	if code, msg := (waitpointCall{id: first, token: token1, body: payload}).do(t, s, nil); code != 200 {
		t.Fatalf("completing %s with its token: %d %s", first, code, msg)
	}

	// Talk until the task has continued as new.
	run1 := currentRunID(t, ctx, tc, task.ID)
	for i := 0; currentRunID(t, ctx, tc, task.ID) == run1; i++ {
		if i > 60 {
			t.Fatalf("the task did not continue as new in %d turns", i)
		}
		task = harness.Send(t, ctx, c, task.ID, fmt.Sprintf("turn %d", i))
	}
	task = harness.Send(t, ctx, c, task.ID, "done")
	second := waitpointIn(t, task)
	if want := string(task.ID) + "-waitpoint-2"; second != want {
		t.Fatalf("the waitpoint after continue-as-new is %s, want %s (IDs never repeat within a task)", second, want)
	}

	// The first waitpoint's token opens the first waitpoint only.
	ticket2 := map[string]any{"payload": map[string]any{"ticket": "CHG-2"}}
	if code, msg := (waitpointCall{id: second, token: token1, body: ticket2}).do(t, s, nil); code != http.StatusForbidden {
		t.Errorf("the first waitpoint's token on the second: %d %s, want 403", code, msg)
	}
	var old resources.WaitpointView
	if code, msg := (waitpointCall{method: http.MethodGet, id: first, token: token1}).do(t, s, &old); code != 200 ||
		old.State != workflows.WaitpointCompleted || string(old.Payload) != `{"ticket":"CHG-1"}` {
		t.Errorf("GET %s with its token after continue-as-new: %d %s %+v, want it completed with its payload", first, code, msg, old.Waitpoint)
	}
	if code, msg := (waitpointCall{id: first, token: token1, body: payload}).do(t, s, nil); code != 200 {
		t.Errorf("the first waitpoint's payload sent again after continue-as-new: %d %s, want 200 (idempotent)", code, msg)
	}

	if code, msg := (waitpointCall{method: http.MethodGet, id: second}).do(t, s, &view); code != 200 || view.Token == "" || view.Token == token1 {
		t.Fatalf("GET %s as the owner: %d %s, want its own token", second, code, msg)
	}
	if code, msg := (waitpointCall{id: second, token: view.Token, body: ticket2}).do(t, s, nil); code != 200 {
		t.Fatalf("completing %s with its token: %d %s", second, code, msg)
	}
	done := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
	if got, want := workflows.MessageText(done.Status.Message), first+" then "+second+`: {"ticket":"CHG-2"}`; got != want {
		t.Errorf("the task answered %q, want %q", got, want)
	}
}

// waitpointIn returns the waitpoint the input-required task's status names.
func waitpointIn(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if task.Status.Message != nil {
		for _, p := range task.Status.Message.Parts {
			if d, ok := p.Data().(map[string]any); ok {
				if id, _ := d["waitpointId"].(string); id != "" {
					return id
				}
			}
		}
	}
	t.Fatalf("task %s (%s) names no waitpoint: %+v", task.ID, task.Status.State, task.Status.Message)
	return ""
}
