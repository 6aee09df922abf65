package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/tests/fakes"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// configAgentsFile defines two LLM agents without Go code: helper, whose
// tools are the calculator, call_agent and the skills of the remote agent
// "weather" (found in the directory), and weather itself.
const configAgentsFile = `# a2aflow.toml of TestConfigFileAgents
default-history-length = 50

[[agents]]
name = "helper"
description = "Helps with plans; asks the weather agent about the weather."
system-prompt = "You are helper."
model = "helper-model"
tools = ["calculator", "call_agent"]
remote-agents = ["weather"]

[[agents.skills]]
id = "plan"
name = "Plan"
description = "Plans a day out."
tags = ["llm"]
examples = ["Will it rain in Lisbon?"]

[[agents]]
name = "weather"
description = "Forecasts the weather."
system_prompt = "You are weather."

[[agents.skills]]
id = "forecast"
name = "Forecast"
description = "Tells tomorrow's weather in a city."
`

// fakeConfigLLM is an OpenAI Chat Completions endpoint scripted for the two
// agents of configAgentsFile, answering by the system prompt and the last
// message; it records the tools each request offered.
type fakeConfigLLM struct {
	*httptest.Server
	mu     sync.Mutex
	tools  map[string][]string // system prompt -> tool names of its last request
	descs  map[string]string   // tool name -> description
	models map[string]string   // system prompt -> model
}

func newFakeConfigLLM(t *testing.T) *fakeConfigLLM {
	f := &fakeConfigLLM{tools: map[string][]string{}, descs: map[string]string{}, models: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := fakes.ReadChat(w, r)
		if !ok {
			return
		}
		if r.URL.Path != "/v1/chat/completions" || len(req.Messages) < 2 {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		system := fmt.Sprint(req.Messages[0].Content)
		last := req.Last()
		f.mu.Lock()
		f.models[system] = req.Model
		var names []string
		for _, tool := range req.Tools {
			names = append(names, tool.Function.Name)
			f.descs[tool.Function.Name] = tool.Function.Description
		}
		f.tools[system] = names
		f.mu.Unlock()
		var message string
		switch {
		case system == "You are helper." && last.Role == "user":
			message = fakes.ToolCallMessage("call_weather", "weather_forecast", `{"message":"Will it rain in Lisbon tomorrow?"}`)
		case system == "You are helper." && last.Role == "tool" && last.ToolCallID == "call_weather":
			var out struct{ State, Answer string }
			_ = json.Unmarshal([]byte(fmt.Sprint(last.Content)), &out)
			message = fakes.TextMessage(fmt.Sprintf("The weather agent (%s) says: %s", out.State, out.Answer))
		case system == "You are weather." && last.Role == "user":
			message = fakes.TextMessage("Sunny in Lisbon, no rain. (asked: " + fmt.Sprint(last.Content) + ")")
		default:
			message = fakes.TextMessage("I am lost.")
		}
		fakes.WriteChat(w, req.Stream, "chatcmpl-config", req.Model, message, 10, 5)
	}))
	t.Cleanup(f.Close)
	return f
}

// TestConfigFileAgents: `serve --config a2aflow.toml` serves two LLM agents
// defined in the file. Asked through the official a2a-go client, helper's
// model calls the tool generated from the weather agent's card
// (weather_forecast), which delegates over A2A to the weather agent, whose
// answer comes back into helper's answer.
func TestConfigFileAgents(t *testing.T) {
	fake := newFakeConfigLLM(t)
	fakes.UseOpenAI(t, fake.URL, "sk-config-test", "default-model")
	path := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(path, []byte(configAgentsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	s := harness.StartServe(t, dataDir, "--config", path)
	ctx := harness.Context(t)

	c, card := harness.NewClient(t, ctx, s.APIURL+"/agents/helper")
	if card.Name != "helper" || len(card.Skills) != 1 || card.Skills[0].ID != "plan" || card.Skills[0].Examples[0] != "Will it rain in Lisbon?" {
		t.Fatalf("helper's card = %+v, want the file's name and skill", card)
	}
	_, weatherCard := harness.NewClient(t, ctx, s.APIURL+"/agents/weather")
	if weatherCard.Skills[0].ID != "forecast" {
		t.Fatalf("weather's card skills = %+v", weatherCard.Skills)
	}
	// The weather agent goes into the directory as any remote agent does.
	harness.AddAgent(t, dataDir, "weather", s.APIURL+"/agents/weather")

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Will it rain in Lisbon?"))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	harness.WantState(t, task, a2a.TaskStateCompleted, "")
	want := "The weather agent (TASK_STATE_COMPLETED) says: Sunny in Lisbon, no rain. (asked: Will it rain in Lisbon tomorrow?)"
	if got := harness.StatusText(task); got != want {
		t.Errorf("helper answered %q, want %q", got, want)
	}

	// The recorded helper task replays against this binary with the file's
	// agents: the tools generated from the card come from history.
	replay := harness.Command("replay", "--config", path, "--task", string(task.ID), "--temporal-addr", s.TemporalAddr, "--data-dir", dataDir)
	if out, err := replay.CombinedOutput(); err != nil || !strings.Contains(string(out), "replayed 1, 0 did not replay") {
		t.Errorf("replay of the helper task: %v\n%s", err, out)
	}

	fake.mu.Lock()
	defer fake.mu.Unlock()
	if got := strings.Join(fake.tools["You are helper."], " "); got != "calculator call_agent weather_forecast" {
		t.Errorf("helper's tools = %q, want the enabled ones and one per weather skill", got)
	}
	if d := fake.descs["weather_forecast"]; !strings.Contains(d, "Tells tomorrow's weather in a city.") {
		t.Errorf("weather_forecast's description %q does not carry the card's skill description", d)
	}
	if fake.models["You are helper."] != "helper-model" || fake.models["You are weather."] != "default-model" {
		t.Errorf("models = %v, want helper's own and the worker's default for weather", fake.models)
	}
}

// TestConfigPrint runs `a2aflow config print` on a real file with an
// environment variable and a flag: each key's value and source, secrets
// masked; and a typo in the file refused in one line by serve.
func TestConfigPrint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a2aflow.toml")
	if err := os.WriteFile(path, []byte(`http-addr = "127.0.0.1:9090"
log-level = "warn"
database = "postgres://a2aflow:pg-secret-42@db:5432/a2aflow"
jwt-hs256-secret = "jwt-secret-0123456789-0123456789-abc"
[ui]
oidc-issuer = "https://login.example"
[agents.travel]
idle-timeout = "72h"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := harness.Command("config", "print", "serve", "--config", path, "--wait-timeout", "9s")
	cmd.Env = append(os.Environ(), "A2AFLOW_LOG_LEVEL=debug", "A2AFLOW_CONFIG=", "A2AFLOW_HTTP_ADDR=", "A2AFLOW_WAIT_TIMEOUT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("config print: %v\n%s", err, out)
	}
	text := string(out)
	for _, re := range []string{
		`http-addr +127\.0\.0\.1:9090 +file`,
		`log-level +debug +env`,
		`wait-timeout +9s +flag`,
		`ui-oidc-issuer +https://login\.example +file`,
		`database +postgres://a2aflow:\*\*\*\*@db:5432/a2aflow +file`,
		`jwt-hs256-secret +\*\*\*\* +file`,
		`namespace +default +default`,
		`config +` + regexp.QuoteMeta(path) + ` +flag`,
		`agents\.travel\.idle-timeout +72h0m0s +file`,
	} {
		if !regexp.MustCompile(`(?m)^` + re + ` *$`).MatchString(text) {
			t.Errorf("config print has no line matching %q:\n%s", re, text)
		}
	}
	for _, secret := range []string{"pg-secret-42", "jwt-secret-0123456789"} {
		if strings.Contains(text, secret) {
			t.Errorf("config print shows the secret %q", secret)
		}
	}

	// A typo stops serve before it starts anything, naming file and key.
	if err := os.WriteFile(path, []byte("wait-timout = \"5s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = harness.Command("serve", "--config", path, "--data-dir", dir)
	out, err = cmd.CombinedOutput()
	line := strings.TrimSpace(string(out))
	if err == nil || strings.Count(line, "\n") != 0 || !strings.Contains(line, path) ||
		!strings.Contains(line, `unknown key "wait-timout" (did you mean "wait-timeout"?)`) {
		t.Errorf("serve with a typo: err %v, output %q, want one line naming the file, the key and the nearest key", err, line)
	}
}

// TestDeprecatedNames: the names a rename replaced still work for one
// release, each with a one-line warning naming the new one: the flag
// (--push-key), the environment variable (A2AFLOW_PUSH_PREVIOUS_KEYS,
// A2AFLOW_CREDENTIALS) and the config file key (insecure-store-push-secrets).
func TestDeprecatedNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2aflow.toml")
	if err := os.WriteFile(path, []byte("insecure-store-push-secrets = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := harness.Command("config", "print", "worker", "--config", path, "--push-key", harness.SecretsKey)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin",
		"A2AFLOW_PUSH_PREVIOUS_KEYS=" + harness.SecretsKey, "A2AFLOW_CREDENTIALS=keys.json"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("config print: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, re := range []string{
		`secrets-key +\*\*\*\* +flag`,
		`secrets-previous-keys +\*\*\*\* +env`,
		`outbound-credentials +keys\.json +env`,
		`insecure-store-secrets +true +file`,
	} {
		if !regexp.MustCompile(`(?m)^` + re + ` *$`).MatchString(stdout.String()) {
			t.Errorf("config print has no line matching %q:\n%s", re, stdout.String())
		}
	}
	for _, name := range []string{"push-key", "push-previous-keys", "credentials", "insecure-store-push-secrets"} {
		if regexp.MustCompile(`(?m)^` + name + ` `).MatchString(stdout.String()) {
			t.Errorf("config print lists the deprecated name %s:\n%s", name, stdout.String())
		}
	}
	for _, want := range []string{
		"Flag --push-key has been deprecated, use --secrets-key instead",
		"A2AFLOW_PUSH_PREVIOUS_KEYS is deprecated, use A2AFLOW_SECRETS_PREVIOUS_KEYS",
		"A2AFLOW_CREDENTIALS is deprecated, use A2AFLOW_OUTBOUND_CREDENTIALS",
		`key "insecure-store-push-secrets" is deprecated, use "insecure-store-secrets"`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if n := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1; n != 4 {
		t.Errorf("want one warning line per deprecated name, got %d:\n%s", n, stderr.String())
	}
}
