package engine

import (
	"time"

	"go.temporal.io/sdk/worker"
)

// WorkerOptions returns the worker options the task workflow needs. Its
// deadlock detection allows DeadlockDetectionTimeout instead of the SDK's 1
// second: a task's artifacts may hold up to [MaxArtifactBytes], and turning
// tens of MiB into JSON (the workflow's result, its continue-as-new input)
// takes seconds inside the workflow's coroutine on a busy machine, which
// the SDK would otherwise take for a deadlock and retry forever.
func WorkerOptions() worker.Options {
	return worker.Options{
		DeadlockDetectionTimeout:         DeadlockDetectionTimeout,
		MaxConcurrentWorkflowTaskPollers: WorkflowTaskPollers,
		MaxConcurrentActivityTaskPollers: ActivityTaskPollers,
	}
}

// WorkflowTaskPollers and ActivityTaskPollers are the long polls of
// [WorkerOptions] (the SDK's default is 2 of each). A workflow task that
// finds no poll waiting on the server is written to the task queue's backlog
// in the database and read back: with the SDK's 2 (one of them on the sticky
// queue), 8 concurrent new tasks sent more than half of their first workflow
// tasks through that backlog on the embedded SQLite server, and none with 16.
// An idle poll is one open gRPC call.
const (
	WorkflowTaskPollers = 16
	ActivityTaskPollers = 8
)

// DeadlockDetectionTimeout is the deadlock detection of [WorkerOptions].
const DeadlockDetectionTimeout = 30 * time.Second
