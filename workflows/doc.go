// Package workflows holds the A2A task workflow and the skill runtime that
// agent authors program against.
//
// # The one rule: a task IS its workflow
//
// Every A2A task runs as one [TaskWorkflow] execution whose workflow ID is the
// task ID. The workflow holds the task's status, message history and
// artifacts; there is no second task table. The HTTP API reads a task with the
// [QueryGetTask] query and writes it with the [UpdateSendMessage] and
// [UpdateCancelTask] updates, whose validators refuse bad writes before they
// touch history. A new task is created by Update-with-Start, so a retried
// SendMessage never starts a second workflow.
//
// # Writing a skill
//
// An [Agent] is its card (name, description, skills) plus a [Handler]: plain,
// deterministic Temporal workflow code that receives a [*Task]. Waiting for the
// user is a function call that returns the answer, durable across restarts:
//
//	func bookFlight(ctx workflow.Context, t *workflows.Task) error {
//		dest, err := t.Ask(ctx, "destination", "Where to?")
//		if err != nil {
//			return err
//		}
//		t.Artifact(ctx, workflows.JSONArtifact("booking", map[string]string{"to": workflows.MessageText(dest)}))
//		return nil
//	}
//
// The runtime also offers RequireAuth (auth-required), Approve (human
// approval, see approval.go), Progress and Reply (agent messages),
// ArtifactChunk (streamed artifacts), Thread and ContextThread (the
// conversation, with the context's earlier tasks) and Interruptible (work a
// new message may interrupt, with the InterruptWork policy).
//
// Returning nil completes the task, returning [Reject] ends it rejected, any
// other error ends it failed with the error's message, and a cancel request
// cancels ctx so the task ends canceled. Side effects (LLM calls, HTTP, a
// database) belong in activities called with workflow.ExecuteActivity, so
// Temporal retries them and the Web UI shows them.
//
// The rules of Temporal workflow code apply to handlers: use workflow.Now,
// workflow.Sleep and workflow.Go, never time.Now, goroutines or I/O, and do
// not range over maps. `workflowcheck ./...` runs in CI to keep it so.
package workflows
