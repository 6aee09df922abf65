package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/workflows"
)

var updateReference = flag.Bool("update", false, "rewrite docs/config.md and docs/cli.md from the code")

// testApp is a program's app with two agents of its own.
func testApp() *App {
	handle := func(ctx workflow.Context, t *workflows.Task) error { t.Reply(t.Text()); return nil }
	return &App{Agents: []*workflows.Agent{{Name: "travel", Handle: handle}, {Name: "echo", Handle: handle}, {Name: "expenses", Handle: handle}}}
}

// clearA2AflowEnv unsets every A2AFLOW_* variable for the test, so the flags'
// defaults are the code's.
func clearA2AflowEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "A2AFLOW_") {
			t.Setenv(k, "")
		}
	}
}

func TestRunRefusesInvalidAgents(t *testing.T) {
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	for _, tc := range []struct {
		name   string
		agents []*workflows.Agent
		want   string
	}{
		{"none", nil, "no agents"},
		{"nil", []*workflows.Agent{nil}, "agent 0 is nil"},
		{"duplicate", []*workflows.Agent{{Name: "a", Handle: handle}, {Name: "a", Handle: handle}}, `"a"`},
		{"bad activity", []*workflows.Agent{{Name: "a", Handle: handle, Activities: []any{42}}}, "Activities[0] is a int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(context.Background(), &App{Agents: tc.agents}, []string{"version"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	root := NewRoot(&App{Agents: testApp().Agents, Version: "po 1.2.3"})
	root.SetArgs([]string{"version"})
	root.SetOut(&out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "po 1.2.3") || !strings.Contains(got, " go1.") {
		t.Errorf("version printed %q, want the app's version and Go's", got)
	}
}

func TestLogFormatRefused(t *testing.T) {
	for _, tc := range []struct {
		bad  string
		args []string
	}{
		{"xml", []string{"worker", "--log-format", "xml"}},
		{"yaml", []string{"serve", "--log-format", "yaml"}},
		{"logfmt", []string{"replay", "--log-format", "logfmt", "x.history.json"}},
		{"csv", []string{"deployments", "list", "--log-format", "csv"}},
	} {
		root := NewRoot(testApp())
		root.SetArgs(tc.args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `"`+tc.bad+`"`) || !strings.Contains(err.Error(), "want text or json") {
			t.Errorf("%v: %v, want the bad value refused", tc.args, err)
		}
	}
	// From the environment too.
	t.Setenv("A2AFLOW_LOG_FORMAT", "xml")
	root := NewRoot(testApp())
	root.SetArgs([]string{"api"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `"xml"`) || !strings.Contains(err.Error(), "A2AFLOW_LOG_FORMAT") {
		t.Errorf("A2AFLOW_LOG_FORMAT=xml: %v, want it refused", err)
	}
}

func TestLogFlags(t *testing.T) {
	root := NewRoot(testApp())
	for _, name := range []string{"serve", "temporal", "api", "worker", "replay", "deployments"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"log-level", "log-format"} {
			if cmd.Flags().Lookup(flag) == nil && cmd.PersistentFlags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", name, flag)
			}
		}
		f := cmd.Flags().Lookup("access-log")
		if serves := name == "serve" || name == "api"; serves != (f != nil) {
			t.Errorf("%s: --access-log %v", name, f != nil)
		} else if serves && f.DefValue != "true" {
			t.Errorf("%s: --access-log defaults to %s, want true", name, f.DefValue)
		}
	}
}

// A negative --workflow-cache-size is refused before serve starts Temporal
// or the worker dials it, from the flag and from the environment.
func TestWorkflowCacheSizeRefused(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--data-dir", dir, "--http-addr", "127.0.0.1:0", "--workflow-cache-size", "-1"},
		{"worker", "--data-dir", dir, "--insecure-store-secrets", "--workflow-cache-size", "-5"},
	} {
		root := NewRoot(testApp())
		root.SetArgs(args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--workflow-cache-size") {
			t.Errorf("%v: %v, want the negative cache size refused", args, err)
		}
	}
	t.Setenv("A2AFLOW_WORKFLOW_CACHE_SIZE", "-2")
	root := NewRoot(testApp())
	root.SetArgs([]string{"worker", "--data-dir", dir, "--insecure-store-secrets"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--workflow-cache-size -2") {
		t.Errorf("A2AFLOW_WORKFLOW_CACHE_SIZE=-2: %v, want it refused", err)
	}
}

func TestConfigReference(t *testing.T) {
	clearA2AflowEnv(t)
	got, err := configReference(testApp())
	if err != nil {
		t.Fatal(err)
	}
	if checkReference(t, "config.md", got, "TestConfigReference") {
		return
	}
	for _, key := range []string{"wait-timeout", "idle-timeout", "config", "ui-oidc-issuer", "system-prompt", "remote-agents"} {
		if !strings.Contains(got, "| `"+key+"` |") {
			t.Errorf("reference has no row for %s", key)
		}
	}
}
