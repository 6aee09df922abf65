package workflows

import (
	"go.temporal.io/sdk/interceptor"

	"github.com/a2aflow/a2aflow/internal/link"
)

// The task workflow is the machinery under the author API of this package,
// and not part of that API: a2aflow's worker, its replayer and its tests
// reach it through package internal/engine, which takes it from package
// internal/link, where it is handed over here.
func init() {
	link.Hand(link.TaskWorkflow[*Agent]{
		New: func(agents []*Agent, o link.Options) any {
			return newTaskWorkflow(agents, o).run
		},
		ForkInterceptor: func() interceptor.WorkerInterceptor { return newTaskInterceptor() },
	})
}
