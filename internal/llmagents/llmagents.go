// Package llmagents builds the LLM agents of the config file ([[agents]]
// sections: LLMAgentSpec) and their built-in tools (clock, calculator,
// call_agent, one tool per remote skill, the task's artifacts, ask_user),
// with the program's Go tools (a2aflow.WithTools), MCP servers' tools and
// the approval gates of [[agents.tool-approvals]].
package llmagents

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/expr-lang/expr"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// LLMAgentSpec describes an LLM agent without Go code, as a config file's
// [[agents]] section does: its card, its system prompt, its model and the
// tools it may use.
type LLMAgentSpec struct {
	Name        string
	Description string
	Version     string
	// Skills are the card's skills; none gives one "chat" skill.
	Skills []a2a.AgentSkill
	// SystemPrompt is the model's system prompt.
	SystemPrompt string
	// Provider names the worker's provider to call, "openai" or
	// "anthropic" (llm.WithProvider); empty calls its default one.
	Provider string
	// Model overrides the worker's model (A2AFLOW_LLM_MODEL); empty keeps it.
	Model string
	// Tools are built-in tools by name (see LLMAgentTools).
	Tools []string
	// RemoteAgents name directory entries (--peer, agents add) whose skills
	// become tools, one per skill, generated from the agent's card when a
	// task starts.
	RemoteAgents []string
	// MaxTurns bounds the model calls of one answer; 0 is llm.Worker's default.
	MaxTurns int
	// MCPServers name MCP servers of the worker (the config file's
	// [[mcp-servers]], a2aflow.WithMCPServer) whose tools the agent may use,
	// read when a task starts.
	MCPServers []string
	// MCPTools, when set, allows only these tools of its MCP servers.
	MCPTools []string
	// ProgramTools are the program's own tools (a2aflow.WithTools) that
	// Tools may name besides the built-in ones.
	ProgramTools []llm.Tool
	// Approvals gate the agent's tools, whatever their source, by name.
	Approvals []ToolApproval
	// MaxParallelTools bounds the tool calls of one turn that run at once;
	// 0 is llm.Worker's default.
	MaxParallelTools int
	// SafeByDefault, when set, makes every tool call that no approval
	// policy allows wait for an approval of these groups
	// (llm.WithSafeByDefault).
	SafeByDefault []string
}

// ToolApproval gates one tool of an LLM agent from the config file: its
// calls (those for which When holds) wait for an approval (llm.Gate).
type ToolApproval struct {
	// Tool is the tool's name as the model sees it.
	Tool string
	// When is an expression over the call's arguments (expr-lang: amount
	// > 1000 && currency == "EUR"); empty gates every call.
	When string
	// Request is the approval: groups, quorum, deadline, escalation.
	Request workflows.ApprovalRequest
	// Grantable lets an approver approve the tool for the rest of the task.
	Grantable bool
}

// condition compiles the approval's When into a gate condition. The
// expression sees the call's arguments as variables; builtins that read
// the clock are off, so that it is deterministic workflow code.
func (a ToolApproval) condition() (llm.Condition, error) {
	if strings.TrimSpace(a.When) == "" {
		return llm.Condition{}, nil
	}
	program, err := expr.Compile(a.When, expr.AsBool(), expr.AllowUndefinedVariables(), expr.DisableBuiltin("now"), expr.DisableBuiltin("date"), expr.DisableBuiltin("duration"), expr.DisableBuiltin("timezone"))
	if err != nil {
		return llm.Condition{}, fmt.Errorf("approval of tool %q: when %q: %w", a.Tool, a.When, err)
	}
	return llm.If(func(args map[string]any) bool {
		out, err := expr.Run(program, args)
		gated, _ := out.(bool)
		return err != nil || gated // an expression that fails gates the call
	}), nil
}

// gate is the approval as an llm.Gate.
func (a ToolApproval) gate() (llm.Gate, error) {
	when, err := a.condition()
	return llm.Gate{Request: a.Request, When: when, Grantable: a.Grantable}, err
}

// LLMAgentTools lists the built-in tools an LLMAgentSpec may enable, with
// what each does.
func LLMAgentTools() map[string]string {
	return map[string]string{
		"ask_user":       "asks the user a question and waits for the answer (input-required)",
		"list_artifacts": "lists the task's artifacts",
		"save_artifact":  "saves a document as an artifact of the task",
		"call_agent":     "delegates a request to any remote agent of the directory by name",
		"clock":          "the current date and time in any time zone",
		"calculator":     "evaluates arithmetic exactly",
		"list_agents":    "lists the remote agents of the directory (directory tool)",
		"remember_agent": "adds a remote agent to the directory by URL (directory tool)",
	}
}

// Check reports what is wrong with the spec: a tool it does not know, an
// approval without groups or whose condition does not compile.
func (s LLMAgentSpec) Check() error {
	known := LLMAgentTools()
	for _, t := range s.ProgramTools {
		known[t.Name()] = "the program's own tool"
	}
	for _, a := range s.Approvals {
		if a.Tool == "" {
			return fmt.Errorf("agent %q: a tool approval names no tool", s.Name)
		}
		if len(a.Request.Groups) == 0 {
			return fmt.Errorf("agent %q: the approval of tool %q names no approver group", s.Name, a.Tool)
		}
		if _, err := a.condition(); err != nil {
			return fmt.Errorf("agent %q: %w", s.Name, err)
		}
	}
	for _, name := range s.Tools {
		if _, ok := known[name]; !ok {
			names := make([]string, 0, len(known))
			for k := range known {
				names = append(names, k)
			}
			sort.Strings(names)
			return fmt.Errorf("agent %q: unknown tool %q (tools: %s)", s.Name, name, strings.Join(names, ", "))
		}
	}
	if strings.TrimSpace(s.SystemPrompt) == "" {
		return fmt.Errorf("agent %q: an LLM agent needs a system-prompt", s.Name)
	}
	return nil
}

// LLMAgent returns the agent spec describes: an LLM tool loop (llm.Worker)
// over the conversation of the task's context with the enabled tools, as
// the assistant is, and one tool per skill of each remote agent named.
func LLMAgent(spec LLMAgentSpec) *workflows.Agent {
	skills := spec.Skills
	if len(skills) == 0 {
		skills = []a2a.AgentSkill{{ID: "chat", Name: "Chat", Description: spec.Description, Tags: []string{"llm"}}}
	}
	return &workflows.Agent{
		Name:        spec.Name,
		Description: spec.Description,
		Version:     spec.Version,
		Skills:      skills,
		InputModes:  []string{"text/plain", "application/json", "text/*", "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			return runLLMAgent(ctx, t, spec)
		},
	}
}

func runLLMAgent(ctx workflow.Context, t *workflows.Task, spec LLMAgentSpec) error {
	thread, err := t.ContextThread(ctx)
	if err != nil {
		workflow.GetLogger(ctx).Warn("context thread unavailable, using the task's own", "error", err)
		thread = t.Thread()
	}
	var tools []llm.Tool
	for _, name := range spec.Tools {
		switch name {
		case "ask_user":
			tools = append(tools, llm.AskUser(t))
		case "list_artifacts":
			tools = append(tools, ListArtifactsTool(t))
		case "save_artifact":
			tools = append(tools, SaveArtifactTool(t))
		case "call_agent":
			tools = append(tools, CallAgentTool(t))
		case "clock":
			tools = append(tools, clockTool)
		case "calculator":
			tools = append(tools, calculatorTool)
		case "list_agents":
			tools = append(tools, DirectoryTools(nil)[0])
		case "remember_agent":
			tools = append(tools, DirectoryTools(nil)[1])
		default:
			i := slices.IndexFunc(spec.ProgramTools, func(t llm.Tool) bool { return t.Name() == name })
			if i < 0 {
				return fmt.Errorf("agent %s: unknown tool %q", spec.Name, name)
			}
			tools = append(tools, spec.ProgramTools[i])
		}
	}
	taken := map[string]bool{}
	for i, tool := range tools {
		taken[tool.Name()] = true
		if _, builtin := LLMAgentTools()[tool.Name()]; builtin {
			tools[i] = tool.With(llm.ToolSource("builtin")) // the approval policies' context.source
		}
	}
	for _, remote := range spec.RemoteAgents {
		skillTools, err := remoteSkillTools(ctx, t, remote, taken)
		if err != nil {
			return err
		}
		tools = append(tools, skillTools...)
	}
	for _, server := range spec.MCPServers {
		var mcpOpts []llm.MCPOption
		if len(spec.MCPTools) > 0 {
			mcpOpts = append(mcpOpts, llm.OnlyTools(spec.MCPTools...))
		}
		serverTools, err := llm.MCP(ctx, server, mcpOpts...)
		if err != nil {
			return err
		}
		tools = append(tools, serverTools...)
	}
	for _, a := range spec.Approvals {
		g, err := a.gate() //workflowcheck:ignore compiles an expr-lang program with the clock builtins off: deterministic (checked by Check)
		if err != nil {
			return err
		}
		for i := range tools {
			if tools[i].Name() == a.Tool {
				tools[i] = tools[i].With(llm.RequireApproval(g))
			}
		}
	}
	opts := []llm.Option{llm.WithSystem(spec.SystemPrompt), llm.WithUsage(t)}
	if spec.MaxParallelTools > 0 {
		opts = append(opts, llm.WithParallelToolCalls(spec.MaxParallelTools))
	}
	if len(spec.SafeByDefault) > 0 {
		opts = append(opts, llm.WithSafeByDefault(spec.SafeByDefault...))
	}
	if spec.Model != "" {
		opts = append(opts, llm.WithModel(spec.Model))
	}
	if spec.Provider != "" {
		opts = append(opts, llm.WithProvider(spec.Provider))
	}
	if spec.MaxTurns > 0 {
		opts = append(opts, llm.WithMaxTurns(spec.MaxTurns))
	}
	return ReplyFromLLM(ctx, t, thread, tools, opts...)
}

// RemoteSkillMessage is the argument of a remote skill tool.
type RemoteSkillMessage struct {
	Message string `json:"message" jsonschema:"description=The request for the remote agent, complete and self-contained" validate:"required"`
}

var toolNameRune = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// remoteSkillTools reads the remote agent's card from the directory (the
// AgentSkills activity: its answer is in history, so a replay builds the
// same tools) and returns one tool per skill, named AGENT_SKILL, that
// delegates the model's message to the agent with Task.CallAgent. An agent
// the directory does not know gives no tools and a warning: call_agent and
// the other tools still work.
func remoteSkillTools(ctx workflow.Context, t *workflows.Task, agent string, taken map[string]bool) ([]llm.Tool, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second, MaximumAttempts: 10},
		Summary:             "skills of " + agent,
	})
	var card activities.AgentSkillsOutput
	if err := workflow.ExecuteActivity(actx, wire.ActivityAgentSkills, activities.AgentSkillsInput{Agent: agent}).Get(ctx, &card); err != nil {
		workflow.GetLogger(ctx).Warn("remote agent's skills unavailable; its skill tools are left out", "remote_agent", agent, "error", err)
		return nil, nil
	}
	var tools []llm.Tool
	for _, s := range card.Skills {
		name := toolNameRune.ReplaceAllString(agent+"_"+s.ID, "_")
		if len(name) > 60 {
			name = name[:60]
		}
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s%d", strings.TrimRight(name, "0123456789"), i)
		}
		taken[name] = true
		desc := fmt.Sprintf("Asks the remote A2A agent %q (%s) for its skill %q: %s", agent, card.Description, s.Name, s.Description)
		if len(s.Examples) > 0 {
			desc += " Examples: " + strings.Join(s.Examples, "; ")
		}
		remote := agent
		tools = append(tools, llm.WorkflowTool(name, desc, func(ctx workflow.Context, in RemoteSkillMessage) (CallAgentOutput, error) {
			return callAgent(ctx, t, remote, in.Message)
		}, llm.ToolSource("agent:"+remote)))
	}
	return tools, nil
}
