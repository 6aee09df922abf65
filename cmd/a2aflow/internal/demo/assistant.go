package demo

import (
	_ "time/tzdata" // the clock tool knows every IANA time zone, also in a minimal container

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/llmagents"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
)

// Assistant returns the assistant agent: an LLM tool loop (llm.Worker) over
// the conversation of the task's context, with real tools: a clock and a
// calculator (activities), the task's own artifacts, and ask_user, which asks
// the user a question and waits for the answer as long as it takes.
//
// Without a configured LLM the task fails with a message saying how to
// configure one: failed rather than completed, so a client (or a calling
// agent) does not take the explanation for an answer. Every other agent
// works as before.
func Assistant() *workflows.Agent {
	return &workflows.Agent{
		Name:        "assistant",
		Description: "A general assistant on a large language model, with a clock, a calculator, the task's artifacts, and questions back to you when it needs to know more.",
		Skills: []a2a.AgentSkill{{
			ID:          "chat",
			Name:        "Chat",
			Description: "Answers questions, computes exactly with a calculator, tells the time in any time zone, asks you when something is unclear, and saves documents as artifacts.",
			Tags:        []string{"llm", "assistant"},
			Examples:    []string{"What is 17.5% of 2,340?", "What time is it in Tokyo?", "Write a packing list for a weekend in Lisbon and save it."},
		}},
		// Files are read by the model: images and PDFs as the provider's
		// image and document content, text files as text.
		InputModes: []string{"text/plain", "application/json", "text/*", "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"},
		Handle:     assist,
	}
}

// assistantSystemPrompt tells the model what its tools are for.
const assistantSystemPrompt = `You are the a2aflow assistant. Answer concisely.
Use the calculator for any arithmetic instead of computing in your head, and the clock for the date or time.
When you need information only the user has, ask with ask_user.
When the user asks for a document (a list, a draft, a summary to keep), save it with save_artifact and say so.
Use list_artifacts to see what this task has saved already.
list_agents shows the remote A2A agents you know; call_agent delegates a request to one of them (its questions reach the user), and remember_agent adds an agent by URL.`

func assist(ctx workflow.Context, t *workflows.Task) error {
	thread, err := t.ContextThread(ctx)
	if err != nil {
		// The context's earlier tasks are a help, not a need: answer from this task.
		workflow.GetLogger(ctx).Warn("context thread unavailable, using the task's own", "error", err)
		thread = t.Thread()
	}
	tools := append([]llm.Tool{llm.AskUser(t), llmagents.ListArtifactsTool(t), llmagents.SaveArtifactTool(t), llmagents.CallAgentTool(t)}, llmagents.ActivityTools()...)
	tools = append(tools, llmagents.DirectoryTools(nil)...)
	return llmagents.ReplyFromLLM(ctx, t, thread, tools, llm.WithSystem(assistantSystemPrompt), llm.WithUsage(t))
}
