package server

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// clearA2AflowEnv unsets every A2AFLOW_* variable for the test, so the flags'
// defaults are the code's.
func clearA2AflowEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "A2AFLOW_") {
			t.Setenv(k, "")
		}
	}
}

// writeConfig writes a config file for the test and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadCommand builds the process command name as it runs with args (env
// is read now), loads the config file, and returns its config.
func loadCommand(t *testing.T, name string, args ...string) (*cobra.Command, *config, error) {
	t.Helper()
	for _, cmd := range processCommands(testApp()) {
		if cmd.Name() != name {
			continue
		}
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		v, _ := processConfigs.Load(cmd)
		cfg := v.(*config)
		return cmd, cfg, cfg.loadConfigFile(cmd)
	}
	t.Fatalf("no command %s", name)
	return nil, nil, nil
}

func TestConfigPrecedence(t *testing.T) {
	file := `wait-timeout = "11s"
outbound-allow-hosts = ["loopback", "10.0.0.0/8"]
[ui]
oidc-issuer = "https://issuer.example"
[idle-timeout]
travel = "72h"
`
	for _, tc := range []struct {
		name     string
		file     bool
		env      string
		flag     string
		want     time.Duration
		wantFrom string
	}{
		{"default", false, "", "", 30 * time.Second, sourceDefault},
		{"file", true, "", "", 11 * time.Second, sourceFile},
		{"env over default", false, "12s", "", 12 * time.Second, sourceEnv},
		{"env over file", true, "12s", "", 12 * time.Second, sourceEnv},
		{"flag over env and file", true, "12s", "13s", 13 * time.Second, sourceFlag},
		{"flag over file", true, "", "13s", 13 * time.Second, sourceFlag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearA2AflowEnv(t)
			if tc.env != "" {
				t.Setenv("A2AFLOW_WAIT_TIMEOUT", tc.env)
			}
			var args []string
			if tc.file {
				args = append(args, "--config", writeConfig(t, file))
			}
			if tc.flag != "" {
				args = append(args, "--wait-timeout", tc.flag)
			}
			_, cfg, err := loadCommand(t, "serve", args...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.WaitTimeout != tc.want || cfg.sources["wait-timeout"] != tc.wantFrom {
				t.Errorf("wait-timeout = %s from %s, want %s from %s", cfg.WaitTimeout, cfg.sources["wait-timeout"], tc.want, tc.wantFrom)
			}
			if tc.file {
				if cfg.UI.OIDCIssuer != "https://issuer.example" || cfg.sources["ui-oidc-issuer"] != sourceFile {
					t.Errorf("[ui] oidc-issuer: got %q from %s", cfg.UI.OIDCIssuer, cfg.sources["ui-oidc-issuer"])
				}
				if strings.Join(cfg.OutboundAllowHosts, " ") != "loopback 10.0.0.0/8" {
					t.Errorf("outbound-allow-hosts = %v", cfg.OutboundAllowHosts)
				}
				if cfg.IdleTimeouts["travel"] != "72h" || len(cfg.IdleTimeouts) != 1 {
					t.Errorf("idle-timeout = %v", cfg.IdleTimeouts)
				}
			}
		})
	}
	// A2AFLOW_CONFIG names the file when --config does not.
	clearA2AflowEnv(t)
	t.Setenv("A2AFLOW_CONFIG", writeConfig(t, file))
	_, cfg, err := loadCommand(t, "worker")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.sources["config"] != sourceEnv || cfg.IdleTimeouts["travel"] != "72h" {
		t.Errorf("A2AFLOW_CONFIG: config from %s, idle-timeout %v", cfg.sources["config"], cfg.IdleTimeouts)
	}
}

func TestConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        [2]string
		want       []string
	}{
		{"typo", "wait-timout = \"5s\"\n", [2]string{}, []string{`unknown key "wait-timout"`, `did you mean "wait-timeout"?`}},
		{"nested typo", "[ui]\noidc-isuer = \"x\"\n", [2]string{}, []string{`unknown key "ui-oidc-isuer"`, `did you mean "ui-oidc-issuer"?`}},
		{"bad duration", "wait-timeout = \"soon\"\n", [2]string{}, []string{`key "wait-timeout": bad value "soon"`, "invalid duration"}},
		{"bad duration overridden by env", "wait-timeout = \"soon\"\n", [2]string{"A2AFLOW_WAIT_TIMEOUT", "5s"}, []string{`key "wait-timeout": bad value "soon"`}},
		{"bad int", "default-history-length = \"many\"\n", [2]string{}, []string{`key "default-history-length": bad value "many"`}},
		{"list for one value", "http-addr = [\"a\", \"b\"]\n", [2]string{}, []string{`key "http-addr"`, "a list, where one value is wanted"}},
		{"bad log format", "log-format = \"xml\"\n", [2]string{}, []string{"xml"}},
		{"not TOML", "wait-timeout = \n", [2]string{}, []string{"a2aflow.toml:1:"}},
		{"agent typo", "[[agents]]\nname = \"travel\"\nidle-timout = \"1h\"\n", [2]string{}, []string{`agents[0]: unknown key "idle-timout"`, `did you mean "idle-timeout"?`}},
		{"agent bad duration", "[agents.travel]\nidle-timeout = \"a while\"\n", [2]string{}, []string{`agents.travel: key "idle-timeout": bad value "a while"`}},
		{"agent unknown tool", "[[agents]]\nname = \"h\"\nsystem-prompt = \"x\"\ntools = [\"calculater\"]\n", [2]string{}, []string{`unknown tool "calculater"`}},
		{"agent LLM key without prompt", "[[agents]]\nname = \"travel\"\ntools = [\"clock\"]\n", [2]string{}, []string{`key "tools" belongs to an LLM agent`}},
		{"bad env", "", [2]string{"A2AFLOW_WAIT_TIMEOUT", "soon"}, []string{`environment variable A2AFLOW_WAIT_TIMEOUT="soon"`, "duration"}},
		{"bad env int", "", [2]string{"A2AFLOW_RATE_BURST", "ten"}, []string{`A2AFLOW_RATE_BURST="ten"`, "whole number"}},
		{"missing file", "-", [2]string{}, []string{"no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearA2AflowEnv(t)
			if tc.env[0] != "" {
				t.Setenv(tc.env[0], tc.env[1])
			}
			var args []string
			switch tc.file {
			case "":
			case "-":
				args = []string{"--config", filepath.Join(t.TempDir(), "missing.toml")}
			default:
				args = []string{"--config", writeConfig(t, tc.file)}
			}
			_, _, err := loadCommand(t, "serve", args...)
			if err == nil {
				t.Fatalf("no error, want one saying %q", tc.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if tc.file != "" && tc.file != "-" && !strings.Contains(msg, "a2aflow.toml") {
				t.Errorf("error %q does not name the file", msg)
			}
		})
	}
}

// TestConfigOtherCommandsKeys: a key of another process command is no
// mistake, so one file serves serve, api, worker and temporal.
func TestConfigOtherCommandsKeys(t *testing.T) {
	clearA2AflowEnv(t)
	path := writeConfig(t, "ui-addr = \"127.0.0.1:9999\"\nhealth-addr = \":8081\"\nwait-timeout = \"7s\"\n")
	_, cfg, err := loadCommand(t, "api", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WaitTimeout != 7*time.Second {
		t.Errorf("api wait-timeout = %s", cfg.WaitTimeout)
	}
	_, cfg, err = loadCommand(t, "temporal", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UIAddr != "127.0.0.1:9999" {
		t.Errorf("temporal ui-addr = %s", cfg.UIAddr)
	}
}

func TestConfigPrintMasksSecrets(t *testing.T) {
	clearA2AflowEnv(t)
	t.Setenv("A2AFLOW_API_KEYS", "alice:key-from-env-123")
	path := writeConfig(t, `jwt-hs256-secret = "file-jwt-secret-456"
database = "postgres://a2aflow:dsn-pass-789@db.internal:5432/a2aflow"
secrets-key = "cHVzaC1rZXktc2VjcmV0LTMyLWJ5dGVzLWxvbmctMTIzNA=="
log-level = "debug"

[[agents]]
name = "travel"
idle-timeout = "72h"
`)
	var out bytes.Buffer
	if err := printConfig(&out, io.Discard, testApp(), []string{"serve", "--config", path, "--wait-timeout", "9s"}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, secret := range []string{"key-from-env-123", "file-jwt-secret-456", "dsn-pass-789", "cHVzaC1rZXk"} {
		if strings.Contains(text, secret) {
			t.Errorf("config print shows the secret %q:\n%s", secret, text)
		}
	}
	for _, want := range []string{
		`api-keys +\*\*\*\* +env`,
		`jwt-hs256-secret +\*\*\*\* +file`,
		`database +postgres://a2aflow:\*\*\*\*@db.internal:5432/a2aflow +file`,
		`secrets-key +\*\*\*\* +file`,
		`log-level +debug +file`,
		`wait-timeout +9s +flag`,
		`http-addr +:8080 +default`,
		`agents.travel.idle-timeout +72h0m0s +file`,
	} {
		if !matchLine(text, want) {
			t.Errorf("config print has no line matching %q:\n%s", want, text)
		}
	}
	if err := printConfig(&out, io.Discard, testApp(), []string{"nonsense"}); err == nil || !strings.Contains(err.Error(), "serve, api, worker, temporal") {
		t.Errorf("config print nonsense: %v", err)
	}
}

func TestMaskDSN(t *testing.T) {
	for in, want := range map[string]string{
		"host=db user=a password=s3cret dbname=x": "host=db user=a password=**** dbname=x",
		"postgres://u:p@h/db?sslmode=disable":     "postgres://u:****@h/db?sslmode=disable",
		"postgres://u@h/db":                       "postgres://u@h/db",
		"./data/a2aflow.db":                       "./data/a2aflow.db",
	} {
		if got := maskDSN(in); got != want {
			t.Errorf("maskDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConfigAgents: a section names a built-in agent's settings, another
// defines an LLM agent that the registry serves with its card's skills.
func TestConfigAgents(t *testing.T) {
	clearA2AflowEnv(t)
	path := writeConfig(t, `[[agents]]
name = "travel"
idle-timeout = "72h"
while-working = "reject"
model = "travel-model"
message-only = true

[[agents]]
name = "helper"
description = "Helps."
system_prompt = "Be brief."
model = "fake-model"
tools = ["calculator", "call_agent"]
remote-agents = ["weather"]

[[agents.skills]]
id = "help"
name = "Help"
description = "Answers."
examples = ["What is 2+2?"]
`)
	_, cfg, err := loadCommand(t, "worker", "--config", path, "--idle-timeout", "expenses=1h")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := cfg.workerAgents()
	if err != nil {
		t.Fatal(err)
	}
	travel, _ := reg.Get("travel")
	if travel.IdleTimeout != 72*time.Hour || travel.WhileWorking != workflows.RejectMessage || !travel.MessageOnly {
		t.Errorf("travel: idle %s, while working %v, message-only %v", travel.IdleTimeout, travel.WhileWorking, travel.MessageOnly)
	}
	if helper, _ := reg.Get("helper"); helper.MessageOnly {
		t.Error("helper is message-only without the key")
	}
	expenses, _ := reg.Get("expenses")
	if expenses.IdleTimeout != time.Hour {
		t.Errorf("expenses idle = %s", expenses.IdleTimeout)
	}
	helper, ok := reg.Get("helper")
	if !ok || helper.Description != "Helps." || len(helper.Skills) != 1 || helper.Skills[0].ID != "help" || helper.Skills[0].Examples[0] != "What is 2+2?" {
		t.Fatalf("helper = %+v", helper)
	}
	if reg.Default().Name != testApp().Agents[0].Name {
		t.Errorf("default agent = %s", reg.Default().Name)
	}
	// A built-in agent keeps its own handler: a section with a prompt may
	// not take its name, nor name an agent that is not there.
	for file, want := range map[string]string{
		"[[agents]]\nname = \"travel\"\nsystem-prompt = \"x\"\n": `"travel" is an agent of this program`,
		"[[agents]]\nname = \"nobody\"\nidle-timeout = \"1h\"\n": `no agent named "nobody"`,
	} {
		_, cfg, err := loadCommand(t, "worker", "--config", writeConfig(t, file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cfg.workerAgents(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", file, err, want)
		}
	}
}

// matchLine reports whether a line of text matches the regular expression re.
func matchLine(text, re string) bool {
	r := regexp.MustCompile("^" + re + "$")
	for _, l := range strings.Split(text, "\n") {
		if r.MatchString(strings.TrimRight(l, " ")) {
			return true
		}
	}
	return false
}

// TestConfigAgentProvider: an LLM agent naming a provider the worker does
// not have stops the worker at start; one it has is fine.
func TestConfigAgentProvider(t *testing.T) {
	clearA2AflowEnv(t)
	path := writeConfig(t, "[[agents]]\nname = \"h\"\nsystem-prompt = \"x\"\nprovider = \"anthropic\"\n")
	_, cfg, err := loadCommand(t, "worker", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	openai := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1"})
	err = cfg.checkAgentProviders(openai, map[string]llm.Provider{"openai": openai})
	if err == nil || !strings.Contains(err.Error(), `provider "anthropic" is not configured`) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("error %v, want the missing provider named with its variable", err)
	}
	anthropic := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k"})
	if err := cfg.checkAgentProviders(openai, map[string]llm.Provider{"openai": openai, "anthropic": anthropic}); err != nil {
		t.Errorf("with both providers: %v", err)
	}
	if err := cfg.checkAgentProviders(nil, nil); err != nil {
		t.Errorf("without any LLM the worker runs on: %v", err)
	}
	if err := os.WriteFile(path, []byte("[[agents]]\nname = \"h\"\nsystem-prompt = \"x\"\nprovider = \"gemini\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadCommand(t, "worker", "--config", path); err != nil {
		t.Errorf("provider gemini: %v", err)
	}
	if err := os.WriteFile(path, []byte("[[agents]]\nname = \"h\"\nsystem-prompt = \"x\"\nprovider = \"mistral\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadCommand(t, "worker", "--config", path); err == nil || !strings.Contains(err.Error(), "want openai, anthropic or gemini") {
		t.Errorf("provider mistral: %v", err)
	}
}
