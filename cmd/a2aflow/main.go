// Command a2aflow serves A2A agents whose tasks run as Temporal workflows.
//
//	a2aflow serve      all in one: embedded Temporal + Web UI, worker, HTTP API
//	a2aflow temporal   the embedded Temporal server and Web UI alone
//	a2aflow api        the stateless HTTP API against any Temporal frontend
//	a2aflow worker     the workflow and activity worker against any Temporal frontend
//
// Every flag has an A2AFLOW_* environment fallback; `a2aflow help serve`
// lists them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		os.Exit(reportError(os.Stderr, err))
	}
}
