package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestRequestLogHandler checks that the lines logged with a request's
// context carry its agent, task and context, once.
func TestRequestLogHandler(t *testing.T) {
	var logs bytes.Buffer
	logger := RequestLogger(slog.New(slog.NewJSONHandler(&logs, nil)))
	ctx := context.WithValue(context.Background(), requestLogKey{}, &RequestLog{agent: "echo", taskID: "task-1", contextID: "ctx-1"})

	logger.InfoContext(ctx, "with the request")
	logger.InfoContext(ctx, "own task", "task_id", "task-2")
	logger.With("agent", "other").InfoContext(ctx, "own agent")
	logger.Info("without the request")

	var lines []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		lines = append(lines, rec)
	}
	want := []map[string]any{
		{"agent": "echo", "task_id": "task-1", "context_id": "ctx-1"},
		{"agent": "echo", "task_id": "task-2", "context_id": "ctx-1"},
		{"agent": "other", "task_id": "task-1", "context_id": "ctx-1"},
		{"agent": nil, "task_id": nil, "context_id": nil},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), logs.String())
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d (%s): %s = %v, want %v", i, lines[i]["msg"], k, lines[i][k], v)
			}
		}
	}
	for line := range strings.Lines(logs.String()) {
		if strings.Count(line, `"agent"`) > 1 || strings.Count(line, `"task_id"`) > 1 {
			t.Errorf("a key twice: %s", line)
		}
	}
}
