// Package demo holds the demo agents that cmd/a2aflow serves. They are built
// on the public API like any program's agents (their activities, such as
// travel's BookTrip and issues' ListIssues, in Agent.Activities; the travel
// agent's bookings table created by its own activity), and are the examples
// to copy when writing an agent:
//
//   - travel: fills three slots (destination, date, travellers) by asking the
//     user, books the trip through an activity and completes with a JSON
//     booking artifact. No LLM.
//   - echo: answers with the text it was sent; used by the benchmarks.
//   - expenses: files an expense claim; asks the finance group to approve
//     claims over a limit, escalates to managers on timeout, and completes
//     with a receipt recording the decision (human approval, durable).
//   - assistant: an LLM tool loop (llm.Worker) with a clock, a calculator,
//     the task's artifacts and ask_user; needs a configured LLM.
//   - report: writes a Markdown report artifact; a follow-up task with
//     referenceTaskIds refines it into the next version. No LLM.
//   - router: runs a request with a local tool, delegates it to a remote A2A
//     agent of the directory ("@name message", or the LLM's choice), or
//     rejects it with the reason; delegation is durable (Task.CallAgent).
//   - issues: lists a GitHub repository's open issues after asking for a
//     token (auth-required); the token never enters the task's history.
//   - changes: requests a production change and waits for the
//     change-management system's ticket, a waitpoint completed from outside
//     (Task.WaitFor) over REST with its token or by a message.
//
// Each agent is a [workflows.Agent]: its card fields plus a handler written as
// ordinary Temporal workflow code.
package demo

import (
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/workflows"
)

// All returns the built-in agents, travel first (the default agent served at
// the root URL): what cmd/a2aflow passes to a2aflow.Main.
func All() []*workflows.Agent {
	return []*workflows.Agent{Travel(), Echo(), Expenses(ExpensesConfig{}), Assistant(), Report(), Router(), Issues(), Changes(ChangesConfig{})}
}

// Builtin returns the registry of the built-in agents of All.
func Builtin() *engine.Registry {
	reg, err := engine.NewRegistry(All()...)
	if err != nil {
		panic(err) // the built-in set is fixed; a failure is a programming error
	}
	return reg
}
