package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/a2aflow/a2aflow/internal/ptytest"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestDelegatedCredentialsNeverInHistory runs three a2aflow servers, each
// with its own Temporal: alpha's router delegates to beta's router, which
// delegates to gamma's issues agent, which asks for a GitHub token
// (auth-required). The question comes back to the user at alpha as a
// credential request, the same way a local RequireCredential asks; the
// user's tokens (one GitHub refuses, then a good one, over a stream with
// a push webhook watching; then the good one again, typed at the REPL on a
// terminal, and piped to `a2aflow send --credential`) are sealed by alpha's API, sent by alpha's worker to beta's
// task only, sealed again by beta, sent on to gamma's task, sealed by gamma
// and used there. No token is anywhere in the clear: not in the three
// Temporal histories (every run of every workflow), not in GetTask or
// ListTasks with their history, not in the stream, not in the push
// notifications, not in the three servers' debug logs, not on their disks
// (databases, Temporal's SQLite, payload stores), not on the REPL's
// terminal nor in its --log-file. Each server's history keeps a reference.
func TestDelegatedCredentialsNeverInHistory(t *testing.T) {
	const good, bad = "ghp_DelegatedGoodToken1234567890", "ghp_DelegatedRefusedToken0987654"
	tokens := []string{good, bad}
	github := newFakeGitHub(t, good)
	hook := newPushRecorder(t)

	// gamma serves the issues agent; beta knows it as "issues", alpha knows
	// beta's router as "beta" (operators' peers, on loopback).
	began := time.Now()
	gamma := harness.StartServeEnv(t, t.TempDir(), []string{"A2AFLOW_GITHUB_API_URL=" + github.URL}, "--log-level", "debug")
	beta := harness.StartServe(t, t.TempDir(), "--log-level", "debug", "--peer", "issues="+gamma.APIURL+"/agents/issues")
	alpha := harness.StartServe(t, t.TempDir(), "--log-level", "debug", "--peer", "beta="+beta.APIURL+"/agents/router",
		"--push-allow-hosts", "loopback")
	servers := map[string]*harness.Server{"alpha": alpha, "beta": beta, "gamma": gamma}
	t.Logf("three servers up in %s", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, _ := harness.NewClient(t, ctx, alpha.APIURL+"/agents/router")

	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("@beta @issues List the open issues of octo/widgets"))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: first, Config: &a2a.SendMessageConfig{
		PushConfig: &a2a.PushConfig{ID: "watch", URL: hook.URL + "/a2a"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	task := waitTask(t, ctx, c, id, a2a.TaskStateAuthRequired, "A GitHub token that can read octo/widgets, please.", time.Minute)
	parts := task.Status.Message.Parts
	if data, _ := parts[len(parts)-1].Data().(map[string]any); data["service"] != "github" || data["authType"] != "bearer" || data["agent"] != "beta" {
		t.Errorf("alpha's auth-required status carries %v, want service github, auth type bearer, agent beta", parts[len(parts)-1].Data())
	}

	// Bad answers are refused as invalid params, and the task still waits.
	for name, part := range map[string]*a2a.Part{
		"a reference of the caller's": a2a.NewDataPart(map[string]any{"credentialRef": "cred-0123456789abcdef01234567", "service": "github", "agent": "beta"}),
		"no credential":               a2a.NewTextPart("   "),
	} {
		m := a2a.NewMessage(a2a.MessageRoleUser, part)
		m.TaskID = id
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%s: %v, want invalid params", name, err)
		}
	}
	waitTask(t, ctx, c, id, a2a.TaskStateAuthRequired, "A GitHub token that can read octo/widgets, please.", time.Second)

	// A token GitHub refuses: gamma asks again, and so do beta and alpha.
	harness.Send(t, ctx, c, id, bad)
	waitTask(t, ctx, c, id, a2a.TaskStateAuthRequired, "GitHub refused that token", time.Minute)

	// The good one, as a data part, over a stream.
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"credential": good}))
	m.TaskID = id
	var streamed bytes.Buffer
	for e, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}) {
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(e)
		streamed.Write(raw)
	}
	task = waitTask(t, ctx, c, id, a2a.TaskStateCompleted, "2 open issue(s) in octo/widgets.", time.Minute)
	if len(task.Artifacts) != 1 || !strings.Contains(artifactsJSON(task), "Widgets wobble") {
		t.Errorf("alpha's task has the artifacts %s, want gamma's issues", artifactsJSON(task))
	}
	if got, want := github.called(), []string{"GET /repos/octo/widgets/issues false", "GET /repos/octo/widgets/issues true"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GitHub got %q, want %q: the refused token, then the good one", got, want)
	}
	// router-delegation-credential.history.json is alpha's task as it is
	// now (version marker a2aflow.delegated-credential at 1);
	// router-delegation-auth.history.json was recorded before, when the
	// question was relayed as a plain one.
	replayAndRecord(t, ctx, alpha, id, "router-delegation-credential.history.json")

	// The same at the REPL, on a terminal: the token is typed without echo
	// and kept out of its log.
	replLog := filepath.Join(t.TempDir(), "repl.log")
	var terminal string
	t.Run("the REPL on a terminal", func(t *testing.T) {
		terminal = replAnswersCredential(t, alpha.APIURL+"/agents/router", replLog, good)
		if n := len(github.called()); n != 3 {
			t.Errorf("GitHub got %d calls after the REPL's task, want 3", n)
		}
	})

	// And with `a2aflow send --credential`, which reads it from stdin (a
	// pipe here), not from its command line.
	var cliOut string
	t.Run("send --credential", func(t *testing.T) {
		task := routerSend(t, ctx, c, "", a2a.NewTextPart("@beta @issues List the open issues of octo/widgets"))
		waitTask(t, ctx, c, task.ID, a2a.TaskStateAuthRequired, "A GitHub token that can read octo/widgets, please.", time.Minute)
		cmd := harness.Command("send", "--agent", alpha.APIURL+"/agents/router", "--task", string(task.ID), "--credential")
		cmd.Stdin = strings.NewReader(good + "\n")
		out, err := cmd.CombinedOutput()
		cliOut = string(out)
		if err != nil || !strings.Contains(cliOut, ": completed") {
			t.Fatalf("send --credential: %v\n%s", err, out)
		}
		waitTask(t, ctx, c, task.ID, a2a.TaskStateCompleted, "2 open issue(s) in octo/widgets.", time.Minute)
	})

	places := map[string]string{"alpha's stream": streamed.String(), "the REPL's terminal": terminal, "send --credential's output": cliOut}
	if raw, err := os.ReadFile(replLog); err == nil {
		places["the REPL's log file"] = string(raw)
		if !strings.Contains(string(raw), "@beta @issues") {
			t.Errorf("the REPL's log file lacks the request typed:\n%s", raw)
		}
	}
	places["alpha's push notifications"] = hook.waitCompleted(t)
	everything := 100
	for name, s := range servers {
		for _, agent := range []string{"router", "issues"} {
			ac, _ := harness.NewClient(t, ctx, s.APIURL+"/agents/"+agent)
			list, err := ac.ListTasks(ctx, &a2a.ListTasksRequest{IncludeArtifacts: true, HistoryLength: &everything})
			if err != nil {
				t.Fatalf("ListTasks on %s's %s: %v", name, agent, err)
			}
			raw, _ := json.Marshal(list)
			places[name+"'s ListTasks of "+agent] = string(raw)
			var got strings.Builder
			for _, lt := range list.Tasks {
				read, err := ac.GetTask(ctx, &a2a.GetTaskRequest{ID: lt.ID, HistoryLength: &everything})
				if err != nil {
					t.Fatalf("GetTask %s on %s: %v", lt.ID, name, err)
				}
				raw, _ := json.Marshal(read)
				got.Write(raw)
			}
			places[name+"'s GetTask of "+agent] = got.String()
		}
		history := temporalHistories(t, ctx, s)
		places[name+"'s Temporal histories"] = history
		if !strings.Contains(history, "credentialRef") {
			t.Errorf("%s's Temporal histories hold no credential reference: the search does not see payloads, or the answer skipped the credential store", name)
		}
		places[name+"'s logs"] = s.Proc().Out.String()
		places[name+"'s data dir"] = filesUnder(t, s.DataDir)
		if !strings.Contains(places[name+"'s data dir"], "a2aflow-sealed:v2:") {
			t.Errorf("%s's payload store holds no sealed credential", name)
		}
	}
	var where []string
	for place := range places {
		where = append(where, place)
	}
	sort.Strings(where)
	for _, place := range where {
		for _, token := range tokens {
			if strings.Contains(places[place], token) {
				t.Errorf("a token (%s...) is in %s", token[:12], place)
			}
		}
	}
}

// temporalHistories returns every event of every workflow run on s's
// Temporal as protobuf, in which payloads appear verbatim.
func temporalHistories(t *testing.T, ctx context.Context, s *harness.Server) string {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: s.TemporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	var all bytes.Buffer
	var token []byte
	for {
		page, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 100, NextPageToken: token})
		if err != nil {
			t.Fatalf("list the workflows of %s: %v", s.APIURL, err)
		}
		for _, e := range page.Executions {
			it := tc.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					t.Fatalf("history of %s: %v", e.Execution.WorkflowId, err)
				}
				raw, _ := proto.Marshal(ev)
				all.Write(raw)
			}
		}
		if token = page.NextPageToken; len(token) == 0 {
			return all.String()
		}
	}
}

// filesUnder returns the bytes of every file under dir: databases (the
// SQLite files of a2aflow and of the embedded Temporal, with their WAL),
// payload stores, keys.
func filesUnder(t *testing.T, dir string) string {
	t.Helper()
	var all bytes.Buffer
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err == nil {
			all.Write(raw)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all.String()
}

// replAnswersCredential runs `a2aflow repl` on a terminal against agentURL
// (alpha's router), asks for the issues of octo/widgets through beta and
// gamma, and types token when the credential is asked for. It returns what
// the terminal showed.
func replAnswersCredential(t *testing.T, agentURL, logFile, token string) string {
	t.Helper()
	master, slave := ptytest.Open(t)
	shown := &harness.SyncBuffer{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	cmd := harness.Command("repl", "--agent", agentURL, "--log-file", logFile, "--data-dir", t.TempDir())
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	onTerminal(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the REPL's terminal:\n%s", shown.String())
		}
	})
	waitShown := func(what, want string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !strings.Contains(shown.String(), want) || (cond != nil && !cond()); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the REPL's terminal shows no %s (%q) within a minute:\n%s", what, want, shown.String())
			}
		}
	}
	waitShown("prompt", "router> ", nil)
	if _, err := master.WriteString("@beta @issues List the open issues of octo/widgets\n"); err != nil {
		t.Fatal(err)
	}
	// The user types once the prompt shows, and the echo is off by then.
	waitShown("credential prompt", "[auth-required: A GitHub token that can read octo/widgets, please.]> ", func() bool { return !ptytest.Echoing(t, slave) })
	if _, err := master.WriteString(token + "\n"); err != nil {
		t.Fatal(err)
	}
	waitShown("answer", "Agent: 2 open issue(s) in octo/widgets.", nil)
	if !ptytest.Echoing(t, slave) {
		t.Error("the terminal does not echo after the credential")
	}
	if _, err := master.WriteString(":quit\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the REPL did not quit")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the REPL exited %d", code)
	}
	return shown.String()
}
