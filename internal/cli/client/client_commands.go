package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
)

// clientHelp documents the agent and the exit codes of the client commands.
var clientHelp = `
The agent is --agent, else $` + envAgent + `, else the local a2aflow server:
$` + cmdutil.EnvAPIURL + `, else http://localhost:8080 (the port of $` + cmdutil.EnvHTTPAddr + `).

Exit codes: 0 ok (task completed or still working), 2 the task waits for
input or authentication, 3 the task failed, was rejected or canceled, 4 the
agent answered with an A2A error (task not found, not cancelable,
unsupported...), 1 any other error.`

// Commands returns the client commands, which work against any A2A agent
// (1.0 or 0.3, JSON-RPC, HTTP+JSON or gRPC), not only a2aflow, and the REPL.
func Commands() []*cobra.Command {
	return []*cobra.Command{newCardCmd(), newSendCmd(), newGetCmd(), newListCmd(), newCancelCmd(), newForkCmd(), newRetryCmd(), newSubscribeCmd(), newPushCmd(), newREPLCmd()}
}

func newCardCmd() *cobra.Command {
	f := &Flags{}
	var extended bool
	var verify bool
	cmd := &cobra.Command{
		Use:   "card [URL]",
		Short: "Fetch and show the agent card of an A2A agent",
		Long: "Fetch and show the agent card (A2A 1.0 or 0.3) at URL/.well-known/agent-card.json;\n" +
			"URL defaults to --agent ($" + envAgent + ", else the local a2aflow server).\n" + clientHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.agent, f.agentFlag = args[0], nil
			}
			ctx, cancel := f.Context(cmd)
			defer cancel()
			card, err := resolveCard(ctx, f.httpClient(), f.agent)
			if err != nil {
				return f.noAgent(err)
			}
			if verify {
				// The signature against the key set its jku names.
				h, err := cardsign.VerifyAt(ctx, f.httpClient(), f.agent, card)
				if err != nil {
					return fmt.Errorf("the card of %s does not verify: %w", f.agent, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "Signature verified: %s key %s from %s\n", h.Alg, h.Kid, h.JKU)
			}
			if extended {
				if card, err = extendedCard(ctx, f, f.agent, card); err != nil {
					return err
				}
			}
			return f.show(cmd.OutOrStdout(), card, func(w io.Writer) error { printCard(w, card); return nil })
		},
	}
	f.Bind(cmd, true)
	cmd.Flags().BoolVar(&verify, "verify", false, "check the card's JWS signature against the key set its jku names (on the card's own origin); fail if it does not verify")
	cmd.Flags().BoolVar(&extended, "extended", false, "show the extended card the agent gives an authenticated caller (GetExtendedAgentCard), with the credential flags")
	return cmd
}

func printCard(w io.Writer, card *a2a.AgentCard) {
	fmt.Fprintf(w, "%s %s\n", card.Name, card.Version)
	if card.Description != "" {
		fmt.Fprintf(w, "  %s\n", card.Description)
	}
	fmt.Fprintf(w, "Streaming: %t  Push notifications: %t\n", card.Capabilities.Streaming, card.Capabilities.PushNotifications)
	fmt.Fprintln(w, "Interfaces:")
	for _, i := range card.SupportedInterfaces {
		fmt.Fprintf(w, "  %s %s %s\n", i.ProtocolBinding, i.ProtocolVersion, i.URL)
	}
	if len(card.SecuritySchemes) > 0 {
		var names []string
		for name := range card.SecuritySchemes {
			names = append(names, string(name))
		}
		fmt.Fprintf(w, "Security: %s\n", strings.Join(names, ", "))
	}
	if len(card.Skills) > 0 {
		fmt.Fprintln(w, "Skills:")
		for _, s := range card.Skills {
			fmt.Fprintf(w, "  %s: %s\n", s.ID, s.Description)
		}
	}
}

// pendingApproval is the approval ID a waiting task's status message names
// (its data part {"approvalId": ...}), or "".
func pendingApproval(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if v, ok := d.Value.(map[string]any); ok {
				if id, ok := v["approvalId"].(string); ok {
					return id
				}
			}
		}
	}
	return ""
}

// printApprovalHint says how to decide the approval id a task waits for:
// the approve and reject commands against the agent's server, or the
// server's inbox page.
func printApprovalHint(w io.Writer, id, agentURL string) {
	server := agentServer(agentURL)
	fmt.Fprintf(w, "It waits for approval %s. Decide with: %s approve %s --as NAME --api %s (or %s reject %s ...), or in the inbox: %s/inbox\n",
		id, cmdutil.ProgName(), id, server, cmdutil.ProgName(), id, server)
}

// agentServer is the a2aflow server an agent URL belongs to: the URL
// without its /agents/NAME path.
func agentServer(agentURL string) string {
	base := strings.TrimRight(agentURL, "/")
	if i := strings.Index(base, "/agents/"); i >= 0 {
		base = base[:i]
	}
	return base
}

// printTask shows a task for a human: its state, the agent's last word (the
// question when it waits) and its artifacts.
func printTask(w io.Writer, task *a2a.Task, agentURL string) {
	fmt.Fprintf(w, "Task %s (context %s): %s\n", task.ID, task.ContextID, stateName(task.Status.State))
	text := messageText(task.Status.Message)
	switch task.Status.State {
	case a2a.TaskStateInputRequired:
		fmt.Fprintf(w, "The agent needs input: %s\n", text)
		if id := pendingApproval(task.Status.Message); id != "" {
			printApprovalHint(w, id, agentURL)
		} else {
			fmt.Fprintf(w, "Answer with: %s send --agent %s --task %s \"...\"\n", cmdutil.ProgName(), agentURL, task.ID)
		}
	case a2a.TaskStateAuthRequired:
		fmt.Fprintf(w, "The agent needs authentication: %s\n", text)
		fmt.Fprintf(w, "Answer with: %s send --agent %s --task %s --credential (it reads the credential without echo)\n", cmdutil.ProgName(), agentURL, task.ID)
	default:
		if text != "" {
			fmt.Fprintf(w, "Agent: %s\n", text)
		}
	}
	for _, a := range task.Artifacts {
		fmt.Fprintf(w, "Artifact %s: %s\n", a.Name, partsText(a.Parts))
	}
}

// printHistory shows a task's messages, oldest first.
func printHistory(w io.Writer, task *a2a.Task) {
	for _, m := range task.History {
		role := strings.ToLower(strings.TrimPrefix(string(m.Role), "ROLE_"))
		fmt.Fprintf(w, "  %s: %s\n", role, messageText(m))
	}
}

func newSendCmd() *cobra.Command {
	f := &Flags{}
	var taskID, contextID string
	var stream, credential bool
	var parts messageFlags // message_parts.go
	cmd := &cobra.Command{
		Use:   "send [--agent URL] [--task ID] [--context ID] [--stream] [--file PATH|URI] [--data JSON] [--metadata JSON] [--reference-task ID] [--credential] [MESSAGE]",
		Short: "Send a message to an A2A agent; with --task, answer a waiting task",
		Long: "Send a message (text, files, data) to an A2A agent and show the task it starts or continues.\n" +
			"--file, --data and --reference-task repeat; a file the agent's card does not take is refused by the agent.\n" +
			"--credential answers a task that waits for authentication: the credential is read from stdin, without echo\n" +
			"when it is a terminal, so that it is in neither the command line nor the shell's history.\n" + clientHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := sendText(cmd, args, credential, taskID)
			if err != nil {
				return err
			}
			msg, err := parts.message(text)
			if err != nil {
				return err
			}
			msg.TaskID = a2a.TaskID(taskID)
			msg.ContextID = contextID
			req := &a2a.SendMessageRequest{Message: msg}
			return f.withAgent(cmd, func(ctx context.Context, c *a2aclient.Client, card *a2a.AgentCard) error {
				out := cmd.OutOrStdout()
				if stream {
					if !card.Capabilities.Streaming {
						return &cmdutil.ExitError{Code: exitA2AError, Err: fmt.Errorf("send --stream: agent %s does not offer streaming (its card says so)", card.Name)}
					}
					return followEvents(out, f, "send", c.SendStreamingMessage(ctx, req))
				}
				res, err := c.SendMessage(ctx, req)
				if err != nil {
					return a2aError("send", err)
				}
				switch r := res.(type) {
				case *a2a.Task:
					return f.showTask(out, r, false)
				case *a2a.Message:
					return f.show(out, r, func(w io.Writer) error { fmt.Fprintf(w, "Agent: %s\n", messageText(r)); return nil })
				default:
					return fmt.Errorf("send: unexpected result %T", res)
				}
			})
		},
	}
	cmd.Flags().StringVar(&taskID, "task", "", "task to continue, e.g. to answer its question")
	cmd.Flags().StringVar(&contextID, "context", "", "conversation (context ID) the message belongs to")
	cmd.Flags().BoolVar(&stream, "stream", false, "stream the task's events as they happen (SendStreamingMessage)")
	cmd.Flags().BoolVar(&credential, "credential", false, "answer the --task waiting for authentication with a credential read from stdin (without echo on a terminal)")
	parts.bind(cmd)
	f.Bind(cmd, true)
	return cmd
}

// sendText is the text send sends: its MESSAGE argument, or with
// --credential the credential read from stdin.
func sendText(cmd *cobra.Command, args []string, credential bool, taskID string) (string, error) {
	text := ""
	if len(args) == 1 {
		text = args[0]
	}
	if !credential {
		return text, nil
	}
	if text != "" {
		return "", fmt.Errorf("send --credential reads the credential from stdin: give no MESSAGE")
	}
	if taskID == "" {
		return "", fmt.Errorf("send --credential answers a task that waits for authentication: give its --task")
	}
	return readCredential(cmd.InOrStdin(), cmd.ErrOrStderr(), "Credential (not shown): ")
}

// followEvents prints a stream's events as they arrive (text lines, or one
// JSON object per line with --json) and returns the exit code of the last
// task state seen.
func followEvents(out io.Writer, f *Flags, op string, events func(func(a2a.Event, error) bool)) error {
	state := a2a.TaskStateUnspecified
	var taskID a2a.TaskID
	approvalID := "" // the approval the task waits for, from its status message
	enc := json.NewEncoder(out)
	live := &livePrinter{out: out, prefix: "[answer] "}
	defer live.end()
	for ev, err := range events {
		if err != nil {
			return a2aError(op, err)
		}
		if f.json {
			if err := enc.Encode(eventJSON(ev)); err != nil {
				return err
			}
		}
		switch e := ev.(type) {
		case *a2a.Task:
			state, taskID = e.Status.State, e.ID
			approvalID = pendingApproval(e.Status.Message)
			if !f.json {
				fmt.Fprintf(out, "[task] %s (context %s): %s\n", e.ID, e.ContextID, stateName(e.Status.State))
				if t := messageText(e.Status.Message); t != "" {
					fmt.Fprintf(out, "  %s\n", t)
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			state, taskID = e.Status.State, e.TaskID
			approvalID = pendingApproval(e.Status.Message)
			if !f.json {
				shown := live.shown(messageText(e.Status.Message))
				live.end()
				line := "[status] " + stateName(e.Status.State)
				if t := messageText(e.Status.Message); t != "" && !shown {
					line += ": " + t
				}
				fmt.Fprintln(out, line)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if !f.json && isLive(e) {
				live.chunk(e) // the model's answer as it is written
				break
			}
			if !f.json && e.Artifact != nil {
				live.end()
				fmt.Fprintf(out, "[artifact] %s: %s\n", e.Artifact.Name, partsText(e.Artifact.Parts))
			}
		case *a2a.Message:
			if !f.json {
				fmt.Fprintf(out, "[message] %s\n", messageText(e))
			}
		}
	}
	if !f.json {
		switch state {
		case a2a.TaskStateInputRequired:
			if approvalID != "" {
				printApprovalHint(out, approvalID, f.agent)
				break
			}
			fmt.Fprintf(out, "The agent needs input. Answer with: %s send --agent %s --task %s \"...\"\n", cmdutil.ProgName(), f.agent, taskID)
		case a2a.TaskStateAuthRequired:
			fmt.Fprintf(out, "The agent needs authentication. Answer with: %s send --agent %s --task %s --credential (it reads the credential without echo)\n", cmdutil.ProgName(), f.agent, taskID)
		}
	}
	return cmdutil.Exit(stateExitCode(state))
}

// eventJSON wraps an event with its kind, so a script reading the JSON
// lines knows what each one is.
func eventJSON(ev a2a.Event) any {
	kind := "unknown"
	switch ev.(type) {
	case *a2a.Task:
		kind = "task"
	case *a2a.TaskStatusUpdateEvent:
		kind = "status-update"
	case *a2a.TaskArtifactUpdateEvent:
		kind = "artifact-update"
	case *a2a.Message:
		kind = "message"
	}
	return map[string]any{"kind": kind, "event": ev}
}

func newGetCmd() *cobra.Command {
	f := &Flags{}
	history := -1
	cmd := &cobra.Command{
		Use:   "get [--agent URL] TASK_ID",
		Short: "Show a task of an A2A agent",
		Long:  "Show a task: state, question, artifacts and (with --history) its messages.\n" + clientHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &a2a.GetTaskRequest{ID: a2a.TaskID(args[0])}
			if history >= 0 {
				req.HistoryLength = &history
			}
			return f.withAgent(cmd, func(ctx context.Context, c *a2aclient.Client, _ *a2a.AgentCard) error {
				task, err := c.GetTask(ctx, req)
				if err != nil {
					return a2aError("get "+args[0], err)
				}
				return f.showTask(cmd.OutOrStdout(), task, history != 0)
			})
		},
	}
	cmd.Flags().IntVar(&history, "history", -1, "how many of the latest messages to include; -1 lets the agent decide")
	f.Bind(cmd, true)
	return cmd
}

func newListCmd() *cobra.Command {
	f := &Flags{}
	var contextID, state string
	var pageSize int
	cmd := &cobra.Command{
		Use:   "list [--agent URL] [--context ID] [--state S]",
		Short: "List the tasks of an A2A agent",
		Long:  "List tasks (ListTasks), newest first, optionally of one context or in one state.\n" + clientHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := parseState(state)
			if err != nil {
				return err
			}
			req := &a2a.ListTasksRequest{ContextID: contextID, Status: st, PageSize: pageSize}
			return f.withAgent(cmd, func(ctx context.Context, c *a2aclient.Client, _ *a2a.AgentCard) error {
				resp, err := c.ListTasks(ctx, req)
				if err != nil {
					return a2aError("list", err)
				}
				return f.show(cmd.OutOrStdout(), resp, func(w io.Writer) error { return printTasks(w, resp) })
			})
		},
	}
	cmd.Flags().StringVar(&contextID, "context", "", "only tasks of this context")
	cmd.Flags().StringVar(&state, "state", "", "only tasks in this state (input-required, completed...)")
	cmd.Flags().IntVar(&pageSize, "page-size", 0, "at most this many tasks (1-100); 0 lets the agent decide")
	f.Bind(cmd, true)
	return cmd
}

// printTasks shows a page of tasks as a table.
func printTasks(out io.Writer, resp *a2a.ListTasksResponse) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TASK\tCONTEXT\tSTATE\tUPDATED\tMESSAGE")
	for _, t := range resp.Tasks {
		updated := ""
		if t.Status.Timestamp != nil {
			updated = t.Status.Timestamp.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.ContextID, stateName(t.Status.State), updated, messageText(t.Status.Message))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if resp.NextPageToken != "" {
		fmt.Fprintln(out, "(more tasks: narrow with --context or --state, or raise --page-size)")
	}
	return nil
}

func newCancelCmd() *cobra.Command {
	f := &Flags{}
	cmd := &cobra.Command{
		Use:   "cancel [--agent URL] TASK_ID",
		Short: "Cancel a task of an A2A agent",
		Long:  "Cancel a task; exit 0 once it is canceled.\n" + clientHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withAgent(cmd, func(ctx context.Context, c *a2aclient.Client, _ *a2a.AgentCard) error {
				task, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(args[0])})
				if err != nil {
					return a2aError("cancel "+args[0], err)
				}
				// Exit 0 once canceled, not the canceled state's 3.
				return f.show(cmd.OutOrStdout(), task, func(w io.Writer) error { printTask(w, task, f.agent); return nil })
			})
		},
	}
	f.Bind(cmd, true)
	return cmd
}

func newSubscribeCmd() *cobra.Command {
	f := &Flags{}
	cmd := &cobra.Command{
		Use:   "subscribe [--agent URL] TASK_ID",
		Short: "Follow a task's events live until it ends or waits",
		Long:  "Subscribe to a task (SubscribeToTask) and print its events as they arrive.\n" + clientHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withAgent(cmd, func(ctx context.Context, c *a2aclient.Client, _ *a2a.AgentCard) error {
				return followEvents(cmd.OutOrStdout(), f, "subscribe "+args[0],
					c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(args[0])}))
			})
		},
	}
	f.Bind(cmd, true)
	return cmd
}
