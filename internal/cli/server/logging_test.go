package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.temporal.io/sdk/log"

	"github.com/a2aflow/a2aflow/internal/engine"
)

func TestLogHandlerChoice(t *testing.T) {
	for _, tc := range []struct {
		format string
		json   bool
	}{{"text", false}, {"", false}, {"json", true}, {" JSON ", true}} {
		var out bytes.Buffer
		slog.New(newLogHandler(&out, "info", tc.format)).Info("hello", "task_id", "t-1")
		slog.New(newLogHandler(&out, "info", tc.format)).Debug("below the level")
		line := out.String()
		var rec map[string]any
		isJSON := json.Unmarshal([]byte(line), &rec) == nil
		if isJSON != tc.json || strings.Count(line, "\n") != 1 {
			t.Errorf("--log-format %q wrote %q, want one line, JSON: %v", tc.format, line, tc.json)
		}
		if tc.json && (rec["msg"] != "hello" || rec["task_id"] != "t-1" || rec["level"] != "INFO") {
			t.Errorf("--log-format %q: %v", tc.format, rec)
		}
		if !tc.json && !strings.Contains(line, `msg=hello task_id=t-1`) {
			t.Errorf("--log-format %q wrote %q", tc.format, line)
		}
	}
}

func TestLoggerOverride(t *testing.T) {
	own := slog.New(slog.DiscardHandler)
	cfg := &config{app: &App{Logger: own}, LogFormat: "json"}
	if cfg.logger() != own {
		t.Error("the program's logger is not used")
	}
}

// TestSDKLogger: the SDK's own lines at warn unless the process logs at
// debug; the lines of workflow and activity code at the process's level.
func TestSDKLogger(t *testing.T) {
	for _, level := range []string{"info", "debug"} {
		var out bytes.Buffer
		sdk := sdkLogger(slog.New(newLogHandler(&out, level, "json")))
		sdk.Info("Started Worker", "Namespace", "default")
		sdk.Warn("poll failed")
		task := log.With(sdk, slog.Group(engine.TaskLoggerKey), "component", "workflow", "task_id", "t-1")
		task.Info("trip booked")
		task.Debug("LLM call")

		got := map[string]map[string]any{}
		for line := range strings.Lines(out.String()) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: not JSON: %q", level, line)
			}
			got[rec["msg"].(string)] = rec
		}
		want := map[string]string{"poll failed": "temporal-sdk", "trip booked": "workflow"}
		if level == "debug" {
			want["Started Worker"] = "temporal-sdk"
			want["LLM call"] = "workflow"
		}
		if len(got) != len(want) {
			t.Errorf("--log-level %s logged %v, want %v", level, keys(got), want)
		}
		for msg, component := range want {
			if got[msg]["component"] != component {
				t.Errorf("--log-level %s: %q component = %v, want %s", level, msg, got[msg]["component"], component)
			}
		}
		if strings.Contains(out.String(), engine.TaskLoggerKey) {
			t.Errorf("the mark is printed: %s", out.String())
		}
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
