package tests

// Schedules (issue 32, item 3): recurring tasks on Temporal Schedules, each
// run an ordinary A2A task of the schedule's owner.
//
//	go test ./tests -run 'TestSchedule' -count=1 -v

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/resources"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/tests/harness"
	"github.com/a2aflow/a2aflow/workflows"
)

// scheduleCall sends a request to the schedules REST API with an API key
// ("" for none) and decodes the answer into out when it is 2xx.
func scheduleCall(t testing.TB, method, url, apiKey string, body any, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if apiKey != "" {
		req.Header.Set("X-API-Key", apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
	return resp.StatusCode, string(raw)
}

// scheduleOf returns the schedule a task's metadata names.
func scheduleOf(task *a2a.Task) string {
	id, _ := task.Metadata[wire.ScheduleMetadataKey].(string)
	return id
}

// TestSchedulesOwnedRunsAndTenants: alice's weekly schedule of expenses
// (every Monday at 9:00 Paris time, created with the CLI) has no run until
// she triggers one: that run is an ordinary task of hers (GetTask,
// ListTasks, the schedule in its metadata), its approval is in finance's
// inbox, its webhook gets the run's events with the token (sealed for the
// schedule, opened for its run). Pause and unpause show in describe. Bob
// neither sees nor changes the schedule (404 for each route, absent from
// his list) nor its run's task; bad requests are 400 with the reason.
func TestSchedulesOwnedRunsAndTenants(t *testing.T) {
	aliceKey, bobKey, fionaKey := "alice-key-0123456789", "bob-key-0123456789", "fiona-key-0123456789"
	hooks := newWebhookReceiver(t)
	s := harness.StartServe(t, t.TempDir(),
		"--api-keys", fmt.Sprintf("alice=%s,bob=%s,fiona=%s", aliceKey, bobKey, fionaKey),
		"--approver-groups", "fiona:finance",
		"--push-allow-hosts", "loopback")
	ctx := harness.Context(t)

	// Created with the CLI, as the guide shows it.
	out, err := harness.Command("schedules", "create", "--api", s.APIURL, "--api-key", aliceKey,
		"--name", "weekly-offsite", "--agent", "expenses", "--text", "640 EUR weekly team offsite",
		"--cron", "0 9 * * MON", "--time-zone", "Europe/Paris",
		"--push-url", hooks.URL+"/hook", "--push-token", "hook-token-0123456789").CombinedOutput()
	if err != nil {
		t.Fatalf("a2aflow schedules create: %v\n%s", err, out)
	}
	var sched resources.ScheduleView
	if err := json.Unmarshal(out, &sched); err != nil {
		t.Fatalf("schedules create printed %s: %v", out, err)
	}
	if !strings.HasPrefix(sched.ID, "sched-") || sched.Agent != "expenses" || sched.Overlap != "skip" || sched.Cron != "0 9 * * MON" ||
		sched.TimeZone != "Europe/Paris" || len(sched.NextRuns) == 0 {
		t.Fatalf("created schedule: %+v", sched)
	}
	if next := sched.NextRuns[0].In(mustLocation(t, "Europe/Paris")); next.Weekday() != time.Monday || next.Hour() != 9 || next.Minute() != 0 {
		t.Errorf("next run %s, want a Monday at 9:00 in Paris", next)
	}
	if sched.PushConfig == nil || strings.Contains(string(out), "hook-token-0123456789") {
		t.Errorf("the schedule's push config is missing or shows its token: %s", out)
	}
	// The same name and settings again: the same schedule; other settings: 409.
	again := resources.ScheduleRequest{Name: "weekly-offsite", Agent: "expenses", Message: resources.ScheduleMessage{Text: "640 EUR weekly team offsite"},
		Cron: "0 9 * * MON", TimeZone: "Europe/Paris"}
	var same resources.ScheduleView
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", aliceKey, again, &same); code != http.StatusOK || same.ID != sched.ID {
		t.Errorf("create again: %d %s, want 200 with %s", code, body, sched.ID)
	}
	again.Cron = "0 10 * * MON"
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", aliceKey, again, nil); code != http.StatusConflict {
		t.Errorf("create again with another cron: %d %s, want 409", code, body)
	}
	// Bob's schedule of the same name is his own.
	again.Cron = "0 9 * * MON"
	var bobs resources.ScheduleView
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", bobKey, again, &bobs); code != http.StatusCreated || bobs.ID == sched.ID {
		t.Errorf("bob's create of the same name: %d %s, want 201 with another ID", code, body)
	}

	// Trigger: one run now.
	if out, err := harness.Command("schedules", "trigger", sched.ID, "--api", s.APIURL, "--api-key", aliceKey).CombinedOutput(); err != nil {
		t.Fatalf("schedules trigger: %v\n%s", err, out)
	}
	var runID string
	eventually(t, 30*time.Second, func() error {
		var v resources.ScheduleView
		if code, body := scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, aliceKey, nil, &v); code != http.StatusOK {
			return fmt.Errorf("describe: %d %s", code, body)
		}
		if v.Runs != 1 || len(v.RecentRuns) != 1 {
			return fmt.Errorf("describe after trigger: %d runs, recent %v", v.Runs, v.RecentRuns)
		}
		runID = v.RecentRuns[0].TaskID
		return nil
	})
	if !strings.HasPrefix(runID, sched.ID+"-") {
		t.Fatalf("run task %q is not named after its schedule", runID)
	}
	alice, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	actx := withHeader(ctx, "X-API-Key", aliceKey)
	task := waitState(t, actx, alice, a2a.TaskID(runID), a2a.TaskStateInputRequired)
	if scheduleOf(task) != sched.ID {
		t.Errorf("the run's task metadata %v, want the schedule %s", task.Metadata, sched.ID)
	}
	eventually(t, 20*time.Second, func() error {
		list, err := alice.ListTasks(actx, &a2a.ListTasksRequest{})
		if err != nil {
			return err
		}
		for _, lt := range list.Tasks {
			if string(lt.ID) == runID {
				if scheduleOf(lt) != sched.ID {
					return fmt.Errorf("ListTasks shows the run without its schedule: %v", lt.Metadata)
				}
				return nil
			}
		}
		return fmt.Errorf("ListTasks of alice does not list the run %s", runID)
	})
	// The run's approval is in finance's inbox.
	eventually(t, 20*time.Second, func() error {
		var inbox struct {
			Approvals []resources.ApprovalView `json:"approvals"`
		}
		if code, body := scheduleCall(t, "GET", s.APIURL+"/approvals?group=finance", fionaKey, nil, &inbox); code != http.StatusOK {
			return fmt.Errorf("approvals: %d %s", code, body)
		}
		for _, a := range inbox.Approvals {
			if string(a.TaskID) == runID && a.State == "pending" {
				return nil
			}
		}
		return fmt.Errorf("finance's inbox has no approval of the run: %+v", inbox.Approvals)
	})
	// The run's webhook got its events, with the schedule's token.
	eventually(t, 20*time.Second, func() error {
		headers, ids := hooks.received()
		for i, id := range ids {
			if string(id) == runID && headers[i].Get("A2A-Notification-Token") == "hook-token-0123456789" {
				return nil
			}
		}
		return fmt.Errorf("the webhook got no notification of the run with its token (%d notifications)", len(ids))
	})

	// Pause and unpause.
	var v resources.ScheduleView
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":pause", aliceKey, map[string]string{"note": "holidays"}, &v); code != http.StatusOK || !v.Paused || v.Note != "holidays" {
		t.Errorf("pause: %d %s", code, body)
	}
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":unpause", aliceKey, nil, &v); code != http.StatusOK || v.Paused {
		t.Errorf("unpause: %d %s", code, body)
	}

	// Bob: nothing of alice's schedule exists for him.
	for _, c := range []struct{ method, path string }{
		{"GET", "/schedules/" + sched.ID},
		{"POST", "/schedules/" + sched.ID + ":pause"},
		{"POST", "/schedules/" + sched.ID + ":unpause"},
		{"POST", "/schedules/" + sched.ID + ":trigger"},
		{"DELETE", "/schedules/" + sched.ID},
		{"GET", "/schedules/sched-00000000-0000-0000-0000-000000000000"},
	} {
		code, body := scheduleCall(t, c.method, s.APIURL+c.path, bobKey, nil, nil)
		if code != http.StatusNotFound || strings.Contains(body, "expenses") || strings.Contains(body, "offsite") {
			t.Errorf("bob %s %s: %d %s, want 404 telling nothing", c.method, c.path, code, body)
		}
	}
	if out, err := harness.Command("schedules", "describe", sched.ID, "--api", s.APIURL, "--api-key", bobKey).CombinedOutput(); err == nil || !strings.Contains(string(out), "404") {
		t.Errorf("bob's schedules describe: %v %s, want a 404", err, out)
	}
	var bobList resources.ScheduleList
	eventually(t, 20*time.Second, func() error {
		if code, body := scheduleCall(t, "GET", s.APIURL+"/schedules", bobKey, nil, &bobList); code != http.StatusOK {
			return fmt.Errorf("bob's list: %d %s", code, body)
		}
		if len(bobList.Schedules) != 1 || bobList.Schedules[0].ID != bobs.ID {
			return fmt.Errorf("bob's list: %+v, want his schedule only", bobList.Schedules)
		}
		return nil
	})
	bob, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	if _, err := bob.GetTask(withHeader(ctx, "X-API-Key", bobKey), &a2a.GetTaskRequest{ID: a2a.TaskID(runID)}); err == nil {
		t.Error("bob reads alice's scheduled run")
	}
	var aliceList resources.ScheduleList
	eventually(t, 20*time.Second, func() error {
		scheduleCall(t, "GET", s.APIURL+"/schedules", aliceKey, nil, &aliceList)
		if len(aliceList.Schedules) != 1 || aliceList.Schedules[0].ID != sched.ID || aliceList.Schedules[0].Name != "weekly-offsite" {
			return fmt.Errorf("alice's list: %+v", aliceList.Schedules)
		}
		return nil
	})
	out, err = harness.Command("schedules", "list", "--api", s.APIURL, "--api-key", aliceKey).CombinedOutput()
	if err != nil || !strings.Contains(string(out), sched.ID) || !strings.Contains(string(out), "0 9 * * MON Europe/Paris") {
		t.Errorf("alice's schedules list: %v\n%s", err, out)
	}

	// Bad requests: 400 with the reason.
	for _, bad := range []struct {
		req  resources.ScheduleRequest
		want string
	}{
		{resources.ScheduleRequest{Agent: "nobody", Message: resources.ScheduleMessage{Text: "x"}, Every: "1h"}, "agent"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}}, "cron"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}, Every: "1h", Cron: "@daily"}, "cron"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}, Cron: "61 99 * * *"}, "refused"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}, Cron: "@daily", TimeZone: "Mars/Olympus"}, "timeZone"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}, Every: "1h", Overlap: "all"}, "overlap"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}, Every: "1h", CatchupWindow: "1s"}, "catchupWindow"},
		{resources.ScheduleRequest{Agent: "echo", Every: "1h"}, "message"},
		{resources.ScheduleRequest{Agent: "echo", Message: resources.ScheduleMessage{Text: "x"}, Every: "1h", PushConfig: &a2a.PushConfig{URL: "http://169.254.169.254/"}}, "url"},
	} {
		code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", aliceKey, bad.req, nil)
		if code != http.StatusBadRequest || !strings.Contains(body, bad.want) {
			t.Errorf("create %+v: %d %s, want 400 about %s", bad.req, code, body, bad.want)
		}
	}
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":explode", aliceKey, nil, nil); code < 400 || code >= 500 {
		t.Errorf("POST :explode: %d %s, want a 4xx", code, body)
	}

	// Delete: gone; its task stays.
	if out, err := harness.Command("schedules", "delete", sched.ID, "--api", s.APIURL, "--api-key", aliceKey).CombinedOutput(); err != nil {
		t.Fatalf("schedules delete: %v\n%s", err, out)
	}
	if code, _ := scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, aliceKey, nil, nil); code != http.StatusNotFound {
		t.Errorf("describe after delete: %d, want 404", code)
	}
	if _, err := alice.GetTask(actx, &a2a.GetTaskRequest{ID: a2a.TaskID(runID)}); err != nil {
		t.Errorf("the run's task after the schedule's delete: %v", err)
	}
}

func mustLocation(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// slowRun is a completed run of the slow agent: when it worked.
type slowRun struct {
	id         string
	began, end time.Time
}

// TestScheduleSkipOverlapSurvivesKill: a schedule every 2 s with the skip
// policy on an agent that works 3 s. Runs never overlap and due times are
// skipped; serve is killed (kill -9) right after a run ends and started
// again: the schedule goes on, and every run the schedule counts is one
// task (none lost, none doubled), each completed once.
func TestScheduleSkipOverlapSurvivesKill(t *testing.T) {
	program := buildVersioned(t, "v1")
	s := harness.StartServeProgram(t, program, t.TempDir(), nil)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/slow")

	var sched resources.ScheduleView
	req := resources.ScheduleRequest{Name: "every-2s", Agent: "slow", Message: resources.ScheduleMessage{Text: "3s"}, Every: "2s", Overlap: "skip",
		CatchupWindow: "1m"}
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", "", req, &sched); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	completed := func() []slowRun {
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateCompleted})
		if err != nil {
			return nil
		}
		var runs []slowRun
		for _, task := range list.Tasks {
			if scheduleOf(task) != sched.ID {
				continue
			}
			full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				continue
			}
			f := strings.Fields(workflows.MessageText(full.Status.Message))
			if len(f) != 2 {
				t.Errorf("run %s answered %q", task.ID, workflows.MessageText(full.Status.Message))
				continue
			}
			b, _ := time.Parse(time.RFC3339Nano, f[0])
			e, _ := time.Parse(time.RFC3339Nano, f[1])
			runs = append(runs, slowRun{id: string(task.ID), began: b, end: e})
		}
		return runs
	}
	waitRuns := func(n int) {
		t.Helper()
		eventually(t, 90*time.Second, func() error {
			if got := len(completed()); got < n {
				return fmt.Errorf("%d runs completed, waiting for %d", got, n)
			}
			return nil
		})
	}
	waitRuns(2)
	// Kill right after a run completes: between runs.
	before := len(completed())
	waitRuns(before + 1)
	s.Proc().Kill()
	killedAt := time.Now()
	time.Sleep(3 * time.Second) // a due time passes while serve is down
	s.Restart()
	t.Logf("serve was down %s", time.Since(killedAt).Round(time.Millisecond))
	waitRuns(before + 3)

	// Stop the schedule and let the run under way end.
	var v resources.ScheduleView
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":pause", "", nil, &v); code != http.StatusOK {
		t.Fatalf("pause: %d %s", code, body)
	}
	eventually(t, 30*time.Second, func() error {
		v = resources.ScheduleView{}
		if code, body := scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, "", nil, &v); code != http.StatusOK {
			return fmt.Errorf("describe: %d %s", code, body)
		}
		if len(v.RunningTasks) > 0 {
			return fmt.Errorf("runs under way: %v", v.RunningTasks)
		}
		if got := len(completed()); got != v.Runs {
			return fmt.Errorf("%d runs completed, the schedule counts %d", got, v.Runs)
		}
		return nil
	})
	runs := completed()
	slices.SortFunc(runs, func(a, b slowRun) int { return a.began.Compare(b.began) })
	seen := map[string]bool{}
	for i, r := range runs {
		if seen[r.id] {
			t.Errorf("run %s listed twice", r.id)
		}
		seen[r.id] = true
		if r.end.Sub(r.began) < 3*time.Second {
			t.Errorf("run %s worked %s, want 3s", r.id, r.end.Sub(r.began))
		}
		if i > 0 && r.began.Before(runs[i-1].end) {
			t.Errorf("run %s began at %s, before run %s ended at %s: runs overlap", r.id, r.began.Format(time.StampMilli),
				runs[i-1].id, runs[i-1].end.Format(time.StampMilli))
		}
	}
	if v.SkippedOverlap == 0 {
		t.Errorf("no due time was skipped (%d runs): the agent works 3s, the schedule is every 2s", v.Runs)
	}
	// Every run the schedule started is one of the tasks, and the other way.
	for _, r := range v.RecentRuns {
		if !seen[r.TaskID] {
			t.Errorf("the schedule started %s, which is no completed task", r.TaskID)
		}
	}
	t.Logf("%d runs, %d due times skipped (overlap), %d missed (catch-up window); serve killed after run %d",
		v.Runs, v.SkippedOverlap, v.MissedCatchup, before+1)
	for _, r := range runs {
		t.Logf("  %s %s → %s", r.id, r.began.Format("15:04:05.000"), r.end.Format("15:04:05.000"))
	}

	// Trigger while paused starts one run; unpause resumes the timetable.
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":trigger", "", nil, nil); code != http.StatusOK {
		t.Fatalf("trigger: %d %s", code, body)
	}
	waitRuns(v.Runs + 1)
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":unpause", "", nil, &v); code != http.StatusOK || v.Paused {
		t.Fatalf("unpause: %d %s", code, body)
	}
	waitRuns(v.Runs + 1)
}

// TestReplayRecordedScheduledExpensesHistory: a run of a schedule (its
// first message in the workflow's input, the schedule's push config from
// the start) of an expense over the limit, approved through REST, replays
// against the current code. With A2AFLOW_RECORD_HISTORY=1 it writes
// cmd/a2aflow/internal/demo/testdata/expenses-scheduled.history.json.
func TestReplayRecordedScheduledExpensesHistory(t *testing.T) {
	hooks := newWebhookReceiver(t)
	s := harness.StartServe(t, t.TempDir(), "--push-allow-hosts", "loopback")
	ctx := harness.Context(t)
	var sched resources.ScheduleView
	req := resources.ScheduleRequest{Agent: "expenses", Message: resources.ScheduleMessage{Text: "250 EUR monthly conference ticket"},
		Cron: "0 9 1 * *", TimeZone: "Europe/Paris", Paused: true,
		PushConfig: &a2a.PushConfig{URL: hooks.URL + "/hook", Token: "hook-token-0123456789"}}
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", "", req, &sched); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":trigger", "", nil, nil); code != http.StatusOK {
		t.Fatalf("trigger: %d %s", code, body)
	}
	var runID string
	eventually(t, 30*time.Second, func() error {
		var v resources.ScheduleView
		scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, "", nil, &v)
		if len(v.RecentRuns) != 1 {
			return fmt.Errorf("no run yet")
		}
		runID = v.RecentRuns[0].TaskID
		return nil
	})
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	task := waitState(t, ctx, c, a2a.TaskID(runID), a2a.TaskStateInputRequired)
	approval := string(task.ID) + "-approval-1"
	if code := postJSON(t, s.APIURL+"/approvals/"+approval+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": true, "comment": "monthly"}, nil); code != 200 {
		t.Fatalf("POST /approvals/%s/decision: HTTP %d", approval, code)
	}
	done := waitState(t, ctx, c, task.ID, a2a.TaskStateCompleted)
	if first := done.History; len(first) == 0 || first[0].ID != runID || workflows.MessageText(first[0]) != "250 EUR monthly conference ticket" {
		t.Errorf("the run's first message: %+v, want the schedule's text with the task's ID as its ID", first)
	}
	replayAndRecord(t, ctx, s, task.ID, "expenses-scheduled.history.json")
}

// TestScheduleOverlapPolicies: the two other policies on the slow agent
// (3 s of work, every 2 s). buffer-one: each run starts once the previous
// one ended (never overlapping, at most one waiting), so the runs follow
// each other without a gap of a whole period. cancel-previous: each run
// cancels the one under way, whose task ends canceled (A2A's canceled
// state, as CancelTask would), and no two runs work at once either.
func TestScheduleOverlapPolicies(t *testing.T) {
	program := buildVersioned(t, "v1")
	s := harness.StartServeProgram(t, program, t.TempDir(), nil)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/slow")
	tc := dialTemporal(t, s)
	tasksOf := func(id string) []*a2a.Task {
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []*a2a.Task
		for _, task := range list.Tasks {
			if scheduleOf(task) == id {
				out = append(out, task)
			}
		}
		return out
	}
	for _, policy := range []string{"buffer-one", "cancel-previous"} {
		t.Run(policy, func(t *testing.T) {
			var sched resources.ScheduleView
			req := resources.ScheduleRequest{Name: policy, Agent: "slow", Message: resources.ScheduleMessage{Text: "3s"}, Every: "2s", Overlap: policy}
			if code, body := scheduleCall(t, "POST", s.APIURL+"/schedules", "", req, &sched); code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, body)
			}
			eventually(t, 60*time.Second, func() error {
				var v resources.ScheduleView
				scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, "", nil, &v)
				if v.Runs < 4 {
					return fmt.Errorf("%d runs so far", v.Runs)
				}
				return nil
			})
			scheduleCall(t, "POST", s.APIURL+"/schedules/"+sched.ID+":pause", "", nil, nil)
			var v resources.ScheduleView
			eventually(t, 30*time.Second, func() error {
				v = resources.ScheduleView{}
				scheduleCall(t, "GET", s.APIURL+"/schedules/"+sched.ID, "", nil, &v)
				for _, task := range tasksOf(sched.ID) {
					if !task.Status.State.Terminal() {
						return fmt.Errorf("task %s is %s", task.ID, task.Status.State)
					}
				}
				if len(v.RunningTasks) > 0 {
					var st []string
					for _, id := range v.RunningTasks {
						d, err := tc.DescribeWorkflowExecution(ctx, id, "")
						if err != nil {
							st = append(st, err.Error())
							continue
						}
						st = append(st, d.GetWorkflowExecutionInfo().GetStatus().String())
					}
					return fmt.Errorf("runs under way: %v %v", v.RunningTasks, st)
				}
				return nil
			})
			tasks := tasksOf(sched.ID)
			states := map[a2a.TaskState]int{}
			var runs []slowRun
			for _, task := range tasks {
				states[task.Status.State]++
				if task.Status.State != a2a.TaskStateCompleted {
					continue
				}
				full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
				if err != nil {
					t.Fatal(err)
				}
				f := strings.Fields(workflows.MessageText(full.Status.Message))
				b, _ := time.Parse(time.RFC3339Nano, f[0])
				e, _ := time.Parse(time.RFC3339Nano, f[1])
				runs = append(runs, slowRun{id: string(task.ID), began: b, end: e})
			}
			t.Logf("%s: %d runs, %d tasks by state %v, %d due times skipped", policy, v.Runs, len(tasks), states, v.SkippedOverlap)
			if len(tasks) != v.Runs {
				t.Errorf("%d tasks, the schedule counts %d runs", len(tasks), v.Runs)
			}
			slices.SortFunc(runs, func(a, b slowRun) int { return a.began.Compare(b.began) })
			for i := 1; i < len(runs); i++ {
				if runs[i].began.Before(runs[i-1].end) {
					t.Errorf("run %s began before run %s ended", runs[i].id, runs[i-1].id)
				}
			}
			switch policy {
			case "buffer-one":
				if states[a2a.TaskStateCompleted] != len(tasks) {
					t.Errorf("buffer-one: tasks by state %v, want all completed", states)
				}
				for i := 1; i < len(runs); i++ {
					if gap := runs[i].began.Sub(runs[i-1].end); gap > 1500*time.Millisecond {
						t.Errorf("buffer-one: run %s started %s after the previous ended, want at once (it was buffered)", runs[i].id, gap)
					}
				}
			case "cancel-previous":
				if states[a2a.TaskStateCanceled] < 3 {
					t.Errorf("cancel-previous: tasks by state %v, want the runs overtaken canceled", states)
				}
			}
		})
	}
}
