package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// Router returns the router agent, the bidirectional agent of
// ../shared/seeds/bidirectional-a2a-agent.md: each request is run by a
// local tool (LOCAL), delegated to an agent of the directory (REMOTE) or
// refused with the reason (REJECT). Three ways in, most explicit first:
//
//   - a data part {"tool": NAME, "params": {...}} runs that local tool (the
//     REPL's ":tool NAME JSON"); no LLM;
//   - "@name message" delegates message to the directory agent name; no
//     LLM, and an unknown name is rejected with the names it knows;
//   - any other text is routed by the LLM, which sees the local tools and
//     the directory; an agent it names that the directory lacks falls back
//     to the local llm tool, as does a tool it names that does not exist;
//     when it picks human_input, the user is asked (input-required) and
//     the request is routed again with the answer (at most 3 times).
//
// The decision is recorded in the task's metadata and memo under
// [RouteMetadataKey] (the Temporal UI shows it on the run's page) and as a
// progress message. A delegated task is followed by Task.CallAgent: remote
// questions become this task's questions (when the LLM routed the task, it
// first decides whether it can answer a question itself), and the remote
// artifacts are copied into this task.
func Router() *workflows.Agent {
	return &workflows.Agent{
		Name:        "router",
		Description: "Routes each request to a local tool or to a known remote A2A agent, or rejects it with the reason. Send \"@name message\" to address a directory agent directly.",
		Skills: []a2a.AgentSkill{{
			ID:          "route",
			Name:        "Route",
			Description: "Runs a request locally (echo, llm, summarize, clock, calculator, list_agents, remember_agent; human_input asks you when the request is unclear), delegates it to a remote agent from the directory, or rejects it.",
			Tags:        []string{"routing", "delegation", "a2a"},
			Examples:    []string{"@travel Book a flight to Lisbon", "What time is it in Tokyo?", "Remember the agent at http://localhost:4201"},
		}},
		Handle: route,
	}
}

// RouteMetadataKey is the task metadata (and memo) key of the router's
// decision, a [Route].
const RouteMetadataKey = "a2aflow.route"

// Route is the router's decision for a task.
type Route struct {
	// Decision is LOCAL, REMOTE or REJECT.
	Decision string `json:"decision"`
	// Tool and Params are the local tool and its arguments (LOCAL).
	Tool   string `json:"tool,omitempty"`
	Params string `json:"params,omitempty"`
	// Agent is the directory agent delegated to (REMOTE).
	Agent string `json:"agent,omitempty"`
	// Reason explains the decision; for REJECT it is shown to the user.
	Reason string `json:"reason,omitempty"`
	// By says who decided: "tool call", "@mention", "llm" or "fallback".
	By string `json:"by"`
}

// Route decisions.
const (
	RouteLocal  = "LOCAL"
	RouteRemote = "REMOTE"
	RouteReject = "REJECT"
)

// RoutingDecision is what the router asks the LLM for.
type RoutingDecision struct {
	Decision string `json:"decision" jsonschema:"enum=LOCAL,enum=REMOTE,enum=REJECT,description=LOCAL to run a local tool, REMOTE to delegate to a known agent, REJECT for a request that is inappropriate or impossible" validate:"required,oneof=LOCAL REMOTE REJECT"`
	Tool     string `json:"tool" jsonschema:"description=For LOCAL: the local tool's name; else empty"`
	Params   string `json:"params" jsonschema:"description=For LOCAL: the tool's arguments as a JSON object such as {\"text\":\"hi\"}; else empty"`
	Agent    string `json:"agent" jsonschema:"description=For REMOTE: the agent's name in the directory; else empty"`
	Reason   string `json:"reason" jsonschema:"description=One sentence on why; for REJECT the reason the user will read" validate:"required"`
}

// FollowUpDecision is what the router asks the LLM when a remote agent it
// delegated to asks a question.
type FollowUpDecision struct {
	Decision string `json:"decision" jsonschema:"enum=HANDLE_DIRECTLY,enum=NEED_HUMAN_INPUT,description=HANDLE_DIRECTLY when the original request already holds the answer, NEED_HUMAN_INPUT otherwise" validate:"required,oneof=HANDLE_DIRECTLY NEED_HUMAN_INPUT"`
	Answer   string `json:"answer" jsonschema:"description=For HANDLE_DIRECTLY: the answer to send to the agent; else empty"`
}

// ToolCallRequest is the data part that runs a local tool directly.
type ToolCallRequest struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params,omitempty"`
}

// RouterNotConfiguredMessage is the router's answer to free text without an LLM.
const RouterNotConfiguredMessage = "The router needs a large language model to route free text, and none is configured " +
	"(see the assistant's configuration: OPENAI_BASE_URL or ANTHROPIC_API_KEY). Without one, address an agent of the directory " +
	"directly with \"@name your message\", or run a local tool with a data part {\"tool\": NAME, \"params\": {...}}."

const routerSystemPrompt = `You are the router of an A2A agent. For each request choose exactly one route:
LOCAL: run one of the local tools with arguments (a JSON object matching its parameters);
REMOTE: delegate the whole request to one of the known remote agents, by its name, when its description fits better than any local tool;
REJECT: refuse a request that is inappropriate, harmful or impossible, with the reason.
Prefer LOCAL for simple questions the llm tool can answer. When the request lacks a detail you cannot guess, choose LOCAL with the human_input tool and a question for the user.
Only name agents and tools from the lists given.`

// routerTools returns the router's local tools by name. Activity tools are
// registered on the worker (RouterTools); the others run in the workflow.
func routerTools(t *workflows.Task) map[string]llm.Tool {
	tools := map[string]llm.Tool{}
	all := append([]llm.Tool{echoTool(), llmTool(t), summarizeTool(t), humanInputTool(t)}, llmagents.ActivityTools()...)
	all = append(all, llmagents.DirectoryTools(nil)...)
	for _, tool := range all {
		tools[tool.Name()] = tool
	}
	return tools
}

// EchoInput is the argument of the echo tool.
type EchoInput struct {
	Text string `json:"text" jsonschema:"description=The text to echo"`
}

func echoTool() llm.Tool {
	return llm.WorkflowTool("echo", "Answers with the given text.", func(ctx workflow.Context, in EchoInput) (EchoInput, error) {
		return in, nil
	})
}

// PromptInput is the argument of the llm tool.
type PromptInput struct {
	Prompt string `json:"prompt" jsonschema:"description=The request for the language model" validate:"required"`
}

func llmTool(t *workflows.Task) llm.Tool {
	return llm.WorkflowTool("llm", "Answers a request with the language model: questions, writing, explanations.",
		func(ctx workflow.Context, in PromptInput) (string, error) {
			return llm.Worker().Run(ctx, workflows.NewThread(userText(in.Prompt)), llm.WithUsage(t))
		})
}

// SummarizeInput is the argument of the summarize tool.
type SummarizeInput struct {
	Text string `json:"text" jsonschema:"description=The text to summarize" validate:"required"`
}

func summarizeTool(t *workflows.Task) llm.Tool {
	return llm.WorkflowTool("summarize", "Summarizes a text in a few sentences with the language model.",
		func(ctx workflow.Context, in SummarizeInput) (string, error) {
			return llm.Worker().Run(ctx, workflows.NewThread(userText(in.Text)),
				llm.WithSystem("Summarize the user's text in at most three sentences."), llm.WithUsage(t))
		})
}

// HumanInputTool is the name of the tool that asks the user (the seed's
// human_input): chosen by the router's LLM, the answer is added to the
// request and the request is routed again.
const HumanInputTool = "human_input"

// maxClarifications bounds how often the router asks the user before it
// answers with the llm tool.
const maxClarifications = 3

// HumanInputInput is the argument of the human_input tool.
type HumanInputInput struct {
	Question string `json:"question" jsonschema:"description=The question for the user, about what the request leaves unclear" validate:"required,max=2000"`
}

func humanInputTool(t *workflows.Task) llm.Tool {
	return llm.WorkflowTool(HumanInputTool, "Asks the user a question when the request is unclear or lacks a detail no tool or agent can guess; the request is then routed again with the answer.",
		func(ctx workflow.Context, in HumanInputInput) (string, error) {
			answer, err := t.Ask(ctx, HumanInputTool, in.Question)
			if err != nil {
				return "", err
			}
			return workflows.MessageText(answer), nil
		})
}

func userText(text string) *a2a.Message {
	return &a2a.Message{Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
}

func route(ctx workflow.Context, t *workflows.Task) error {
	tools := routerTools(t)
	if call, ok := toolCallIn(t.Message()); ok {
		return runTool(ctx, t, tools, Route{Decision: RouteLocal, Tool: call.Tool, Params: string(call.Params), By: "tool call"})
	}
	text := strings.TrimSpace(t.Text())
	if text == "" {
		return workflows.Reject("nothing to route: send text, \"@agent message\", or a data part {\"tool\": NAME, \"params\": {...}}")
	}
	if name, rest, ok := mention(text); ok && !isURL(name) && mentionNoDirectory(ctx) {
		return followMention(ctx, t, tools, name, rest)
	}
	known, err := directory(ctx, tools)
	if err != nil {
		return err
	}
	if name, rest, ok := mention(text); ok {
		r := Route{Decision: RouteRemote, Agent: name, Reason: "addressed with @" + name, By: "@mention"}
		if !known.has(name) {
			r = Route{Decision: RouteReject, Agent: name, By: "@mention",
				Reason: fmt.Sprintf("no agent named %q in the directory; known agents: %s", name, known.names())}
		} else if rest == "" {
			r = Route{Decision: RouteReject, Agent: name, By: "@mention", Reason: "nothing to send to " + name}
		}
		return follow(ctx, t, tools, r, rest, nil)
	}

	request := text
	for asked := 0; ; asked++ {
		r, err := decide(ctx, t, tools, known, request)
		if err != nil {
			return err
		}
		if r.Decision == RouteLocal && r.Tool == HumanInputTool {
			if asked == maxClarifications {
				r = llmFallback(request, fmt.Sprintf("asked the user %d times already; answered with the llm tool", asked))
			} else {
				// The seed's human_input: ask, add the answer, route again.
				record(ctx, t, r)
				answer, err := tools[HumanInputTool].Call(ctx, r.Params)
				if llm.IsInvalidArguments(err) {
					r = llmFallback(request, fmt.Sprintf("the model's question for the user was invalid (%v); answered with the llm tool", err))
				} else if err != nil {
					return err
				} else {
					var in HumanInputInput
					_ = json.Unmarshal([]byte(r.Params), &in) //workflowcheck:ignore decoding JSON is deterministic
					request += fmt.Sprintf("\n\nClarification asked: %s\nUser's answer: %s", in.Question, answer)
					continue
				}
			}
		}
		return follow(ctx, t, tools, r, request, followUpAnswer(t, request))
	}
}

// mentionNoDirectoryChange is the workflow.GetVersion change ID of
// "@name message" without a directory read first: tasks that started
// before it read the directory, then delegated; from version 1 the send
// activity finds name in the directory itself (as the task's owner sees
// it, as list_agents does) and the directory is read only when it has no
// such agent, for the names it has. One activity and one workflow task
// fewer per delegation (BenchmarkDelegation).
const mentionNoDirectoryChange = "router-mention-no-directory-read"

// mentionNoDirectory is whether "@name message" skips the directory read
// (mentionNoDirectoryChange). A task started with merged writes was started
// after the change, by a build that has it: it asks no GetVersion, whose
// marker and TemporalChangeVersion upsert would be two of a delegation's
// events (its histories recorded with the marker replay: the SDK skips a
// version marker no GetVersion asks for). Tasks started otherwise (the
// Temporal UI, histories recorded before merged writes) ask as before.
func mentionNoDirectory(ctx workflow.Context) bool {
	return wire.RecordingOf(ctx).MergedWrites() || workflow.GetVersion(ctx, mentionNoDirectoryChange, workflow.DefaultVersion, 1) == 1
}

// followMention delegates rest to the directory agent name ("@name rest"),
// rejecting the task when there is nothing to send or the directory has no
// such agent, as route did with the directory read first.
func followMention(ctx workflow.Context, t *workflows.Task, tools map[string]llm.Tool, name, rest string) error {
	if rest == "" {
		return follow(ctx, t, tools, Route{Decision: RouteReject, Agent: name, By: "@mention", Reason: "nothing to send to " + name}, rest, nil)
	}
	err := follow(ctx, t, tools, Route{Decision: RouteRemote, Agent: name, Reason: "addressed with @" + name, By: "@mention"}, rest, nil)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeUnknownRemoteAgent {
		return err
	}
	known, err := directory(ctx, tools)
	if err != nil {
		return err
	}
	r := Route{Decision: RouteReject, Agent: name, By: "@mention",
		Reason: fmt.Sprintf("no agent named %q in the directory; known agents: %s", name, known.names())}
	return follow(ctx, t, tools, r, rest, nil)
}

// isURL reports whether an @mention names a URL, which the send activity
// would call as is: such a name is checked against the directory first.
func isURL(name string) bool {
	return strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://")
}

// decide asks the LLM for the route of request, with its fallbacks: an
// agent the directory does not know, or a tool that does not exist, is
// answered by the llm tool.
func decide(ctx workflow.Context, t *workflows.Task, tools map[string]llm.Tool, known knownAgents, request string) (Route, error) {
	d, err := llm.Function[RoutingDecision](ctx, routingPrompt(tools, known, request), llm.WithSystem(routerSystemPrompt), llm.WithUsage(t))
	if llm.IsNotConfigured(err) {
		return Route{}, errors.New(RouterNotConfiguredMessage)
	}
	if err != nil {
		return Route{}, err
	}
	r := Route{Decision: d.Decision, Tool: d.Tool, Params: d.Params, Agent: d.Agent, Reason: d.Reason, By: "llm"}
	switch {
	case r.Decision == RouteRemote && !known.has(r.Agent):
		r = llmFallback(request, fmt.Sprintf("the model chose agent %q, which the directory does not know; answered locally", d.Agent))
	case r.Decision == RouteLocal && tools[r.Tool].Name() == "":
		r = llmFallback(request, fmt.Sprintf("the model chose tool %q, which does not exist; answered with the llm tool", d.Tool))
	}
	return r, nil
}

// llmFallback routes request to the local llm tool for reason.
func llmFallback(request, reason string) Route {
	params, _ := json.Marshal(PromptInput{Prompt: request}) //workflowcheck:ignore marshalling a struct is deterministic
	return Route{Decision: RouteLocal, Tool: "llm", Params: string(params), Reason: reason, By: "fallback"}
}

// follow records the decision r and carries it out.
func follow(ctx workflow.Context, t *workflows.Task, tools map[string]llm.Tool, r Route, message string, answer func(workflow.Context, *a2a.Message) (*a2a.Message, error)) error {
	switch r.Decision {
	case RouteLocal:
		return runTool(ctx, t, tools, r)
	case RouteReject:
		record(ctx, t, r)
		return workflows.Reject(r.Reason)
	}
	record(ctx, t, r)
	res, err := t.CallAgent(ctx, workflows.CallRequest{Agent: r.Agent, Text: message, Answer: answer})
	var remoteErr *workflows.RemoteTaskError
	if errors.As(err, &remoteErr) && remoteErr.State == a2a.TaskStateRejected {
		return workflows.Reject(fmt.Sprintf("%s rejected the task: %s", r.Agent, remoteErr.Reason))
	}
	if err != nil {
		return err
	}
	reply := res.Text()
	if reply == "" {
		reply = fmt.Sprintf("%s completed the task.", r.Agent)
	}
	t.Reply(reply)
	return nil
}

// runTool runs the local tool of r and replies with its result; a JSON
// object result is also the task's "result" artifact.
func runTool(ctx workflow.Context, t *workflows.Task, tools map[string]llm.Tool, r Route) error {
	tool, ok := tools[r.Tool]
	if !ok {
		r.Decision, r.Reason = RouteReject, fmt.Sprintf("unknown tool %q; local tools: %s", r.Tool, strings.Join(sortedNames(tools), ", "))
		record(ctx, t, r)
		return workflows.Reject(r.Reason)
	}
	record(ctx, t, r)
	out, err := tool.Call(ctx, r.Params)
	if err != nil {
		if llm.IsInvalidArguments(err) {
			return workflows.Reject(fmt.Sprintf("tool %s: %v", r.Tool, err))
		}
		if llm.IsNotConfigured(err) {
			return errors.New(RouterNotConfiguredMessage)
		}
		return err
	}
	t.Reply(out)
	var obj map[string]any
	err = json.Unmarshal([]byte(out), &obj) //workflowcheck:ignore decoding JSON is deterministic
	if err == nil && obj != nil {
		t.Artifact(ctx, workflows.DataArtifact("result", obj))
	}
	return nil
}

// record keeps the decision in the task (metadata, memo) and tells subscribers.
func record(ctx workflow.Context, t *workflows.Task, r Route) {
	t.SetMetadata(ctx, RouteMetadataKey, r)
	switch r.Decision {
	case RouteLocal:
		t.Progress(ctx, fmt.Sprintf("Route: LOCAL, tool %s (%s).", r.Tool, r.By))
	case RouteRemote:
		t.Progress(ctx, fmt.Sprintf("Route: REMOTE, agent %s (%s).", r.Agent, r.By))
	default:
		t.Progress(ctx, fmt.Sprintf("Route: REJECT (%s): %s", r.By, r.Reason))
	}
}

// followUpAnswer lets the LLM answer a remote agent's question when the
// original request already holds the answer (the seed's HANDLE_DIRECTLY);
// otherwise (nil) the question goes to the user.
func followUpAnswer(t *workflows.Task, request string) func(workflow.Context, *a2a.Message) (*a2a.Message, error) {
	return func(ctx workflow.Context, question *a2a.Message) (*a2a.Message, error) {
		prompt := fmt.Sprintf("The user asked: %q\nThe agent we delegated to now asks: %q\n"+
			"If the user's request already contains the answer, answer for them (HANDLE_DIRECTLY); otherwise the user must answer (NEED_HUMAN_INPUT).",
			request, workflows.MessageText(question))
		d, err := llm.Function[FollowUpDecision](ctx, prompt, llm.WithUsage(t))
		if err != nil || d.Decision != "HANDLE_DIRECTLY" || strings.TrimSpace(d.Answer) == "" {
			return nil, nil // the user answers
		}
		t.Progress(ctx, "Answered the remote agent's question from the request: "+d.Answer)
		return userText(d.Answer), nil
	}
}

// toolCallIn finds a {"tool": NAME, "params": {...}} data part in m.
func toolCallIn(m *a2a.Message) (ToolCallRequest, bool) {
	if m == nil {
		return ToolCallRequest{}, false
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		data, ok := p.Data().(map[string]any)
		if !ok {
			continue
		}
		name, ok := data["tool"].(string)
		if !ok || name == "" {
			continue
		}
		call := ToolCallRequest{Tool: name}
		if params, ok := data["params"]; ok && params != nil {
			raw, err := json.Marshal(params) //workflowcheck:ignore encoding/json sorts map keys: the same text on every replay
			if err != nil {
				continue
			}
			call.Params = raw
		}
		return call, true
	}
	return ToolCallRequest{}, false
}

// mention splits "@name rest" into name and rest.
func mention(text string) (name, rest string, ok bool) {
	if !strings.HasPrefix(text, "@") {
		return "", "", false
	}
	name, rest, _ = strings.Cut(text[1:], " ")
	if name == "" {
		return "", "", false
	}
	return name, strings.TrimSpace(rest), true
}

// knownAgents is the directory as list_agents returned it.
type knownAgents []activities.AgentView

func (k knownAgents) has(name string) bool {
	for _, a := range k {
		if a.Name == name {
			return true
		}
	}
	return false
}

func (k knownAgents) names() string {
	if len(k) == 0 {
		return "none (add one with: a2aflow agents add URL)"
	}
	var names []string
	for _, a := range k {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// directory reads the agent directory through the list_agents tool (an
// activity, so the replay sees the same list).
func directory(ctx workflow.Context, tools map[string]llm.Tool) (knownAgents, error) {
	out, err := tools["list_agents"].Call(ctx, "{}")
	if err != nil {
		return nil, fmt.Errorf("read the agent directory: %w", err)
	}
	var list activities.ListAgentsOutput
	err = json.Unmarshal([]byte(out), &list) //workflowcheck:ignore decoding JSON is deterministic
	if err != nil {
		return nil, fmt.Errorf("read the agent directory: %w", err)
	}
	return list.Agents, nil
}

// routingPrompt shows the model the request, the local tools and the agents.
func routingPrompt(tools map[string]llm.Tool, known knownAgents, request string) string {
	lines := []string{"Local tools:"}
	for _, name := range sortedNames(tools) {
		spec := tools[name].Spec()
		lines = append(lines, fmt.Sprintf("- %s: %s Parameters (JSON schema): %s", name, spec.Description, spec.Parameters))
	}
	lines = append(lines, "", "Known remote agents:")
	if len(known) == 0 {
		lines = append(lines, "(none)")
	}
	for _, a := range known {
		line := fmt.Sprintf("- %s: %s", a.Name, a.Description)
		if len(a.Skills) > 0 {
			line += fmt.Sprintf(" Skills: %s.", strings.Join(a.Skills, ", "))
		}
		lines = append(lines, line)
	}
	lines = append(lines, "", "Request:", request)
	return strings.Join(lines, "\n")
}

func sortedNames(tools map[string]llm.Tool) []string {
	return slices.Sorted(maps.Keys(tools)) //workflowcheck:ignore sorted: the same order on every replay
}
