package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// taskListCall reads GET /task-list?query with an API key ("" for none):
// its status, its page when 200, and its body.
func taskListCall(t *testing.T, apiURL, key string, query url.Values) (int, resources.TaskListPage, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, apiURL+resources.TaskListPath+"?"+query.Encode(), nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var page resources.TaskListPage
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatalf("GET /task-list?%s: %v: %s", query.Encode(), err, raw)
		}
	}
	return resp.StatusCode, page, string(raw)
}

// rowIDs are the task IDs of rows, sorted.
func rowIDs(rows []resources.TaskRow) []string {
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

// ids sorts task IDs.
func ids(tasks ...a2a.TaskID) []string {
	var out []string
	for _, id := range tasks {
		out = append(out, string(id))
	}
	slices.Sort(out)
	return out
}

// TestTaskList: the console's task list (GET /task-list) on a real serve
// with API keys. alice's tasks of three agents (a travel task waiting for
// its answer, a fork of it, an expense waiting for finance, echoes, a
// schedule's run) are one list of her own tasks, each row with its
// summary, state and what it waits for; pages of two walk it whole; each
// filter (agent, state, owner, schedule, forkOf, context, words of the
// first message) narrows it as it says. bob sees his own task only and
// carol, whose key is limited to echo, her echo only; an agent she may not
// use is 403, an unknown one 404, bad values 400 and no key 401.
func TestTaskList(t *testing.T) {
	alice, bob, carol := "alice-list-key-0123", "bob-list-key-0123", "carol-list-key-0123"
	s := harness.StartServe(t, t.TempDir(), "--api-keys", fmt.Sprintf("alice=%s,bob=%s,carol=%s", alice, bob, carol),
		"--api-key-agents", "carol:echo")
	ctx := harness.Context(t)
	as := func(key string) map[string]string { return map[string]string{"X-API-Key": key} }
	travel, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/travel")
	echo, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/echo")
	expenses, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	actx := withHeader(ctx, "X-API-Key", alice)
	trip := harness.Send(t, actx, travel, "", "Book a flight to Lisbon")
	lunch := harness.Send(t, actx, expenses, "", "640 EUR team offsite")
	one := harness.Send(t, actx, echo, "", "hello list one")
	two := harness.Send(t, actx, echo, "", "hello list two")
	bobs := harness.Send(t, withHeader(ctx, "X-API-Key", bob), echo, "", "bob's own words")
	carols := harness.Send(t, withHeader(ctx, "X-API-Key", carol), echo, "", "carol's words")
	var fork a2a.Task
	if code := postJSON(t, s.APIURL+"/agents/travel/tasks/"+string(trip.ID)+":fork", as(alice), map[string]any{"atMessage": 1}, &fork); code != http.StatusOK || fork.ID == "" {
		t.Fatalf("alice's fork: HTTP %d %+v", code, fork)
	}
	var sched resources.ScheduleView
	if code := postJSON(t, s.APIURL+"/schedules", as(alice), map[string]any{"agent": "echo", "message": map[string]any{"text": "scheduled hello"}, "every": "24h"}, &sched); code != http.StatusCreated {
		t.Fatalf("alice's schedule: HTTP %d", code)
	}
	if code := postJSON(t, s.APIURL+"/schedules/"+sched.ID+":trigger", as(alice), nil, nil); code != http.StatusOK {
		t.Fatalf("trigger: HTTP %d", code)
	}
	all := ids(trip.ID, lunch.ID, one.ID, two.ID, fork.ID)

	// Visibility is eventually consistent: wait for the schedule's run and
	// every task in its state.
	var rows []resources.TaskRow
	waitFor(t, 30*time.Second, func() bool {
		_, page, _ := taskListCall(t, s.APIURL, alice, url.Values{})
		rows = page.Tasks
		done := 0
		for _, r := range rows {
			if r.Agent == "echo" && r.State == a2a.TaskStateCompleted {
				done++
			}
		}
		return len(rows) == len(all)+1 && done == 3
	})
	var run resources.TaskRow
	for _, r := range rows {
		if r.Schedule == sched.ID {
			run = r
		}
	}
	if run.ID == "" || run.Summary != "echo · scheduled hello" {
		t.Fatalf("alice's list: %+v, want her %d tasks and the schedule's run", rows, len(all))
	}
	all = append(all, run.ID)
	slices.Sort(all)
	byID := map[string]resources.TaskRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	checkRow := func(id a2a.TaskID, summary string, state a2a.TaskState, waiting string) {
		t.Helper()
		r := byID[string(id)]
		if r.Summary != summary || r.State != state || !strings.HasPrefix(r.WaitingFor, waiting) || r.Owner != "alice" || r.Started.IsZero() {
			t.Errorf("row of %s: %+v, want %q, %s, waiting for %q..., alice's", id, r, summary, state, waiting)
		}
	}
	checkRow(trip.ID, "travel · Book a flight to Lisbon", a2a.TaskStateInputRequired, "input: Where to?")
	checkRow(fork.ID, "travel · Book a flight to Lisbon", a2a.TaskStateInputRequired, "input: Where to?")
	checkRow(lunch.ID, "expenses · 640 EUR team offsite", a2a.TaskStateInputRequired, "approval: ")
	checkRow(one.ID, "echo · hello list one", a2a.TaskStateCompleted, "")
	if r := byID[string(lunch.ID)]; len(r.PendingApprovals) != 1 {
		t.Errorf("the expense's pending approvals: %v", r.PendingApprovals)
	}
	// What they wait for is the memo each wrote when it parked
	// (wire.WaitingMemo): the rows' Waiting, which the per-row read of
	// tasks recorded before it never sets.
	for _, id := range []a2a.TaskID{trip.ID, fork.ID} {
		if w := byID[string(id)].Waiting; w == nil || w.Kind != wire.WaitingForInput || !strings.HasPrefix(w.Question, "Where to?") {
			t.Errorf("row of %s: waiting %+v, want the memo of its question", id, w)
		}
	}
	if r := byID[string(lunch.ID)]; r.Waiting == nil || r.Waiting.Kind != wire.WaitingForApproval || len(r.Waiting.Approvals) != 1 ||
		!strings.HasPrefix(r.Waiting.Approvals[0].ID, string(lunch.ID)) || !slices.Equal(r.Waiting.Approvals[0].Groups, []string{"finance"}) ||
		r.Waiting.Approvals[0].Required != 1 || r.Waiting.Approvals[0].Deadline == nil {
		t.Errorf("the expense's waiting memo: %+v", r.Waiting)
	}
	if r := byID[string(fork.ID)]; r.ForkOf != string(trip.ID) {
		t.Errorf("the fork's row: forkOf %q, want %s", r.ForkOf, trip.ID)
	}

	// Pages of two: every task once, then no token.
	var walked []resources.TaskRow
	token, pages := "", 0
	for {
		code, page, body := taskListCall(t, s.APIURL, alice, url.Values{"pageSize": {"2"}, "pageToken": {token}})
		if code != http.StatusOK || len(page.Tasks) > 2 {
			t.Fatalf("page %d: HTTP %d %s", pages+1, code, body)
		}
		walked, token, pages = append(walked, page.Tasks...), page.NextPageToken, pages+1
		if token == "" || pages > 10 {
			break
		}
	}
	if got := rowIDs(walked); !slices.Equal(got, all) || pages < 3 {
		t.Errorf("pages of two: %v in %d pages, want %v", got, pages, all)
	}
	// A token of one query is refused under another.
	_, first, _ := taskListCall(t, s.APIURL, alice, url.Values{"pageSize": {"2"}})
	if code, _, body := taskListCall(t, s.APIURL, alice, url.Values{"pageSize": {"2"}, "agent": {"echo"}, "pageToken": {first.NextPageToken}}); code != http.StatusBadRequest {
		t.Errorf("a page token under other filters: HTTP %d %s, want 400", code, body)
	}

	for _, tc := range []struct {
		name string
		key  string
		q    url.Values
		want []string
	}{
		{"agent", alice, url.Values{"agent": {"echo"}}, ids(one.ID, two.ID, a2a.TaskID(run.ID))},
		{"state", alice, url.Values{"state": {"TASK_STATE_INPUT_REQUIRED"}}, ids(trip.ID, fork.ID, lunch.ID)},
		{"agent and state", alice, url.Values{"agent": {"travel"}, "state": {"TASK_STATE_COMPLETED"}}, nil},
		{"words of the first message", alice, url.Values{"q": {"lisbon"}}, ids(trip.ID, fork.ID)},
		{"every word", alice, url.Values{"q": {"hello  two!"}}, ids(two.ID)},
		{"schedule", alice, url.Values{"schedule": {sched.ID}}, ids(a2a.TaskID(run.ID))},
		{"forks", alice, url.Values{"forkOf": {string(trip.ID)}}, ids(fork.ID)},
		{"context", alice, url.Values{"context": {trip.ContextID}}, ids(trip.ID, fork.ID)},
		{"her own owner", alice, url.Values{"owner": {"alice"}, "agent": {"expenses"}}, ids(lunch.ID)},
		{"another owner", alice, url.Values{"owner": {"bob"}}, nil},
		{"bob's own", bob, url.Values{}, ids(bobs.ID)},
		{"bob looks for alice's words", bob, url.Values{"q": {"lisbon"}}, nil},
		{"carol, limited to echo", carol, url.Values{}, ids(carols.ID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			waitFor(t, 10*time.Second, func() bool {
				code, page, body := taskListCall(t, s.APIURL, tc.key, tc.q)
				if code != http.StatusOK {
					t.Fatalf("HTTP %d %s", code, body)
				}
				got = rowIDs(page.Tasks)
				return slices.Equal(got, tc.want)
			})
		})
	}

	for _, tc := range []struct {
		name, key string
		q         url.Values
		want      int
	}{
		{"an agent carol may not use", carol, url.Values{"agent": {"travel"}}, http.StatusForbidden},
		{"an unknown agent", alice, url.Values{"agent": {"nope"}}, http.StatusNotFound},
		{"an unknown state", alice, url.Values{"state": {"done"}}, http.StatusBadRequest},
		{"no word", alice, url.Values{"q": {"!!! ''"}}, http.StatusBadRequest},
		{"a page of none", alice, url.Values{"pageSize": {"0"}}, http.StatusBadRequest},
		{"a page too large", alice, url.Values{"pageSize": {"101"}}, http.StatusBadRequest},
		{"a made-up token", alice, url.Values{"pageToken": {"AAAA"}}, http.StatusBadRequest},
		{"a NUL", alice, url.Values{"context": {"a\x00b"}}, http.StatusBadRequest},
		{"no key", "", url.Values{}, http.StatusUnauthorized},
	} {
		if code, _, body := taskListCall(t, s.APIURL, tc.key, tc.q); code != tc.want || strings.Contains(body, "Lisbon") {
			t.Errorf("%s: HTTP %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
}
