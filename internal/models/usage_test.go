package models

import (
	"context"
	"testing"
)

// TestLLMUsageTotals: a call recorded again (a retried activity) replaces
// its row; totals group by each key and filter by owner.
func TestLLMUsageTotals(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testLLMUsageTotals(t, b) })
}

func testLLMUsageTotals(t *testing.T, b backend) {
	s, _ := openNew(t, b)
	ctx := context.Background()
	rec := func(task, run, act, owner, agent string, in, out int64, cost float64) {
		t.Helper()
		if err := s.RecordLLMUsage(ctx, LLMUsage{TaskID: task, RunID: run, ActivityID: act, Owner: owner, Agent: agent,
			ContextID: "ctx-" + owner, Provider: "openai", Model: "m", InputTokens: in, OutputTokens: out, CostUSD: cost}); err != nil {
			t.Fatal(err)
		}
	}
	rec("t1", "r1", "1", "alice", "chat", 100, 10, 0.5)
	rec("t1", "r1", "1", "alice", "chat", 120, 12, 0.6) // the retry's answer: replaces
	rec("t1", "r1", "2", "alice", "chat", 100, 10, 0.5)
	rec("t1", "r2", "1", "alice", "chat", 100, 10, 0.5) // the continued run: another call
	rec("t2", "r1", "1", "bob", "chat", 1000, 100, 5)
	rec("t3", "r1", "1", "bob", "plan", 10, 1, 0.25)

	byOwner, err := s.UsageTotals(ctx, UsageQuery{By: UsageByOwner})
	if err != nil {
		t.Fatal(err)
	}
	if len(byOwner) != 2 || byOwner[0].Key != "bob" || byOwner[0].Calls != 2 || byOwner[0].CostUSD != 5.25 ||
		byOwner[1].Key != "alice" || byOwner[1].Calls != 3 || byOwner[1].InputTokens != 320 || byOwner[1].CostUSD != 1.6 {
		t.Errorf("by owner = %+v", byOwner)
	}
	alice, err := s.UsageTotals(ctx, UsageQuery{By: UsageByAgent, Owner: "alice", OwnerSet: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(alice) != 1 || alice[0].Key != "chat" || alice[0].Calls != 3 {
		t.Errorf("alice's by agent = %+v", alice)
	}
	byTask, err := s.UsageTotals(ctx, UsageQuery{By: UsageByTask, Agent: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	if len(byTask) != 2 || byTask[0].Key != "t2" || byTask[1].Key != "t1" {
		t.Errorf("chat's by task = %+v", byTask)
	}
	if _, err := s.UsageTotals(ctx, UsageQuery{By: "nonsense"}); err == nil {
		t.Error("an unknown grouping was taken")
	}
	for _, by := range UsageBys {
		if _, err := s.UsageTotals(ctx, UsageQuery{By: by}); err != nil {
			t.Errorf("by %s: %v", by, err)
		}
	}
}
