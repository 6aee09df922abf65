package cmdutil

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestBindNamesEnvOnce: a bound flag defaults to its variable, names it in
// its usage and records it.
func TestBindNamesEnvOnce(t *testing.T) {
	t.Setenv("A2AFLOW_TEST_QUEUE", "q-env")
	t.Setenv("A2AFLOW_TEST_WAIT", "12s")
	t.Setenv("A2AFLOW_TEST_BAD_WAIT", "soon")
	t.Setenv("A2AFLOW_TEST_HOSTS", " a, b ,,c")
	t.Setenv("A2AFLOW_TEST_IDLE", "travel=72h, expenses=1h")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	b := Bind(fs)
	var queue, unset string
	var wait, badWait time.Duration
	var hosts []string
	var idle map[string]string
	b.String(&queue, "task-queue", "A2AFLOW_TEST_QUEUE", "def", "the queue")
	b.String(&unset, "unset", "A2AFLOW_TEST_UNSET", "def", "unset", Else("TEMPORAL_X"))
	b.Duration(&wait, "wait", "A2AFLOW_TEST_WAIT", time.Second, "wait")
	b.Duration(&badWait, "bad-wait", "A2AFLOW_TEST_BAD_WAIT", time.Second, "wait")
	b.StringSlice(&hosts, "hosts", "A2AFLOW_TEST_HOSTS", nil, "hosts")
	b.StringToString(&idle, "idle", "A2AFLOW_TEST_IDLE", "idle", Example(`"a=1h"`))
	if queue != "q-env" || unset != "def" || wait != 12*time.Second || badWait != time.Second ||
		strings.Join(hosts, " ") != "a b c" || idle["travel"] != "72h" || idle["expenses"] != "1h" {
		t.Errorf("defaults: %q %q %s %s %v %v", queue, unset, wait, badWait, hosts, idle)
	}
	for name, want := range map[string]string{
		"task-queue": "the queue (A2AFLOW_TEST_QUEUE)",
		"unset":      "unset (A2AFLOW_TEST_UNSET; else TEMPORAL_X)",
		"idle":       `idle (A2AFLOW_TEST_IDLE="a=1h")`,
	} {
		if got := fs.Lookup(name).Usage; got != want {
			t.Errorf("--%s usage %q, want %q", name, got, want)
		}
	}
	if got := Env(fs.Lookup("task-queue")); got != "A2AFLOW_TEST_QUEUE" {
		t.Errorf("Env = %q", got)
	}
	// A list given on the command line replaces the variable's.
	if err := fs.Parse([]string{"--hosts", "x"}); err != nil || strings.Join(hosts, " ") != "x" {
		t.Errorf("--hosts x: %v %v", hosts, err)
	}
}

// TestFormerly: a renamed setting's old flag and variable still work, each
// saying so once, and the new names win.
func TestFormerly(t *testing.T) {
	newCmd := func() (*cobra.Command, *string, *Secret, *bool) {
		var key Secret
		var name string
		var insecure bool
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		b := Bind(cmd.Flags())
		b.Secret(&key, "secrets-key", "A2AFLOW_TEST_SECRETS_KEY", "the key", Formerly("push-key", "A2AFLOW_TEST_PUSH_KEY"))
		b.String(&name, "api-key-name", "A2AFLOW_TEST_NAME", "", "name", Formerly("api-key-header", "A2AFLOW_TEST_HEADER"))
		b.Bool(&insecure, "insecure-store-secrets", "A2AFLOW_TEST_INSECURE", false, "insecure", Formerly("insecure-store-push-secrets", ""))
		cmd.PersistentPreRun = func(cmd *cobra.Command, _ []string) { WarnDeprecatedEnv(cmd, cmd.ErrOrStderr()) }
		return cmd, &name, &key, &insecure
	}
	run := func(args ...string) (string, string, string, bool) {
		t.Helper()
		cmd, name, key, insecure := newCmd()
		var errOut bytes.Buffer
		cmd.SetErr(&errOut)
		cmd.SetOut(&errOut)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if cmd.Flags().Lookup("push-key") == nil || !cmd.Flags().Lookup("push-key").Hidden {
			t.Errorf("--push-key is not a hidden alias")
		}
		return errOut.String(), *name, key.Get(), *insecure
	}

	// The old flags set the new ones, with pflag's one-line notice.
	out, name, key, insecure := run("--push-key", "k1", "--api-key-header", "X-Key", "--insecure-store-push-secrets")
	if key != "k1" || name != "X-Key" || !insecure {
		t.Errorf("old flags: key %q name %q insecure %t", key, name, insecure)
	}
	for _, want := range []string{"Flag --push-key has been deprecated, use --secrets-key instead",
		"Flag --api-key-header has been deprecated, use --api-key-name instead",
		"Flag --insecure-store-push-secrets has been deprecated, use --insecure-store-secrets instead"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// The old variables give the value, with a warning naming the new one.
	t.Setenv("A2AFLOW_TEST_PUSH_KEY", "k-old")
	t.Setenv("A2AFLOW_TEST_HEADER", "X-Old")
	out, name, key, _ = run()
	if key != "k-old" || name != "X-Old" {
		t.Errorf("old variables: key %q name %q", key, name)
	}
	for _, want := range []string{"A2AFLOW_TEST_PUSH_KEY is deprecated, use A2AFLOW_TEST_SECRETS_KEY",
		"A2AFLOW_TEST_HEADER is deprecated, use A2AFLOW_TEST_NAME"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n") != 2 {
		t.Errorf("want one line per variable:\n%s", out)
	}

	// The new names win over the old ones.
	t.Setenv("A2AFLOW_TEST_SECRETS_KEY", "k-new")
	out, _, key, _ = run()
	if key != "k-new" || !strings.Contains(out, "A2AFLOW_TEST_PUSH_KEY is deprecated and ignored: A2AFLOW_TEST_SECRETS_KEY is set") {
		t.Errorf("both variables: key %q, output:\n%s", key, out)
	}
	if _, _, key, _ = run("--secrets-key", "k-flag"); key != "k-flag" {
		t.Errorf("flag over variables: key %q", key)
	}
}

func TestLocalServerURL(t *testing.T) {
	for addr, want := range map[string]string{
		"":               "http://localhost:8080",
		":9000":          "http://localhost:9000",
		"0.0.0.0:9001":   "http://localhost:9001",
		"127.0.0.1:9002": "http://127.0.0.1:9002",
		"[::]:9003":      "http://localhost:9003",
		"nonsense":       "http://localhost:8080",
	} {
		t.Setenv(EnvHTTPAddr, addr)
		if got := LocalServerURL(); got != want {
			t.Errorf("%s=%q: %s, want %s", EnvHTTPAddr, addr, got, want)
		}
	}
}
