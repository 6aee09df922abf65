package temporalserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The tests share one test binary on purpose: linking the Temporal server
// makes every test binary of this package large and slow to build.

// testLogger sends log output to t.Log, so it shows only for failing or
// verbose tests.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// startServer starts a server and stops it at the end of the test, logging
// how long the start took.
func startServer(t *testing.T, what string, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("%s: Start: %v", what, err)
	}
	t.Logf("%s: started in %v (frontend %s, UI %q)", what, time.Since(begin).Round(time.Millisecond), s.FrontendAddr(), s.UIURL())
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// dial returns an SDK client of s.
func dial(t *testing.T, s *Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  s.FrontendAddr(),
		Namespace: s.Namespace(),
		Logger:    sdklog.NewStructuredLogger(testLogger(t)),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", s.FrontendAddr(), err)
	}
	t.Cleanup(c.Close)
	return c
}

func greetWorkflow(_ workflow.Context, name string) (string, error) {
	return "hello " + name, nil
}

// TestServerPersistsAcrossRestarts runs a workflow, checks the UI, restarts
// the server on the same data folder and finds the finished workflow again.
func TestServerPersistsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	opts := Options{
		DataDir:      dir,
		FrontendAddr: "127.0.0.1:0",
		UIAddr:       "127.0.0.1:0",
		Logger:       testLogger(t),
	}
	s := startServer(t, "cold start", opts)
	if got, want := s.DBPath(), filepath.Join(dir, dbFileName); got != want {
		t.Errorf("DBPath() = %q, want %q", got, want)
	}
	if s.Namespace() != defaultNamespace {
		t.Errorf("Namespace() = %q, want %q", s.Namespace(), defaultNamespace)
	}
	if strings.HasSuffix(s.FrontendAddr(), ":0") || !strings.HasPrefix(s.UIURL(), "http://127.0.0.1:") || strings.HasSuffix(s.UIURL(), ":0") {
		t.Errorf("FrontendAddr() = %q, UIURL() = %q: want real ports", s.FrontendAddr(), s.UIURL())
	}

	c := dial(t, s)
	const taskQueue = "test"
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	begin := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet", TaskQueue: taskQueue}, greetWorkflow, "a2aflow")
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	t.Logf("workflow ran in %v", time.Since(begin).Round(time.Millisecond))
	if out != "hello a2aflow" {
		t.Errorf("workflow result = %q, want %q", out, "hello a2aflow")
	}
	w.Stop()
	// journal_mode=wal must be in effect: SQLite keeps a -wal file next to
	// the database while it is open in WAL mode.
	if _, err := os.Stat(s.DBPath() + "-wal"); err != nil {
		t.Errorf("no WAL file next to the database: %v", err)
	}

	resp, err := http.Get(s.UIURL() + "/")
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/: status %d, want 200", s.UIURL(), resp.StatusCode)
	}

	// A second server on the same data folder must be refused before it
	// touches the database.
	if s2, err := Start(ctx, Options{DataDir: dir, FrontendAddr: "127.0.0.1:0", DisableUI: true}); err == nil {
		_ = s2.Stop()
		t.Errorf("second Start on the same data dir succeeded, want an error")
	} else if !strings.Contains(err.Error(), "used by another Temporal server") {
		t.Errorf("second Start on the same data dir: %v, want a lock error", err)
	}

	c.Close()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	s = startServer(t, "restart", opts)
	c = dial(t, s)
	desc, err := c.DescribeWorkflowExecution(ctx, "greet", run.GetRunID())
	if err != nil {
		t.Fatalf("describe workflow after restart: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("workflow status after restart = %v, want completed", st)
	}
}

// TestVisibilityFile: a new data dir keeps the workflow list in a file of
// its own; one whose temporal.db predates that file keeps it in temporal.db,
// also after a restart, and lists its workflows, old and new, either way.
func TestVisibilityFile(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "new", true: "legacy"}[legacy], func(t *testing.T) {
			dir := t.TempDir()
			if legacy {
				// A data dir of an earlier version: temporal.db alone.
				if _, err := ensureSchema(filepath.Join(dir, dbFileName)); err != nil {
					t.Fatal(err)
				}
			}
			opts := Options{DataDir: dir, FrontendAddr: "127.0.0.1:0", DisableUI: true, Logger: testLogger(t)}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i, what := range []string{"first start", "restart"} {
				s := startServer(t, what, opts)
				want := filepath.Join(dir, visFileName)
				if legacy {
					want = s.DBPath()
				}
				if got := s.VisibilityDBPath(); got != want {
					t.Errorf("%s: VisibilityDBPath() = %q, want %q", what, got, want)
				}
				if _, err := os.Stat(filepath.Join(dir, visFileName)); legacy != errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: stat %s: %v (legacy %v)", what, visFileName, err, legacy)
				}
				c := dial(t, s)
				id := fmt.Sprintf("listed-%d", i)
				if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "nobody-polls"}, "NoSuchWorkflow"); err != nil {
					t.Fatalf("%s: start: %v", what, err)
				}
				// Every workflow started so far, this start's and the
				// earlier one's, is listed (visibility is eventually
				// consistent: wait for it).
				for deadline := time.Now().Add(30 * time.Second); ; {
					resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.Namespace()})
					if err != nil {
						t.Fatalf("%s: list: %v", what, err)
					}
					if len(resp.GetExecutions()) == i+1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: %d workflows listed, want %d", what, len(resp.GetExecutions()), i+1)
					}
					time.Sleep(100 * time.Millisecond)
				}
				c.Close()
				if err := s.Stop(); err != nil {
					t.Fatalf("%s: stop: %v", what, err)
				}
			}
		})
	}
}

// TestSearchAttributesAddedOnRestart checks that a search attribute added to
// Options later is registered in a namespace created without it.
func TestSearchAttributesAddedOnRestart(t *testing.T) {
	opts := Options{
		DataDir:          t.TempDir(),
		FrontendAddr:     "127.0.0.1:0",
		DisableUI:        true,
		Logger:           testLogger(t),
		SearchAttributes: map[string]enums.IndexedValueType{"A2AFirst": enums.INDEXED_VALUE_TYPE_KEYWORD},
	}
	s := startServer(t, "without A2ASecond", opts)
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	opts.SearchAttributes = map[string]enums.IndexedValueType{
		"A2AFirst":  enums.INDEXED_VALUE_TYPE_KEYWORD,
		"A2ASecond": enums.INDEXED_VALUE_TYPE_INT,
	}
	s = startServer(t, "with A2ASecond", opts)
	c := dial(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.Namespace()})
	if err != nil {
		t.Fatalf("list search attributes: %v", err)
	}
	for name, want := range opts.SearchAttributes {
		if got, ok := list.GetCustomAttributes()[name]; !ok || got != want {
			t.Errorf("search attribute %s: got %v (listed %v), want %v", name, got, ok, want)
		}
	}

	// The new attribute must be usable right after Start returns.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "with-search-attribute",
		TaskQueue: "nobody-polls",
		TypedSearchAttributes: sdktemporal.NewSearchAttributes(
			sdktemporal.NewSearchAttributeKeyInt64("A2ASecond").ValueSet(7)),
	}, "NoSuchWorkflow")
	if err != nil {
		t.Fatalf("start workflow with the new search attribute: %v", err)
	}
	if err := c.TerminateWorkflow(ctx, run.GetID(), run.GetRunID(), "test done"); err != nil {
		t.Errorf("terminate: %v", err)
	}
}

// TestPortInUse checks that a taken port fails Start with ErrAddrInUse,
// naming the listener, instead of ending the process.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	dir := t.TempDir()

	cases := []struct {
		name, frontend, ui, wantMsg string
	}{
		{"frontend", taken, "127.0.0.1:0", "temporal frontend " + taken + ": address already in use"},
		{"ui", "127.0.0.1:0", taken, "temporal UI " + taken + ": address already in use"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(context.Background(), Options{DataDir: dir, FrontendAddr: tc.frontend, UIAddr: tc.ui, Logger: testLogger(t)})
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded on a taken port")
			}
			if !errors.Is(err, ErrAddrInUse) {
				t.Errorf("Start error %v does not wrap ErrAddrInUse", err)
			}
			if err.Error() != tc.wantMsg {
				t.Errorf("Start error = %q, want %q", err, tc.wantMsg)
			}
		})
	}

	// A failed Start must release the data folder.
	lock, err := lockDataDir(filepath.Join(dir, lockFileName))
	if err != nil {
		t.Fatalf("data dir still locked after failed Start: %v", err)
	}
	lock.unlock()
}
