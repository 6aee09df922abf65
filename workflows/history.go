package workflows

import (
	"fmt"
	"slices"
	"time"

	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// A task's message history grows with every turn, but a workflow's state and
// every query that returns it must not: the workflow keeps the recent
// messages (at most 2×HistoryPageSize) and moves older ones, HistoryPageSize
// at a time, into pages in the payload store, written by the
// [ActivityStoreHistoryPage] activity. The task keeps only the pages' keys,
// so GetTask with historyLength N reads the recent messages and as many
// pages as N needs: its cost follows N, not the task's age.

// historyState is the task's message history: pages in the store, then the
// recent messages in the workflow.
type historyState struct {
	recent  []*a2a.Message
	pages   []wire.HistoryPage
	storing bool `carry:"-"` // a page is being written
}

// total is how many messages the task's history holds.
func (h *historyState) total() int {
	n := len(h.recent)
	if len(h.pages) > 0 {
		last := h.pages[len(h.pages)-1]
		n += last.First + last.Count
	}
	return n
}

// record appends m to the task's history and, past twice a page of recent
// messages, starts writing the oldest page to the store.
func (r *run) record(ctx workflow.Context, m *a2a.Message) {
	r.history.recent = append(r.history.recent, m)
	if !r.recording.LongTasks() || r.history.storing || len(r.history.recent) < 2*wire.HistoryPageSize {
		return
	}
	r.history.storing = true
	page := wire.StoreHistoryPageInput{TaskID: r.task.ID, First: r.history.total() - len(r.history.recent),
		Messages: slices.Clone(r.history.recent[:wire.HistoryPageSize])}
	// Pages are written whatever happens to the task, also while it ends.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
		Summary:             fmt.Sprintf("store messages %d-%d of the history", page.First, page.First+len(page.Messages)-1),
	})
	workflow.Go(actx, func(ctx workflow.Context) {
		defer func() { r.history.storing = false }()
		var stored wire.HistoryPage
		if err := workflow.ExecuteActivity(ctx, wire.ActivityStoreHistoryPage, page).Get(ctx, &stored); err != nil {
			r.logger.Warn("history page not stored; the messages stay in the workflow", "first", page.First, "error", err)
			return
		}
		r.history.pages = append(r.history.pages, stored)
		r.history.recent = slices.Clone(r.history.recent[len(page.Messages):])
	})
}

// historySnapshot returns the last historyLength messages (nil: all): the
// recent ones from the workflow and the pages that hold the rest.
func (r *run) historySnapshot(historyLength *int) ([]*a2a.Message, []wire.HistoryPage) {
	recent := wire.LastMessages(r.history.recent, historyLength)
	if historyLength != nil && *historyLength <= len(r.history.recent) {
		return recent, nil
	}
	need := -1 // all pages
	if historyLength != nil {
		need = *historyLength - len(r.history.recent)
	}
	var pages []wire.HistoryPage
	for i := len(r.history.pages) - 1; i >= 0 && need != 0; i-- {
		pages = append(pages, r.history.pages[i])
		if need > 0 {
			need = max(0, need-r.history.pages[i].Count)
		}
	}
	slices.Reverse(pages)
	return recent, pages
}
