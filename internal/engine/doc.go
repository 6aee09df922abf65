// Package engine runs the task workflow of package workflows for
// a2aflow's worker, its replayer and the tests: the agents' registry, the
// task workflow and the agents' own activities registered on a worker, the
// worker's options and interceptors, and the replay of recorded histories.
//
// The task workflow itself lives in package workflows, beside the Task an
// agent's handler gets (they are one piece of code over one state), and is
// not part of its public API: package workflows hands it over through
// package internal/link, under both packages.
package engine
