// Package namespaces prepares a Temporal namespace for a2aflow: the custom
// search attributes the task workflow upserts, and how long closed tasks are
// kept. The embedded server and the api and worker processes (against any
// Temporal cluster) call [Ensure] at start; it is idempotent.
package namespaces

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Options says what a namespace needs.
type Options struct {
	// SearchAttributes are the custom search attributes to add when missing.
	SearchAttributes map[string]enums.IndexedValueType
	// Retention is how long the namespace keeps closed workflows (finished
	// tasks stay readable with GetTask that long). Zero leaves the
	// namespace's retention alone, as a process that does not own the
	// cluster should.
	Retention time.Duration
	// Logger receives what was changed; default slog.Default().
	Logger *slog.Logger
}

// Ensure adds the missing search attributes and sets the retention of
// namespace, as opts asks.
func Ensure(ctx context.Context, c client.Client, name string, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := registerSearchAttributes(ctx, c, name, opts.SearchAttributes, opts.Logger); err != nil {
		return err
	}
	if opts.Retention > 0 {
		return ensureRetention(ctx, c, name, opts.Retention, opts.Logger)
	}
	return nil
}

// ensureRetention updates the namespace's retention when it differs.
func ensureRetention(ctx context.Context, c client.Client, name string, retention time.Duration, logger *slog.Logger) error {
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: name})
	if err != nil {
		return fmt.Errorf("describe namespace %q: %w", name, err)
	}
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() == retention {
		return nil
	}
	if _, err := c.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: name,
		Config:    &namespace.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(retention)},
	}); err != nil {
		return fmt.Errorf("set retention of namespace %q to %s: %w", name, retention, err)
	}
	logger.Info("set Temporal namespace retention", "namespace", name, "retention", retention)
	return nil
}

// namespaceRefreshWait is how long a search attribute added through the
// operator service takes to reach every service: each one caches namespaces
// and reloads them every system.namespaceCacheRefreshInterval (2 s by
// default), plus a margin.
const namespaceRefreshWait = 3 * time.Second

// registerSearchAttributes adds the search attributes of want that the
// namespace lacks. The attributes passed when the namespace is created only
// apply to a new namespace, so this is how attributes introduced by a later
// version reach an existing data folder. An attribute registered with another
// type is an error: the server cannot change it, and workflows setting it
// would fail later in a confusing way.
func registerSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enums.IndexedValueType, logger *slog.Logger) error {
	if len(want) == 0 {
		return nil
	}
	list, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enums.IndexedValueType{}
	for name, typ := range want {
		have, ok := list.GetCustomAttributes()[name]
		if !ok {
			missing[name] = typ
			continue
		}
		if have != typ {
			return fmt.Errorf("search attribute %q of namespace %q has type %v, want %v", name, namespace, have, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("add search attributes %v to namespace %q: %w", slices.Sorted(maps.Keys(missing)), namespace, err)
	}
	logger.Info("added Temporal search attributes", "namespace", namespace, "names", slices.Sorted(maps.Keys(missing)))

	// Wait until the services see the new attributes, so that callers can
	// start workflows using them as soon as Start returns.
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for new search attributes: %w", ctx.Err())
	case <-time.After(namespaceRefreshWait):
	}
	return nil
}
