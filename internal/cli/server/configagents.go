package server

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// agentSection is one [[agents]] (or [agents.NAME]) section of the config
// file: settings of a program's agent (idle-timeout, while-working, its LLM
// provider and model), or an LLM agent without Go code when it has a
// system-prompt.
type agentSection struct {
	path         string // the config file, for error lines
	Name         string
	Description  string
	Version      string
	IdleTimeout  time.Duration
	WhileWorking string
	SystemPrompt string
	Provider     string
	Model        string
	Tools        []string
	RemoteAgents []string
	MaxTurns     int
	Skills       []a2a.AgentSkill
	MCPServers   []string
	MCPTools     []string
	MaxParallel  int
	Approvals    []llmagents.ToolApproval
	SafeDefault  []string
	// The budget of the agent's tasks (budget-* keys): see budget.
	BudgetUSD       float64
	BudgetIncrement float64
	BudgetApprovers []string
	BudgetTimeout   time.Duration
	BudgetFail      bool
	MessageOnly     bool
	// set are the keys the section holds.
	set map[string]bool
}

// agentKeys are the keys of an agents section, with what each does; the
// reference (docs/config.md) lists them from here.
var agentKeys = []struct{ Key, Doc string }{
	{"name", "the agent's name (lower-case letters, digits and '-'); in [agents.NAME] the table's name"},
	{"idle-timeout", "cancel the agent's task left waiting for the user's answer longer than this (e.g. 72h); --idle-timeout NAME=D overrides it"},
	{"while-working", "a message sent while a task works: enqueue (default), reject or interrupt"},
	{"message-only", "true: the agent keeps no state, and a new message it answers at once gets its reply as an A2A Message instead of the task (any agent)"},
	{"description", "LLM agent: its card's description"},
	{"version", "LLM agent: its card's version"},
	{"system-prompt", "LLM agent: the model's system prompt; a section with one defines an LLM agent"},
	{"provider", "openai, anthropic or gemini, configured where the worker runs (" + llm.EnvOpenAIBaseURL + "/" + llm.EnvOpenAIAPIKey + ", " + llm.EnvAnthropicAPIKey + ", " + llm.EnvGeminiAPIKey + "/" + llm.EnvGoogleAPIKey + "); default the worker's provider (" + llm.EnvProvider + "); a worker without the named one refuses to start"},
	{"model", "the model the agent's LLM calls use instead of " + llm.EnvModel + " (any agent: built-in ones too)"},
	{"tools", "LLM agent: the built-in tools it may call: ask_user, list_artifacts, save_artifact, call_agent, clock, calculator, list_agents, remember_agent"},
	{"remote-agents", "LLM agent: directory entries (--peer, agents add) whose skills become its tools, one tool AGENT_SKILL per skill of the agent's card"},
	{"mcp-servers", "LLM agent: MCP servers of the file's [[mcp-servers]] (or the program's) whose tools it may call"},
	{"mcp-tools", "LLM agent: allow only these tools of its MCP servers (default: all they list)"},
	{"max-parallel-tools", "LLM agent: how many tool calls of one turn run at once (default 8; 1: one after another)"},
	{"tool-approvals", "LLM agent: [[agents.tool-approvals]] tables, each gating one tool (of any source) by name: tool, when (an expression over the call's arguments, e.g. amount > 1000), groups, required, timeout, on-timeout (reject, approve, escalate), escalate-to, escalate-timeout, grantable, title"},
	{"safe-by-default", "LLM agent: approver groups, e.g. [\"ops\"]: every tool call that no approval policy allows waits for their approval (docs/guides/policies.md)"},
	{"max-turns", "LLM agent: the most model calls of one answer"},
	{"budget-usd", "what one task's LLM calls may cost, in USD by the [[llm-prices]] table (any agent); once spent, the task waits on an approval to spend more"},
	{"budget-increment", "what one approval lets a task spend more, in USD; default budget-usd"},
	{"budget-approvers", "the approver groups that may let a task spend more (its own budget, and its tenant's [[llm-budgets]] that name none)"},
	{"budget-timeout", "how long the approvers have (e.g. 24h); then the task fails; default forever"},
	{"budget-fail", "true: a task whose budget is spent fails at once instead of asking"},
	{"skills", "LLM agent: its card's skills, [[agents.skills]] with id, name, description, tags, examples; default one chat skill"},
}

// skillKeys are the keys of an [[agents.skills]] table.
var skillKeys = []string{"id", "name", "description", "tags", "examples"}

// llmOnlyKeys are the keys that only an LLM agent defined in the file takes.
var llmOnlyKeys = []string{"description", "version", "system-prompt", "tools", "remote-agents", "max-turns", "skills",
	"mcp-servers", "mcp-tools", "max-parallel-tools", "tool-approvals", "safe-by-default"}

// isLLM reports whether the section defines an LLM agent.
func (s agentSection) isLLM() bool { return s.set["system-prompt"] }

// spec is the section as an LLM agent's spec.
func (s agentSection) spec() llmagents.LLMAgentSpec {
	return llmagents.LLMAgentSpec{Name: s.Name, Description: s.Description, Version: s.Version, Skills: s.Skills,
		SystemPrompt: s.SystemPrompt, Provider: s.Provider, Model: s.Model, Tools: s.Tools, RemoteAgents: s.RemoteAgents, MaxTurns: s.MaxTurns,
		MCPServers: s.MCPServers, MCPTools: s.MCPTools, MaxParallelTools: s.MaxParallel, Approvals: s.Approvals,
		SafeByDefault: s.SafeDefault}
}

// budget returns the section's budget-* keys as the budget of the agent's
// tasks, and whether it sets one.
func (s agentSection) budget() (llm.Budget, bool) {
	if !s.set["budget-usd"] && !s.set["budget-approvers"] && !s.set["budget-fail"] {
		return llm.Budget{}, false
	}
	return llm.Budget{USD: s.BudgetUSD, Increment: s.BudgetIncrement, Fail: s.BudgetFail,
		Request: workflows.ApprovalRequest{Groups: s.BudgetApprovers, Timeout: s.BudgetTimeout}}, true
}

// parseAgentSections reads the file's agents value: an array of tables
// ([[agents]] with name) or a table of tables ([agents.NAME]).
func parseAgentSections(path string, v any, programTools []llm.Tool) ([]agentSection, error) {
	var out []agentSection
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("config file %s: agents[%d]: want a table ([[agents]])", path, i)
			}
			s, err := parseAgentSection(path, fmt.Sprintf("agents[%d]", i), "", m, programTools)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	case map[string]any:
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			m, ok := x[name].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("config file %s: agents.%s: want a table ([agents.%s])", path, name, name)
			}
			s, err := parseAgentSection(path, "agents."+name, name, m, programTools)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("config file %s: key \"agents\": want [[agents]] sections or [agents.NAME] tables", path)
	}
	seen := map[string]bool{}
	for _, s := range out {
		if seen[s.Name] {
			return nil, fmt.Errorf("config file %s: agents: %q has two sections", path, s.Name)
		}
		seen[s.Name] = true
	}
	return out, nil
}

// parseAgentSection reads the section at where (agents[2], agents.NAME; name
// is the table's NAME, if any) and checks it.
func parseAgentSection(path, where, name string, m map[string]any, programTools []llm.Tool) (agentSection, error) {
	s := agentSection{path: path, Name: name, set: map[string]bool{}}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, raw := range keys {
		key := strings.ReplaceAll(raw, "_", "-")
		v := m[raw]
		var err error
		switch key {
		case "tool-approvals":
			s.Approvals, err = parseToolApprovals(path, where, v)
		case "skills":
			s.Skills, err = parseSkills(path, where, v)
		default:
			err = s.setValue(key, v)
			if errors.Is(err, errUnknownKey) {
				known := make([]string, 0, len(agentKeys))
				for _, k := range agentKeys {
					known = append(known, k.Key)
				}
				return s, fmt.Errorf("config file %s: %s: unknown key %q%s", path, where, key, didYouMean(key, known))
			}
			if err != nil {
				err = fmt.Errorf("config file %s: %s: key %q: bad value %s: %v", path, where, key, showValue(v), err)
			}
		}
		if err != nil {
			return s, err
		}
		s.set[key] = true
	}
	return s, s.check(where, name, programTools)
}

// errUnknownKey is setValue's answer for a key agents sections do not have.
var errUnknownKey = errors.New("unknown key")

// setValue sets the section's key to v, the value of the config file, or
// says why v is wrong.
func (s *agentSection) setValue(key string, v any) error {
	var err error
	switch key {
	case "name":
		s.Name, err = stringValue(v)
	case "description":
		s.Description, err = stringValue(v)
	case "version":
		s.Version, err = stringValue(v)
	case "system-prompt":
		s.SystemPrompt, err = stringValue(v)
	case "provider":
		s.Provider, err = stringValue(v)
		if err == nil && s.Provider != "openai" && s.Provider != "anthropic" && s.Provider != "gemini" {
			return errors.New("want openai, anthropic or gemini")
		}
	case "model":
		s.Model, err = stringValue(v)
	case "while-working":
		if s.WhileWorking, err = stringValue(v); err == nil {
			_, err = busyPolicy(s.WhileWorking)
		}
	case "idle-timeout":
		s.IdleTimeout, err = positiveDuration(v, "72h")
	case "max-turns":
		s.MaxTurns, err = countValue(v)
	case "tools":
		s.Tools, err = stringList(v)
	case "remote-agents":
		s.RemoteAgents, err = stringList(v)
	case "mcp-servers":
		s.MCPServers, err = stringList(v)
	case "mcp-tools":
		s.MCPTools, err = stringList(v)
	case "max-parallel-tools":
		s.MaxParallel, err = countValue(v)
	case "safe-by-default":
		if s.SafeDefault, err = stringList(v); err == nil && len(s.SafeDefault) == 0 {
			err = errors.New("name the approver groups, e.g. [\"ops\"]")
		}
	case "budget-usd":
		s.BudgetUSD, err = amountValue(v)
	case "budget-increment":
		s.BudgetIncrement, err = amountValue(v)
	case "budget-approvers":
		s.BudgetApprovers, err = stringList(v)
	case "budget-timeout":
		s.BudgetTimeout, err = positiveDuration(v, "24h")
	case "budget-fail":
		var ok bool
		if s.BudgetFail, ok = v.(bool); !ok {
			return errors.New("want true or false")
		}
	case "message-only":
		var ok bool
		if s.MessageOnly, ok = v.(bool); !ok {
			return errors.New("want true or false")
		}
	default:
		return errUnknownKey
	}
	return err
}

// check checks the section as a whole once its keys are set: its name (the
// table's, when it has one), and an LLM agent's spec, or that a program's
// agent has no key of an LLM agent.
func (s agentSection) check(where, name string, programTools []llm.Tool) error {
	if name != "" && s.Name != name {
		return fmt.Errorf("config file %s: %s: name %q differs from the table's name", s.path, where, s.Name)
	}
	if s.Name == "" {
		return fmt.Errorf("config file %s: %s: key \"name\" is required", s.path, where)
	}
	if s.isLLM() {
		spec := s.spec()
		spec.ProgramTools = programTools
		if err := spec.Check(); err != nil {
			return fmt.Errorf("config file %s: %s: %w", s.path, where, err)
		}
		return nil
	}
	for _, k := range llmOnlyKeys {
		if s.set[k] {
			return fmt.Errorf("config file %s: %s: key %q belongs to an LLM agent, which needs a system-prompt", s.path, where, k)
		}
	}
	return nil
}

// positiveDuration reads a duration above 0 such as example.
func positiveDuration(v any, example string) (time.Duration, error) {
	str, err := stringValue(v)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(str)
	if err == nil && d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as %s", example)
	}
	return d, err
}

// countValue reads a whole number of at least 1.
func countValue(v any) (int, error) {
	n, ok := v.(int64)
	if !ok || n < 1 {
		return 0, errors.New("want a whole number ≥ 1")
	}
	return int(n), nil
}

// amountValue reads a finite amount of USD above 0.
func amountValue(v any) (float64, error) {
	n, err := numberValue(v, "USD")
	if err == nil && (!(n > 0) || math.IsInf(n, 0)) {
		return 0, errors.New("want a finite amount above 0")
	}
	return n, err
}

func parseSkills(path, where string, v any) ([]a2a.AgentSkill, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: %s: key \"skills\": want [[agents.skills]] tables", path, where)
	}
	var out []a2a.AgentSkill
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: %s.skills[%d]: want a table", path, where, i)
		}
		var sk a2a.AgentSkill
		for k, v := range m {
			var err error
			switch k {
			case "id":
				sk.ID, err = stringValue(v)
			case "name":
				sk.Name, err = stringValue(v)
			case "description":
				sk.Description, err = stringValue(v)
			case "tags":
				sk.Tags, err = stringList(v)
			case "examples":
				sk.Examples, err = stringList(v)
			default:
				return nil, fmt.Errorf("config file %s: %s.skills[%d]: unknown key %q%s", path, where, i, k, didYouMean(k, skillKeys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: %s.skills[%d]: key %q: bad value %s: %v", path, where, i, k, showValue(v), err)
			}
		}
		if sk.ID == "" || sk.Name == "" {
			return nil, fmt.Errorf("config file %s: %s.skills[%d]: id and name are required", path, where, i)
		}
		if sk.Tags == nil {
			sk.Tags = []string{}
		}
		out = append(out, sk)
	}
	return out, nil
}

func stringValue(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("a %T, where a string is wanted", v)
	}
	return s, nil
}

func stringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("a %T, where a list of strings is wanted", v)
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("a %T in the list, where strings are wanted", e)
		}
		out = append(out, s)
	}
	return out, nil
}

// busyPolicy reads a while-working value.
func busyPolicy(s string) (workflows.BusyPolicy, error) {
	switch s {
	case "", "enqueue":
		return workflows.EnqueueMessage, nil
	case "reject":
		return workflows.RejectMessage, nil
	case "interrupt":
		return workflows.InterruptWork, nil
	}
	return 0, fmt.Errorf("want enqueue, reject or interrupt")
}

// registry returns the agents served: copies of the program's agents, then
// the config file's LLM agents, with the file's per-agent settings applied.
func (c *config) registry() (*engine.Registry, error) {
	reg, err := c.fileRegistry()
	if err != nil || len(c.SafeByDefault) == 0 {
		return reg, err
	}
	// --safe-by-default: every agent's tool loops, unless one sets its own.
	for _, name := range reg.Names() {
		a, _ := reg.Get(name)
		handle, approvers := a.Handle, c.SafeByDefault
		a.Handle = func(ctx workflow.Context, t *workflows.Task) error {
			return handle(llm.WithDefaultSafeByDefault(ctx, approvers...), t)
		}
	}
	return reg, nil
}

// fileRegistry is registry without the server's safe-by-default.
func (c *config) fileRegistry() (*engine.Registry, error) {
	reg, err := c.app.registry()
	if err != nil || len(c.fileAgents) == 0 {
		return reg, err
	}
	all := reg.Agents()
	for _, s := range c.fileAgents {
		if !s.isLLM() {
			continue
		}
		if _, builtin := reg.Get(s.Name); builtin {
			return nil, fmt.Errorf("config file %s: agents: %q is an agent of this program; give the LLM agent another name", s.path, s.Name)
		}
		spec := s.spec()
		spec.ProgramTools = c.app.Tools
		if err := spec.Check(); err != nil {
			return nil, fmt.Errorf("config file %s: agents: %w", s.path, err)
		}
		servers, err := c.mcpServers()
		if err != nil {
			return nil, err
		}
		for _, name := range spec.MCPServers {
			if _, ok := servers[name]; !ok {
				return nil, fmt.Errorf("config file %s: agents: %q uses MCP server %q, which is not configured ([[mcp-servers]])", s.path, s.Name, name)
			}
		}
		all = append(all, llmagents.LLMAgent(spec))
	}
	if reg, err = engine.NewRegistry(all...); err != nil {
		return nil, fmt.Errorf("config file %s: agents: %w", c.ConfigFile, err)
	}
	for _, s := range c.fileAgents {
		a, ok := reg.Get(s.Name)
		if !ok {
			return nil, fmt.Errorf("config file %s: agents: no agent named %q (agents: %s); a section with a system-prompt defines one",
				s.path, s.Name, strings.Join(reg.Names(), ", "))
		}
		if s.set["idle-timeout"] {
			a.IdleTimeout = s.IdleTimeout
		}
		if s.set["while-working"] {
			a.WhileWorking, _ = busyPolicy(s.WhileWorking)
		}
		if s.set["message-only"] {
			a.MessageOnly = s.MessageOnly
		}
		if b, ok := s.budget(); ok {
			// Any agent: its LLM calls have the section's budget unless
			// a call sets its own (llm.WithBudget).
			handle := a.Handle
			a.Handle = func(ctx workflow.Context, t *workflows.Task) error {
				return handle(llm.WithDefaultBudget(ctx, b), t)
			}
		}
		if !s.isLLM() && (s.Provider != "" || s.Model != "") {
			// A program's agent: its LLM calls default to the section's
			// provider and model (an LLM agent of the file names them itself).
			handle, provider, model := a.Handle, s.Provider, s.Model
			a.Handle = func(ctx workflow.Context, t *workflows.Task) error {
				return handle(llm.WithDefaults(ctx, provider, model), t)
			}
		}
	}
	return reg, nil
}

// checkAgentProviders refuses a file LLM agent naming a provider that the
// worker does not have configured, when it has one at all (none: the
// agent's tasks answer how to configure one).
func (c *config) checkAgentProviders(def llm.Provider, providers map[string]llm.Provider) error {
	for _, s := range c.fileAgents {
		if s.Provider == "" || def == nil || def.Name() == s.Provider || providers[s.Provider] != nil {
			continue
		}
		need := "OPENAI_BASE_URL or OPENAI_API_KEY"
		switch s.Provider {
		case "anthropic":
			need = llm.EnvAnthropicAPIKey
		case "gemini":
			need = llm.EnvGeminiAPIKey + " or " + llm.EnvGoogleAPIKey
		}
		return fmt.Errorf("config file %s: agent %q: provider %q is not configured on this worker (set %s where the worker runs)",
			s.path, s.Name, s.Provider, need)
	}
	return nil
}

// toolApprovalKeys are the keys of an [[agents.tool-approvals]] table.
var toolApprovalKeys = []string{"tool", "when", "groups", "required", "timeout", "on-timeout", "escalate-to", "escalate-timeout", "grantable", "title"}

// parseToolApprovals reads an agent's [[agents.tool-approvals]] tables.
func parseToolApprovals(path, where string, v any) ([]llmagents.ToolApproval, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: %s: key \"tool-approvals\": want [[agents.tool-approvals]] tables", path, where)
	}
	var out []llmagents.ToolApproval
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: %s.tool-approvals[%d]: want a table", path, where, i)
		}
		var a llmagents.ToolApproval
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, raw := range keys {
			k, v := strings.ReplaceAll(raw, "_", "-"), m[raw]
			var err error
			duration := func() (time.Duration, error) {
				s, err := stringValue(v)
				if err != nil {
					return 0, err
				}
				d, err := time.ParseDuration(s)
				if err == nil && d <= 0 {
					err = fmt.Errorf("want a positive duration such as 48h")
				}
				return d, err
			}
			switch k {
			case "tool":
				a.Tool, err = stringValue(v)
			case "when":
				a.When, err = stringValue(v)
			case "title":
				a.Request.Title, err = stringValue(v)
			case "groups":
				a.Request.Groups, err = stringList(v)
			case "escalate-to":
				a.Request.EscalateTo, err = stringList(v)
			case "required":
				n, ok := v.(int64)
				if !ok || n < 1 {
					err = fmt.Errorf("want a whole number ≥ 1")
				}
				a.Request.Required = int(n)
			case "timeout":
				a.Request.Timeout, err = duration()
			case "escalate-timeout":
				a.Request.EscalateTimeout, err = duration()
			case "on-timeout":
				var s string
				if s, err = stringValue(v); err == nil {
					switch workflows.DeadlineAction(s) {
					case workflows.RejectAtDeadline, workflows.ApproveAtDeadline, workflows.EscalateAtDeadline:
						a.Request.OnTimeout = workflows.DeadlineAction(s)
					default:
						err = fmt.Errorf("want reject, approve or escalate")
					}
				}
			case "grantable":
				b, ok := v.(bool)
				if !ok {
					err = fmt.Errorf("want true or false")
				}
				a.Grantable = b
			default:
				return nil, fmt.Errorf("config file %s: %s.tool-approvals[%d]: unknown key %q%s", path, where, i, k, didYouMean(k, toolApprovalKeys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: %s.tool-approvals[%d]: key %q: bad value %s: %v", path, where, i, k, showValue(v), err)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// mcpServerKeys are the keys of an [[mcp-servers]] table.
var mcpServerKeys = []string{"name", "url", "credentials", "command", "args", "env"}

// parseMCPServers reads the file's [[mcp-servers]] tables.
func parseMCPServers(path string, v any) ([]activities.MCPServer, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: key \"mcp-servers\": want [[mcp-servers]] tables", path)
	}
	var out []activities.MCPServer
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: mcp-servers[%d]: want a table", path, i)
		}
		var srv activities.MCPServer
		for raw, v := range m {
			k := strings.ReplaceAll(raw, "_", "-")
			var err error
			switch k {
			case "name":
				srv.Name, err = stringValue(v)
			case "url":
				srv.URL, err = stringValue(v)
			case "credentials":
				srv.Credentials, err = stringValue(v)
			case "command":
				srv.Command, err = stringValue(v)
			case "args":
				srv.Args, err = stringList(v)
			case "env":
				if t, ok := v.(map[string]any); ok {
					names := make([]string, 0, len(t))
					for name := range t {
						names = append(names, name)
					}
					sort.Strings(names)
					for _, name := range names {
						val, verr := stringValue(t[name])
						if verr != nil {
							err = verr
							break
						}
						srv.Env = append(srv.Env, name+"="+val)
					}
				} else {
					srv.Env, err = stringList(v)
				}
			default:
				return nil, fmt.Errorf("config file %s: mcp-servers[%d]: unknown key %q%s", path, i, k, didYouMean(k, mcpServerKeys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: mcp-servers[%d]: key %q: bad value %s: %v", path, i, k, showValue(v), err)
			}
		}
		if err := srv.Validate(); err != nil {
			return nil, fmt.Errorf("config file %s: mcp-servers[%d]: %w", path, i, err)
		}
		if seen[srv.Name] {
			return nil, fmt.Errorf("config file %s: mcp-servers: %q has two sections", path, srv.Name)
		}
		seen[srv.Name] = true
		out = append(out, srv)
	}
	return out, nil
}

// mcpServers returns the MCP servers of the program and of the config
// file, by name.
func (c *config) mcpServers() (map[string]activities.MCPServer, error) {
	out := map[string]activities.MCPServer{}
	for _, srv := range append(append([]activities.MCPServer(nil), c.app.MCPServers...), c.fileMCPServers...) {
		if _, dup := out[srv.Name]; dup {
			return nil, fmt.Errorf("two MCP servers are named %q (the program's and the config file's)", srv.Name)
		}
		out[srv.Name] = srv
	}
	return out, nil
}
