package temporalserver

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

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
