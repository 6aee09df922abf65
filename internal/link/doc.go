// Package link is where package workflows hands its task workflow to
// package engine, with the options a worker runs it with.
//
// The task workflow and the Task an agent's handler gets are one piece of
// code over one state, so they live together in package workflows,
// unexported; package engine, above workflows, registers that workflow on
// workers and replayers. Go has no friend packages: package workflows hands
// the workflow over here ([Hand]) when it is initialised, typed by its
// Agent, and package engine takes it back ([Handed]), so that it never
// becomes public API. This is the only such hand-over: what package llm and
// agents' code ask of a running task (its recording level) is on the
// workflow context, through an interface of package wire.
package link
