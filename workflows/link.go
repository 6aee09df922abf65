package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine/link"
)

// The task workflow is the machinery under the author API of this package,
// and not part of that API: a2aflow's worker, its replayer and its tests
// reach it through package internal/engine, which gets it here.
func init() {
	link.NewTaskWorkflow = func(agents any, o link.Options) any {
		return newTaskWorkflow(agents.([]*Agent), o).run
	}
	link.NewForkInterceptor = func() any { return newForkInterceptor() }
	link.MergedWrites = func(ctx workflow.Context) bool {
		t, ok := TaskFrom(ctx)
		return ok && t.r.merged
	}
	link.LocalModelCalls = func(ctx workflow.Context) bool {
		t, ok := TaskFrom(ctx)
		return ok && t.r.localCalls(ctx)
	}
}
