// Package workflows is the API agent authors program against: an [Agent]
// (its card, its handler, its activities) and the [Task] its handler drives.
// The task workflow itself, its wire types and its registration are
// a2aflow's internals; a program serves its agents with a2aflow.Main.
//
// # The one rule: a task IS its workflow
//
// Every A2A task runs as one task workflow execution whose workflow ID is
// the task ID. The workflow holds the task's status, message history and
// artifacts; there is no second task table. The HTTP API reads a task with a
// query and writes it with updates (a message, a cancel, an approval
// decision), whose validators refuse bad writes before they touch history. A
// new task is created by Update-with-Start, so a retried SendMessage never
// starts a second workflow.
//
// # Writing an agent
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
// The runtime also offers RequireAuth and RequireCredential (auth-required;
// a credential is sealed, never in history), Approve (human approval: groups,
// quorum, deadlines, escalation), WaitFor (a waitpoint another system
// completes), CallAgent (a remote A2A agent, durably), Progress and Reply
// (agent messages),
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
//
// # Activities
//
// An agent lists the activities its handler calls in [Agent.Activities]; the
// worker registers them with no other step: a function under its Go name,
// each exported method of a struct pointer under the method's name,
// [Activity] under a name of your choice, an llm.Tool under its tool
// activity's name. Call them by that name, best a constant. An agent's
// activity may not take the name of one of a2aflow's own.
//
// # Changing an agent
//
// A task parked for days resumes on whatever code the workers run then, by
// replaying its history: the handler must make the same calls in the same
// order up to the point the task reached. Adding, removing or reordering an
// Ask, an Approve, an activity, a timer or a CallAgent, or renaming an
// activity, breaks the tasks parked past that point (a non-determinism
// error; the task stays where it was until a worker with compatible code
// picks it up). Guard such a change with workflow.GetVersion: tasks that
// passed the point keep the old path, new ones take the new path.
//
//	v := workflow.GetVersion(ctx, "credit-check", workflow.DefaultVersion, 1)
//	if v == 1 { // tasks started after the deploy
//		if err := workflow.ExecuteActivity(ctx, "CheckCredit", order).Get(ctx, nil); err != nil {
//			return err
//		}
//	}
//	approved, err := t.Approve(ctx, req) // as before, for every task
//
// Once no task runs the old path any more, the branch can go (keep the
// GetVersion call with workflow.DefaultVersion raised to 1). Before a deploy,
// replay the recorded histories of real tasks against the new code:
// workflowstest.NewReplayer in a test over fixtures, or `a2aflow replay --running` against
// the cluster; a change that breaks a parked task fails there, not in
// production. With Worker Versioning (--deployment) a task stays on the
// build that started it ([Pinned], the default), so only [AutoUpgrade]
// agents need their changes to replay.
package workflows
