// Package taskservice implements the task methods of A2A for one agent on
// Temporal (TaskService): every task is a TaskWorkflow execution whose ID
// is the task ID. A message is an Update (Update-with-Start for a new
// task), a read a Query, a list a visibility query; streams follow a
// task's numbered events (one follower per task per process), woken by
// hints when the worker runs in the same process. Every binding serves the
// service, and /mcp calls it; it also holds what they share about an
// agent: its card (AgentCard), the checks of a message, the negotiation of
// its extensions, and forks.
package taskservice
