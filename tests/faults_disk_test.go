package tests

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// fill writes zeros to dir/fill until the file system is full.
func fill(t *testing.T, dir string) string {
	path := filepath.Join(dir, "fill")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	return path
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
// SQLite files, a2aflow's database, the payload store) on a 96 MiB tmpfs,
// fills it while a travel task waits for its second answer, and checks:
// new messages (a new task, and the waiting task's answer) are refused at
// once with a retryable STORAGE_FULL error (JSON-RPC -32603 with its data,
// HTTP 503 with Retry-After), /readyz says "disk" failed, serve does not
// exit; once the file is removed, the same requests sent again succeed,
// each message in its task once, and the task completes its booking.
func faultsDisk(t *testing.T) {
	dir := sizedFS(t, "96m")
	s := harness.StartServe(t, dir)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/travel")
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

	filler := fill(t, dir)
	began := time.Now()
	_, err = send(c, "", "disk-new", "Book a flight")
	storageFull(t, "a new task", err, time.Since(began))
	began = time.Now()
	_, err = send(c, task.ID, "disk-m3", "2026-12-24")
	storageFull(t, "the waiting task's answer", err, time.Since(began))
	resp, err := http.Post(s.APIURL+"/message:send", "application/json",
		strings.NewReader(`{"message":{"messageId":"disk-rest","role":"ROLE_USER","parts":[{"text":"Book a flight"}]}}`))
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
		code := getJSON(t, s.APIURL+"/readyz", &ready)
		if code == http.StatusServiceUnavailable && ready.Checks["disk"] == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/readyz on a full disk: %d %v, want 503 with disk failed", code, ready.Checks)
			break
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	var retries int
	id := task.ID
	for {
		task, err = send(c, id, "disk-m3", "2026-12-24")
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
	harness.WantState(t, task, a2a.TaskStateInputRequired, "How many travellers?")
	if task, err = send(c, task.ID, "disk-m4", "2"); err != nil {
		t.Fatal(err)
	}
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
