// Package wire is the contract between a2aflow's API and its workers, which
// meet only through Temporal: the names of the task workflow, its updates,
// queries and activities; their inputs and results; the error types the
// workflow's validators refuse with; the search attributes and metadata keys
// a task carries; and the waitpoint tokens both sides check.
//
// Everything here is in running tasks' histories or crosses between
// processes of different versions during a rolling upgrade: a name never
// changes, and a field is only added (with omitempty where an older reader
// must not see it). Agent authors never use it; package workflows is their
// API.
package wire
