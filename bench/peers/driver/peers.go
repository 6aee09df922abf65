package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
)

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func newPeer(name, work, llmURL string) (peer, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	env := []string{"OPENAI_BASE_URL=" + llmURL, "OPENAI_API_KEY=fake-key", "PYTHONUNBUFFERED=1", "PYTHONWARNINGS=ignore"}
	dir, err := filepath.Abs(*flagDir)
	if err != nil {
		return nil, err
	}
	python := func(venv string) (string, error) {
		py := filepath.Join(dir, ".venv-"+venv, "bin", "python")
		if _, err := os.Stat(py); err != nil {
			return "", fmt.Errorf("no virtual environment %s (make bench-peers makes it)", filepath.Dir(filepath.Dir(py)))
		}
		return py, nil
	}
	switch name {
	case "a2aflow":
		bin, err := filepath.Abs(*flagBin)
		if err != nil {
			return nil, err
		}
		return &a2aflowPeer{bin: bin, work: work, env: env}, nil
	case "a2aflow-cluster":
		bin, err := filepath.Abs(*flagBin)
		if err != nil {
			return nil, err
		}
		return newClusterPeer(bin, work, filepath.Join(dir, "..", ".."), env), nil
	case "openai-agents-temporal":
		py, err := python("openai_temporal")
		if err != nil {
			return nil, err
		}
		temporal, err := filepath.Abs(*flagTemporal)
		if err != nil {
			return nil, err
		}
		return &temporalPeer{py: py, dir: filepath.Join(dir, "openai_temporal"), temporal: temporal, work: work, env: env}, nil
	case "langgraph":
		py, err := python("langgraph")
		if err != nil {
			return nil, err
		}
		return &langgraphPeer{py: py, dir: filepath.Join(dir, "langgraph"), work: work, env: env, port: freePort()}, nil
	case "google-adk":
		py, err := python("adk")
		if err != nil {
			return nil, err
		}
		return &adkPeer{py: py, dir: filepath.Join(dir, "adk"), work: work, env: env,
			ports: map[string]int{"booker": freePort(), "booker-tools": freePort()}, ctx: map[string]string{}}, nil
	}
	return nil, fmt.Errorf("unknown peer %q", name)
}

// pipVersions is "name version" of the given packages in a venv's python.
func pipVersions(py string, pkgs ...string) string {
	out, err := exec.Command(py, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check").Output()
	if err != nil {
		return "?"
	}
	var vs []string
	for _, line := range strings.Split(string(out), "\n") {
		name, version, ok := strings.Cut(strings.TrimSpace(line), "==")
		for _, p := range pkgs {
			if ok && strings.EqualFold(strings.ReplaceAll(name, "_", "-"), p) {
				vs = append(vs, p+" "+version)
			}
		}
	}
	return strings.Join(vs, ", ")
}

func postJSON(ctx context.Context, url string, headers map[string]string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, out)
	}
	return out, nil
}

// a2aSend is a blocking A2A 1.0 JSON-RPC SendMessage; it returns the whole
// response (the driver looks for the answer's text in it) and the task's
// and context's IDs.
func a2aSend(ctx context.Context, url, taskID, contextID, text string) (body []byte, task, contextOut string, err error) {
	msg := map[string]any{"messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	body, err = postJSON(ctx, url, map[string]string{"A2A-Version": "1.0"},
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": msg}})
	if err != nil {
		return nil, "", "", err
	}
	var resp struct {
		Error  *struct{ Message string } `json:"error"`
		Result struct {
			Task *struct {
				ID        string `json:"id"`
				ContextID string `json:"contextId"`
			} `json:"task"`
			Message *struct {
				ContextID string `json:"contextId"`
			} `json:"message"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, "", "", fmt.Errorf("%w: %.300s", err, body)
	}
	if resp.Error != nil {
		return nil, "", "", fmt.Errorf("JSON-RPC error: %s", resp.Error.Message)
	}
	switch {
	case resp.Result.Task != nil:
		return body, resp.Result.Task.ID, resp.Result.Task.ContextID, nil
	case resp.Result.Message != nil:
		return body, "", resp.Result.Message.ContextID, nil
	}
	return nil, "", "", fmt.Errorf("neither a task nor a message: %.300s", body)
}

// ---- a2aflow: `serve` with its embedded Temporal, the agent bench/peers/a2aflow.

type a2aflowPeer struct {
	bin, work string
	env       []string
	p         *proc
	url       string
	mu        sync.Mutex
	tasks     map[string]string
}

func (a *a2aflowPeer) name() string { return "a2aflow" }

func (a *a2aflowPeer) versions() string {
	out, _ := exec.Command(a.bin, "version").Output()
	v := strings.TrimSpace(strings.Split(string(out), "\n")[0])
	return v + " (serve: embedded Temporal, SQLite)"
}

func (a *a2aflowPeer) start(ctx context.Context) error {
	if a.tasks == nil {
		a.tasks = map[string]string{}
	}
	httpPort := freePort()
	args := []string{"serve",
		"--data-dir", filepath.Join(a.work, "data"), "--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--temporal-addr", fmt.Sprintf("127.0.0.1:%d", freePort()), "--ui-addr", "", "--log-level", "warn"}
	args = append(args, strings.Fields(*flagServe)...)
	p, err := startProc(a.work, filepath.Join(a.work, "serve.log"), a.env, a.bin, args...)
	if err != nil {
		return err
	}
	a.p, a.url = p, fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	return waitHTTP(p, a.url+"/readyz")
}

func (a *a2aflowPeer) noop(ctx context.Context) error {
	return noopPOST(ctx, a.url+"/agents/booker", noopJSONRPC)
}

func (a *a2aflowPeer) kill9()      { a.p.kill9() }
func (a *a2aflowPeer) stop()       { a.p.stop() }
func (a *a2aflowPeer) pids() []int { return []int{a.p.cmd.Process.Pid} }

func (a *a2aflowPeer) turn(ctx context.Context, variant, id string, first bool, text string) (string, error) {
	a.mu.Lock()
	task := a.tasks[id]
	a.mu.Unlock()
	if first {
		task = ""
	}
	body, taskID, _, err := a2aSend(ctx, a.url+"/agents/"+variant, task, "", text)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	a.tasks[id] = taskID
	a.mu.Unlock()
	return string(body), nil
}

// ---- the OpenAI Agents SDK on Temporal: its worker (bench/peers/openai_temporal)
// against `a2aflow temporal` as the Temporal dev server; the driver is the
// Temporal client (update-with-start, then an update per turn).

type temporalPeer struct {
	py, dir, temporal, work string
	env                     []string
	server, worker          *proc
	c                       client.Client
}

func (t *temporalPeer) name() string { return "openai-agents-temporal" }

func (t *temporalPeer) versions() string {
	return pipVersions(t.py, "openai-agents", "temporalio", "temporalio-openai-agents") + "; Temporal: `a2aflow temporal` (SQLite)"
}

func (t *temporalPeer) start(ctx context.Context) error {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort())
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort())
	s, err := startProc(t.work, filepath.Join(t.work, "temporal.log"), nil, t.temporal, "temporal",
		"--data-dir", filepath.Join(t.work, "data"), "--temporal-addr", addr, "--ui-addr", "", "--metrics-addr", metrics, "--log-level", "warn")
	if err != nil {
		return err
	}
	t.server = s
	if err := waitHTTP(s, "http://"+metrics+"/metrics"); err != nil {
		return err
	}
	var c client.Client
	for i := 0; ; i++ {
		c, err = client.Dial(client.Options{HostPort: addr, Logger: quietLogger{}})
		if err == nil {
			break
		}
		if i > 100 {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	if t.c != nil {
		t.c.Close()
	}
	t.c = c
	w, err := startProc(t.dir, filepath.Join(t.work, "worker.log"), t.env, t.py, "worker.py", addr)
	if err != nil {
		return err
	}
	t.worker = w
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(w.tailAll(), "ready") {
		if w.gone() || time.Now().After(deadline) {
			return fmt.Errorf("the worker did not start: %s", w.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// noop is the Temporal client's health check, a gRPC round trip to the
// frontend (the turns are updates over the same connection).
func (t *temporalPeer) noop(ctx context.Context) error {
	_, err := t.c.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}

func (t *temporalPeer) kill9()      { t.worker.kill9(); t.server.kill9() }
func (t *temporalPeer) stop()       { t.worker.stop(); t.server.stop() }
func (t *temporalPeer) pids() []int { return []int{t.server.cmd.Process.Pid, t.worker.cmd.Process.Pid} }

func (t *temporalPeer) turn(ctx context.Context, variant, id string, first bool, text string) (string, error) {
	var answer string
	if first {
		start := t.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: "peers",
			WorkflowIDConflictPolicy: 1 /* fail */}, "Booker", variant == "booker-tools")
		h, err := t.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: "send", Args: []any{text}, WaitForStage: client.WorkflowUpdateStageCompleted}})
		if err != nil {
			return "", err
		}
		return answer, h.Get(ctx, &answer)
	}
	h, err := t.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: "send", Args: []any{text}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return "", err
	}
	return answer, h.Get(ctx, &answer)
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// ---- LangGraph with the SQLite checkpointer behind a small HTTP server
// (bench/peers/langgraph).

type langgraphPeer struct {
	py, dir, work string
	env           []string
	port          int
	p             *proc
}

func (l *langgraphPeer) name() string { return "langgraph" }

func (l *langgraphPeer) versions() string {
	return pipVersions(l.py, "langgraph", "langgraph-checkpoint-sqlite", "langchain-openai") + " (SqliteSaver behind a stdlib HTTP server)"
}

func (l *langgraphPeer) start(ctx context.Context) error {
	p, err := startProc(l.dir, filepath.Join(l.work, "server.log"), l.env, l.py, "server.py", fmt.Sprint(l.port), filepath.Join(l.work, "checkpoints.db"))
	if err != nil {
		return err
	}
	l.p = p
	return waitHTTP(p, fmt.Sprintf("http://127.0.0.1:%d/", l.port))
}

// noop posts to a path the server does not serve: it answers 404 through
// the same reply the runs use.
func (l *langgraphPeer) noop(ctx context.Context) error {
	return noopPOST(ctx, fmt.Sprintf("http://127.0.0.1:%d/noop", l.port), "{}")
}

func (l *langgraphPeer) kill9()      { l.p.kill9() }
func (l *langgraphPeer) stop()       { l.p.stop() }
func (l *langgraphPeer) pids() []int { return []int{l.p.cmd.Process.Pid} }

func (l *langgraphPeer) turn(ctx context.Context, variant, id string, first bool, text string) (string, error) {
	body, err := postJSON(ctx, fmt.Sprintf("http://127.0.0.1:%d/threads/%s/runs", l.port, id), nil, map[string]any{"agent": variant, "input": text})
	if err != nil {
		return "", err
	}
	var out struct{ Answer string }
	if err := json.Unmarshal(body, &out); err != nil {
		return "", err
	}
	return out.Answer, nil
}

// ---- Google ADK's A2A server (bench/peers/adk), one process per variant.

type adkPeer struct {
	py, dir, work string
	env           []string
	ports         map[string]int
	procs         []*proc
	mu            sync.Mutex
	ctx           map[string]string
}

func (a *adkPeer) name() string { return "google-adk" }

func (a *adkPeer) versions() string {
	return pipVersions(a.py, "google-adk", "a2a-sdk", "litellm") + " (to_a2a; sessions and tasks in SQLite)"
}

func (a *adkPeer) start(ctx context.Context) error {
	a.procs = nil
	for _, variant := range []string{"booker", "booker-tools"} {
		p, err := startProc(a.dir, filepath.Join(a.work, variant+".log"), a.env, a.py, "server.py",
			fmt.Sprint(a.ports[variant]), variant, filepath.Join(a.work, variant+".db"))
		if err != nil {
			return err
		}
		a.procs = append(a.procs, p)
		if err := waitHTTP(p, fmt.Sprintf("http://127.0.0.1:%d/.well-known/agent-card.json", a.ports[variant])); err != nil {
			return err
		}
	}
	return nil
}

func (a *adkPeer) noop(ctx context.Context) error {
	return noopPOST(ctx, fmt.Sprintf("http://127.0.0.1:%d/", a.ports["booker"]), noopJSONRPC)
}

func (a *adkPeer) kill9() {
	for _, p := range a.procs {
		p.kill9()
	}
}

func (a *adkPeer) stop() {
	for _, p := range a.procs {
		p.stop()
	}
}

func (a *adkPeer) pids() []int {
	var out []int
	for _, p := range a.procs {
		out = append(out, p.cmd.Process.Pid)
	}
	return out
}

func (a *adkPeer) turn(ctx context.Context, variant, id string, first bool, text string) (string, error) {
	a.mu.Lock()
	contextID := a.ctx[id]
	a.mu.Unlock()
	if first {
		contextID = ""
	}
	body, _, contextOut, err := a2aSend(ctx, fmt.Sprintf("http://127.0.0.1:%d/", a.ports[variant]), "", contextID, text)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	a.ctx[id] = contextOut
	a.mu.Unlock()
	return string(body), nil
}
