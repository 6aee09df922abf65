package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// sizedFS mounts a tmpfs of size (e.g. "96m") at a new folder and returns
// it, unmounted when t ends (after what t starts later has stopped). It
// skips t where mounting is not possible: the test needs root (or
// CAP_SYS_ADMIN) on Linux.
func sizedFS(t *testing.T, size string) string {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("a full disk needs a size-limited file system: mount -t tmpfs (root or CAP_SYS_ADMIN on Linux) failed: %v %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill appends zeros to dir/fill until the file system has leave bytes
// free or less (0: until it is full), and returns the file's path.
func fill(t *testing.T, dir string, leave uint64) string {
	path := filepath.Join(dir, "fill")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for freeSpace(t, dir) > leave {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	return path
}

// freeSpace is what dir's file system has free for an unprivileged
// writer, as serve's guard reads it.
func freeSpace(t *testing.T, dir string) uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Bavail * uint64(st.Bsize)
}

// storageFull checks err is the refusal of a full disk: retryable, reason
// STORAGE_FULL, naming the disk.
func storageFull(t *testing.T, what string, err error, took time.Duration) {
	t.Helper()
	var a2aErr *a2a.Error
	if !errors.As(err, &a2aErr) || a2aErr.Details["reason"] != "STORAGE_FULL" || a2aErr.Details["retryable"] != true ||
		!strings.Contains(a2aErr.Error(), "disk is full") {
		t.Errorf("%s on a full disk: %v (details %v), want a retryable STORAGE_FULL error naming the disk", what, err, detailsOf(err))
	}
	if took > 2*time.Second {
		t.Errorf("%s on a full disk was answered after %v, want at once", what, took)
	}
}

func detailsOf(err error) map[string]any {
	var a2aErr *a2a.Error
	if errors.As(err, &a2aErr) {
		return a2aErr.Details
	}
	return nil
}

// faultsDisk runs serve with its data directory (the embedded Temporal's
// SQLite files, a2aflow's database, the payload store) on a 128 MiB tmpfs
// and --disk-reserve 40MiB, and fills it in three steps while tasks wait:
//
//  1. 56 MiB free, above the reserve (and below the 64 MiB default): a
//     message is taken.
//  2. 24 MiB free, below it: new messages (a new task, a waiting task's
//     answer) are refused at once with a retryable STORAGE_FULL error
//     (JSON-RPC -32603 with its data, HTTP 503 with Retry-After), /readyz
//     says "disk" failed; a cancel, an approval decision sent as an A2A
//     message and one through REST are taken, and their tasks end.
//  3. Full to the last byte: new messages still refused at once; serve does
//     not exit.
//
// Once the file is removed, the refused requests sent again succeed, each
// message in its task once, and the task completes its booking.
func faultsDisk(t *testing.T) {
	dir := sizedFS(t, "128m")
	s := harness.StartServe(t, dir, "--disk-reserve", "40MiB")
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/travel")
	expenses, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/expenses")
	send := func(c *a2aclient.Client, taskID a2a.TaskID, msgID, text string) (*a2a.Task, error) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		msg.ID, msg.TaskID = msgID, taskID
		actx, cancel := context.WithTimeout(ctx, 45*time.Second)
		defer cancel()
		res, err := c.SendMessage(actx, &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			return nil, err
		}
		task, _ := res.(*a2a.Task)
		return task, nil
	}
	task, err := send(c, "", "disk-m1", "Book a flight")
	if err != nil {
		t.Fatal(err)
	}
	if task, err = send(c, task.ID, "disk-m2", "Lisbon"); err != nil {
		t.Fatal(err)
	}
	harness.WantState(t, task, a2a.TaskStateInputRequired, "On which date? (YYYY-MM-DD)")
	toCancel, err := send(c, "", "disk-c1", "Book a flight")
	if err != nil {
		t.Fatal(err)
	}
	byMessage, messageApproval := expense(t, ctx, expenses, "900 EUR conference ticket")
	byREST, restApproval := expense(t, ctx, expenses, "800 EUR conference hotel")

	// 1. Above the reserve.
	if free := freeSpace(t, dir); free < 60<<20 {
		t.Fatalf("%s free on the 128 MiB file system after start, want 60 MiB or more", mibs(free))
	}
	filler := fill(t, dir, 56<<20)
	if task, err = send(c, task.ID, "disk-m3", "2026-12-24"); err != nil {
		t.Fatalf("a message with %s free, above --disk-reserve 40MiB: %v", mibs(freeSpace(t, dir)), err)
	}
	harness.WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")

	// 2. Below it.
	fill(t, dir, 24<<20)
	diskRefusals(t, ctx, s.APIURL, func(taskID a2a.TaskID, msgID, text string) error {
		_, err := send(c, taskID, msgID, text)
		return err
	}, task.ID)
	diskAllowsEndingWork(t, ctx, s.APIURL, c, expenses, toCancel.ID, byMessage.ID, byREST.ID, messageApproval, restApproval)

	// 3. To the last byte.
	fill(t, dir, 0)
	began := time.Now()
	_, err = send(c, "", "disk-new", "Book a flight")
	storageFull(t, "a new task on a disk full to the last byte", err, time.Since(began))

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	var retries int
	id := task.ID
	for {
		task, err = send(c, id, "disk-m4", "2")
		if err == nil || time.Since(freed) > 90*time.Second || !retryable(err) {
			break
		}
		retries++
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the answer sent again %v after space was freed: %v", time.Since(freed), err)
	}
	t.Logf("space freed: the refused answer, sent again, was taken %v later (%d retries)", time.Since(freed).Round(time.Millisecond), retries)
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	newTask, err := send(c, "", "disk-new", "Book a flight")
	if err != nil {
		t.Fatalf("the refused new task, sent again: %v", err)
	}
	harness.WantState(t, newTask, a2a.TaskStateInputRequired, "Where to?")

	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got.History {
		if m.Role == a2a.MessageRoleUser {
			ids = append(ids, m.ID)
		}
	}
	if strings.Join(ids, " ") != "disk-m1 disk-m2 disk-m3 disk-m4" {
		t.Errorf("the task's user messages: %v, want each once, in order", ids)
	}
	if out := s.Proc().Out.String(); strings.Contains(out, "panic") {
		t.Errorf("serve panicked on the full disk:\n%s", out)
	}
}

// diskRefusals checks serve at apiURL refuses new messages at once: a new
// task and the answer to waiting over JSON-RPC (send), a new task over
// HTTP+JSON (503 with Retry-After); and that /readyz says "disk" failed.
func diskRefusals(t *testing.T, ctx context.Context, apiURL string, send func(a2a.TaskID, string, string) error, waiting a2a.TaskID) {
	began := time.Now()
	err := send("", "disk-new", "Book a flight")
	storageFull(t, "a new task", err, time.Since(began))
	began = time.Now()
	err = send(waiting, "disk-m4", "2")
	storageFull(t, "the waiting task's answer", err, time.Since(began))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/message:send",
		strings.NewReader(`{"message":{"messageId":"disk-rest","role":"ROLE_USER","parts":[{"text":"Book a flight"}]}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("HTTP+JSON message:send on a full disk: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// /readyz keeps its answer for a second.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var ready struct{ Checks map[string]string }
		code := getJSON(t, apiURL+"/readyz", &ready)
		if code == http.StatusServiceUnavailable && ready.Checks["disk"] == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/readyz on a full disk: %d %v, want 503 with disk failed", code, ready.Checks)
			break
		}
	}
}

func mibs(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// diskAllowsEndingWork checks that below the disk reserve a cancel and an
// approval decision (as an A2A data part and through REST) are still taken:
// they end or free work instead of adding it.
func diskAllowsEndingWork(t *testing.T, ctx context.Context, apiURL string, c, expenses *a2aclient.Client, toCancel, byMessage, byREST a2a.TaskID, messageApproval, restApproval string) {
	t.Helper()
	began := time.Now()
	if got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: toCancel}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("cancel below the reserve: %v, %v; want the task canceled", err, got)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvalId": messageApproval, "approved": true, "comment": "ok"}))
	msg.TaskID = byMessage
	if _, err := expenses.SendMessage(withHeader(ctx, "X-Approver", "fiona"), &a2a.SendMessageRequest{Message: msg}); err != nil {
		t.Errorf("an approval decision as an A2A message below the reserve: %v, want it taken", err)
	}
	if code := postJSON(t, apiURL+"/approvals/"+restApproval+"/decision", map[string]string{"X-Approver": "fiona"},
		map[string]any{"approved": false, "comment": "no"}, nil); code != http.StatusOK {
		t.Errorf("an approval decision through REST below the reserve: HTTP %d, want 200", code)
	}
	waitState(t, ctx, expenses, byMessage, a2a.TaskStateCompleted)
	waitState(t, ctx, expenses, byREST, a2a.TaskStateCompleted)
	t.Logf("below the reserve: a cancel and two decisions taken, their tasks ended %v later", time.Since(began).Round(time.Millisecond))

}
