package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// HistoryPages writes the pages of long task histories to the payload store
// (see workflows/history.go). Its method is the activity
// wire.ActivityStoreHistoryPage.
type HistoryPages struct {
	// Store is the payload store the API reads the pages from; required.
	Store blobstore.Store
}

// StoreHistoryPage writes one page of a task's older messages as a JSON array
// of A2A messages. Its key is derived from the task and the page's position,
// so a retry, or the next run of a task that continued as new meanwhile,
// writes the same bytes under the same key.
func (a *HistoryPages) StoreHistoryPage(ctx context.Context, in wire.StoreHistoryPageInput) (wire.HistoryPage, error) {
	if in.TaskID == "" || len(in.Messages) == 0 || in.First < 0 {
		return wire.HistoryPage{}, temporal.NewNonRetryableApplicationError("a history page needs a task, a position and messages", ErrTypeInvalidInput, nil)
	}
	if a.Store == nil {
		return wire.HistoryPage{}, temporal.NewNonRetryableApplicationError("no payload store is configured on this worker", ErrTypeInvalidInput, nil)
	}
	data, err := json.Marshal(in.Messages)
	if err != nil {
		return wire.HistoryPage{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("encode history page: %v", err), ErrTypeInvalidInput, nil)
	}
	key := wire.HistoryPageKey(activity.GetInfo(ctx).Namespace, in.TaskID, in.First)
	if err := a.Store.Put(ctx, key, data); err != nil {
		return wire.HistoryPage{}, fmt.Errorf("store history page %s in %s: %w", key, a.Store.Describe(), err)
	}
	return wire.HistoryPage{Key: key, First: in.First, Count: len(in.Messages)}, nil
}
