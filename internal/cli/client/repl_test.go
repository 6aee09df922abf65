package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
)

// fakeSender answers like a travel agent: the first message asks, the answer completes.
type fakeSender struct{ sent []string }

func (f *fakeSender) Card(_ context.Context, url string) (*a2a.AgentCard, error) {
	if strings.Contains(url, "bad") {
		return nil, errors.New("agent card at " + url + ": not found")
	}
	return &a2a.AgentCard{Name: "agent-" + url[len(url)-1:]}, nil
}

func (f *fakeSender) Send(_ context.Context, url string, msg *a2a.Message) (a2a.SendMessageResult, error) {
	f.sent = append(f.sent, url+"|"+string(msg.TaskID)+"|"+msg.ContextID+"|"+partsText(msg.Parts))
	t := &a2a.Task{ID: "t1", ContextID: "c1"}
	if strings.HasSuffix(url, "/agents/router") {
		// The router's contract: the result as JSON text and as data; an
		// unknown tool is rejected.
		call := msg.Parts[0].Data().(map[string]any)
		if call["tool"] != "echo" {
			t.Status = a2a.TaskStatus{State: a2a.TaskStateRejected, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(fmt.Sprintf("unknown tool %q; local tools: echo", call["tool"])))}
			return t, nil
		}
		raw, _ := json.Marshal(call["params"])
		t.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(string(raw)), a2a.NewDataPart(call["params"]))}
		return t, nil
	}
	if msg.TaskID == "" {
		t.Status = a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Where to?"))}
		return t, nil
	}
	t.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
	t.Artifacts = []*a2a.Artifact{{Name: "booking", Parts: a2a.ContentParts{a2a.NewTextPart("ok")}}}
	return t, nil
}

func TestREPLHandle(t *testing.T) {
	servers := func() ([]replServer, error) { return []replServer{{name: "r", url: "http://r"}}, nil }
	tests := []struct {
		name       string
		lines      []string
		wantSent   []string
		wantPrompt string
		wantOut    []string
		wantErr    string
	}{
		{"ask and answer", []string{"Book", "Lisbon", "again"},
			[]string{"http://l||" + "|Book", "http://l|t1|c1|Lisbon", "http://l||c1|again"},
			"agent-l [input-required: Where to?]> ", []string{"Agent asks: Where to?", "Artifact booking: ok"}, ""},
		{"connect by index and disconnect", []string{":connect 1", "hi", ":disconnect"},
			[]string{"http://r|||hi"}, "agent-l> ", []string{"Connected to agent-r", "Back to the local agent"}, ""},
		{"remote keeps local default", []string{":connect http://r", ":remote hi"},
			[]string{"http://r|||hi"}, "agent-r [input-required: Where to?]> ", nil, ""},
		{"remote without connect", []string{":remote hi"}, nil, "agent-l> ", nil, "no remote agent connected"},
		{"servers", []string{":servers"}, nil, "agent-l> ", []string{"* 0 local http://l", "  1 r http://r"}, ""},
		{"bad index", []string{":connect 7"}, nil, "agent-l> ", nil, "no such server"},
		{"bad card", []string{":connect http://bad"}, nil, "agent-l> ", nil, "not found"},
		{"tool", []string{`:tool echo {"text": "hi"}`}, []string{`http://l/agents/router|||{"params":{"text":"hi"},"tool":"echo"}`},
			"agent-l> ", []string{"Task t1: completed\nAgent: {\"text\":\"hi\"}\n"}, ""},
		{"tool without params", []string{":tool list_agents"}, []string{`http://l/agents/router|||{"params":{},"tool":"list_agents"}`},
			"agent-l> ", []string{"Task t1: rejected\nAgent: unknown tool \"list_agents\"; local tools: echo\n"}, ""},
		{"tool keeps number text", []string{`:tool echo {"n": 12345678901234567890}`}, []string{`http://l/agents/router|||{"params":{"n":12345678901234567890},"tool":"echo"}`},
			"agent-l> ", nil, ""},
		{"tool while connected goes to the local router", []string{":connect 1", `:tool echo {}`}, []string{`http://l/agents/router|||{"params":{},"tool":"echo"}`},
			"agent-r> ", nil, ""},
		{"remote tool goes to the connected server's router", []string{":connect http://r/agents/x", `:remote :tool list_agents {"format":"simple"}`},
			[]string{`http://r/agents/router|||{"params":{"format":"simple"},"tool":"list_agents"}`}, "agent-x> ", nil, ""},
		{"remote tool without connect", []string{`:remote :tool echo {}`}, nil, "agent-l> ", nil, "no remote agent connected"},
		{"tool array", []string{":tool echo [1]"}, nil, "agent-l> ", nil, "must be a JSON object like {\"text\":\"hi\"}, not an array"},
		{"tool string", []string{`:tool echo "x"`}, nil, "agent-l> ", nil, "not a string"},
		{"tool bad JSON", []string{":tool echo {text: 1}"}, nil, "agent-l> ", nil, "not valid JSON"},
		{"tool two objects", []string{":tool echo {} {}"}, nil, "agent-l> ", nil, "one JSON object"},
		{"tool without name", []string{":tool"}, nil, "agent-l> ", nil, "needs a tool name"},
		{"tool JSON without name", []string{`:tool {"text":"hi"}`}, nil, "agent-l> ", nil, "needs a tool name"},
		{"stop without listen", []string{":stop"}, nil, "agent-l> ", nil, "nothing is listening"},
		{"listen without port", []string{":listen"}, nil, "agent-l> ", nil, "needs a port"},
		{"listen bad port", []string{":listen http"}, nil, "agent-l> ", nil, "a port is a number from 1 to 65535"},
		{"listen port out of range", []string{":listen 70000"}, nil, "agent-l> ", nil, "a port is a number from 1 to 65535"},
		{"unknown", []string{":nope"}, nil, "agent-l> ", nil, "unknown command"},
		{"quit", []string{":quit"}, nil, "agent-l> ", nil, "quit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSender{}
			var out bytes.Buffer
			s := newREPLSession(f, "http://l", servers, &out)
			s.task("http://l").name = "agent-l"
			var err error
			for _, l := range tt.lines {
				if err = s.handle(context.Background(), l); err != nil {
					break
				}
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantSent, f.sent); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPrompt, s.prompt()); diff != "" {
				t.Errorf("prompt (-want +got):\n%s", diff)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestREPLRunPipe(t *testing.T) {
	var out, errOut bytes.Buffer
	s := newREPLSession(&fakeSender{}, "http://l", nil, &out)
	if err := s.run(context.Background(), strings.NewReader("Book\n:bogus\nLisbon\n"), &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[input-required: Where to?]> ") || !strings.Contains(out.String(), "completed") {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "unknown command :bogus") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

func TestREPLHelpListsEveryCommand(t *testing.T) {
	var out bytes.Buffer
	s := newREPLSession(&fakeSender{}, "http://l", nil, &out)
	if err := s.handle(context.Background(), ":help"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{":help", ":card", ":servers", ":connect URL|N", ":disconnect", ":remote MESSAGE", ":listen PORT", ":stop", ":tool NAME [JSON]", ":quit"} {
		if !strings.Contains(out.String(), "\n  "+c+" ") {
			t.Errorf(":help lacks %s:\n%s", c, out.String())
		}
	}
	if strings.Contains(out.String(), "not supported") {
		t.Errorf(":help still says not supported:\n%s", out.String())
	}
}

func TestREPLServerBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1":                 "http://h:1",
		"http://h:1/":                "http://h:1",
		"http://h:1/agents/travel":   "http://h:1",
		"http://h/x/agents/echo/":    "http://h/x",
		"http://h/agents":            "http://h/agents",
		"http://h/agents/echo/extra": "http://h/agents/echo/extra",
	} {
		if got := serverBase(in); got != want {
			t.Errorf("serverBase(%q) = %q, want %q", in, got, want)
		}
	}
	f := &fakeSender{}
	s := newREPLSession(f, "http://h:1/agents/travel", nil, io.Discard)
	if err := s.handle(context.Background(), ":tool echo"); err != nil {
		t.Fatal(err)
	}
	if want := `http://h:1/agents/router|||{"params":{},"tool":"echo"}`; len(f.sent) != 1 || f.sent[0] != want {
		t.Errorf("sent %q, want %q", f.sent, want)
	}
}

func TestREPLToolReplyShownOnce(t *testing.T) {
	var out bytes.Buffer
	s := newREPLSession(&fakeSender{}, "http://l", nil, &out)
	if err := s.handle(context.Background(), `:tool echo {"text":"hi"}`); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), `{"text":"hi"}`); n != 1 {
		t.Errorf("the result shows %d times, want once:\n%s", n, out.String())
	}
	// A data part that says something else than the text stays.
	m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("done"), a2a.NewDataPart(map[string]any{"a": 1}))
	if got, want := replyText(m), `done {"a":1}`; got != want {
		t.Errorf("replyText = %q, want %q", got, want)
	}
}

func TestREPLRunInterrupted(t *testing.T) {
	var out, errOut bytes.Buffer
	s := newREPLSession(&fakeSender{}, "http://l", nil, &out)
	ctx, cancel := context.WithCancel(context.Background())
	in, w := io.Pipe() // stdin that never ends, like a terminal
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- s.run(ctx, in, &errOut) }()
	if _, err := w.Write([]byte("Book\n")); err != nil {
		t.Fatal(err)
	}
	cancel() // Ctrl-C
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not end after the context was canceled")
	}
	if !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("stderr: %q", errOut.String())
	}
}

func TestREPLListenPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	s := newREPLSession(&fakeSender{}, "http://l", nil, io.Discard)
	s.listen = listenConfig{exe: "/nonexistent/a2aflow", dataDir: dir}
	err = s.handle(context.Background(), fmt.Sprintf(":listen %d", port))
	if want := fmt.Sprintf("port %d is taken", port); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf(":listen on a taken port: %v, want %q", err, want)
	}
	if s.listener != nil || s.local != "http://l" {
		t.Errorf("listener %v, local %s after a failed :listen", s.listener, s.local)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("listen-%d", port))); !os.IsNotExist(err) {
		t.Errorf("a failed :listen made its data dir: %v", err)
	}
}

// fakeServe writes an executable shell script standing for a2aflow.
func fakeServe(t *testing.T, script string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	path := filepath.Join(t.TempDir(), "a2aflow")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeTestPort(t *testing.T) int {
	t.Helper()
	ports, err := freeLoopbackPorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// gone reports whether process pid has ended (and was reaped).
func gone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return p.Signal(syscall.Signal(0)) != nil
}

func TestREPLListenServeExitsEarly(t *testing.T) {
	exe := fakeServe(t, `echo "fake serve: $*" >&2; exit 3`)
	dir := t.TempDir()
	port := freeTestPort(t)
	s := newREPLSession(&fakeSender{}, "http://l", nil, io.Discard)
	s.listen = listenConfig{exe: exe, dataDir: dir}
	err := s.handle(context.Background(), fmt.Sprintf(":listen %d", port))
	if err == nil {
		t.Fatal(":listen succeeded with a serve that exits")
	}
	logPath := filepath.Join(dir, fmt.Sprintf("listen-%d", port), "serve.log")
	for _, want := range []string{
		"exited before it was ready (exit status 3)",
		"last lines of " + logPath,
		fmt.Sprintf("fake serve: serve --http-addr 127.0.0.1:%d --temporal-addr 127.0.0.1:", port),
		"--data-dir " + filepath.Dir(logPath) + " --log-level warn",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if s.listener != nil || s.local != "http://l" {
		t.Errorf("listener %v, local %s after a failed :listen", s.listener, s.local)
	}
}

func TestREPLListenNotReadyIsKilled(t *testing.T) {
	// Ignores SIGTERM and never answers /healthz.
	exe := fakeServe(t, `echo "pid $$"; trap "" TERM; exec sleep 60`)
	dir := t.TempDir()
	port := freeTestPort(t)
	begin := time.Now()
	_, err := startListener(context.Background(), listenConfig{exe: exe, dataDir: dir, startTimeout: time.Second, stopTimeout: 300 * time.Millisecond}, port)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("did not answer http://127.0.0.1:%d/healthz within 1s", port)) {
		t.Fatalf("startListener: %v", err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("startListener took %s", d)
	}
	log, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("listen-%d", port), "serve.log"))
	_, pidText, ok := strings.Cut(string(log), "pid ")
	pid, perr := strconv.Atoi(strings.TrimSpace(pidText))
	if !ok || perr != nil {
		t.Fatalf("no pid in the log:\n%s", log)
	}
	if !gone(pid) {
		t.Errorf("the serve child %d is still running", pid)
	}
}

func TestREPLChildStop(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	dir := t.TempDir()
	tests := []struct {
		name     string
		script   string
		wantKill bool
	}{
		{"stops on SIGTERM", "echo ready; exec sleep 60", false},
		{"killed when it ignores SIGTERM", `trap "" TERM; echo ready; exec sleep 60`, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logPath := filepath.Join(dir, fmt.Sprintf("log-%d", i))
			c, err := startChild("/bin/sh", []string{"-c", tt.script}, os.Environ(), logPath, "header\n")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.cmd.Process.Kill() }()
			// The shell has set its trap once it says so (a fixed pause
			// was too short for a loaded machine's fork and exec).
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if log, _ := os.ReadFile(logPath); strings.Contains(string(log), "ready") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the shell did not start within 10 s")
				}
			}
			if runtime.GOOS == "linux" {
				// Its own process group: the terminal's Ctrl-C does not reach it.
				stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid()))
				if err != nil {
					t.Fatal(err)
				}
				fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
				if pgrp := fields[2]; pgrp != strconv.Itoa(c.pid()) {
					t.Errorf("process group %s, want its own %d", pgrp, c.pid())
				}
			}
			err = c.stop(500 * time.Millisecond)
			if tt.wantKill != (err != nil) {
				t.Errorf("stop: %v, want a kill report %t", err, tt.wantKill)
			}
			if !c.exited() || !gone(c.pid()) {
				t.Errorf("pid %d still running after stop", c.pid())
			}
			if tt.wantKill && !strings.Contains(c.exitErr(), "killed") {
				t.Errorf("exit: %s, want killed", c.exitErr())
			}
		})
	}
}

func TestREPLListenEnv(t *testing.T) {
	got := listenEnv([]string{"HOME=/h", "A2AFLOW_PUBLIC_URL=http://x", "A2AFLOW_DATABASE=/db", "A2AFLOW_TEMPORAL_UI_URL=http://ui", "A2AFLOW_LOG_LEVEL=debug"})
	if diff := cmp.Diff([]string{"HOME=/h", "A2AFLOW_LOG_LEVEL=debug"}, got); diff != "" {
		t.Errorf("listenEnv (-want +got):\n%s", diff)
	}
}
