package tests

import (
	"context"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestPolicyRequestsRetention: serve deletes the judged requests older
// than --policy-requests-retention when it starts, and keeps the younger
// ones, on its own database.
func TestPolicyRequestsRetention(t *testing.T) {
	dir := t.TempDir()
	dsn := cmdutil.DatabaseDSN(dir, "")
	store, err := models.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var rs []models.PolicyRequest
	for i, age := range []time.Duration{45 * 24 * time.Hour, 31 * 24 * time.Hour, 29 * 24 * time.Hour, time.Hour} {
		rs = append(rs, models.PolicyRequest{RunID: "seeded", ActivityID: string(rune('a' + i)), Agent: "payables", Action: "callTool",
			Name: "pay_invoice", Input: "{}", Effect: "allow", CreatedAt: now.Add(-age)})
	}
	if err := store.RecordPolicyRequests(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	_ = store.Close()

	harness.StartServe(t, dir, "--policy-requests-retention", "720h")
	store, err = models.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var left []models.PolicyRequest
	waitFor(t, 20*time.Second, func() bool {
		left, err = store.PolicyRequests(context.Background(), time.Time{}, "", false, 0)
		return err == nil && len(left) == 2
	})
	if left[0].ActivityID != "c" || left[1].ActivityID != "d" {
		t.Errorf("kept %+v; want the requests of 29 days and an hour ago", left)
	}
}
