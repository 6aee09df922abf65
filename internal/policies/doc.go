// Package policies judges approval policies: Cedar policies
// (github.com/cedar-policy/cedar-go), kept as data in versions
// (models.PolicyVersion), that say of a tool call or a skill's Approve step
// whether it may go on without a person, must stop (and why), or needs
// approvals (whose, how many, by when).
//
// The model (Schema): the principal is the Caller the task acts for, in
// its Tenant; the actions are callTool (an LLM tool loop's call: the tool's
// name, source, arguments and annotations in the context) and approveStep
// (a skill's Approve: its step name, title and groups); the resource is the
// Task, in its Agent. A permit allows; a forbid denies, with its
// @reason; a permit annotated @groups requires an approval of those groups
// (@quorum, @deadline, @on_deadline, @escalate_to, @escalate_deadline,
// @title).
//
// Policies come in layers, each a Scope with one text: the server's, a
// tenant's, an agent's and a tool's. A request is judged by the policies
// of every layer that applies to it, together, and the rule of which wins
// is Cedar's own with one addition: any forbid wins (deny); otherwise a
// permit that requires approval beats one that allows (each approval
// required is asked in turn, the server's first); otherwise a permit
// allows; and a request no policy speaks of is left to the gate (none).
// A layer narrows the policies' reach and who may change them; it cannot
// loosen what another layer forbids or requires.
//
// Compile parses and validates a scope's text against Schema (refusing it
// with the line and reason of each problem); Decide judges a request
// against compiled documents; an Engine does both over the stored versions,
// for the worker's DecidePolicy local activity (workerenv.DecidePolicy).
package policies
