package activities

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/llm"
)

// countingProvider answers every call, counting them.
type countingProvider struct{ calls atomic.Int64 }

func (p *countingProvider) Name() string  { return "openai" }
func (p *countingProvider) Model() string { return "default-model" }
func (p *countingProvider) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	p.calls.Add(1)
	return llm.Response{Text: "ok", Model: req.Model}, nil
}

func openStore(t *testing.T) *models.Store {
	t.Helper()
	s, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func completeChat(t *testing.T, a *LLM, model string) error {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(llm.ActivityCompleteChat, llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	return err
}

// TestCompleteChatWaitsForASlot: a call whose model's only slot is held by
// a holder that died (its lease is never renewed nor released) waits in
// the activity until that lease expires, then runs and frees its slot; a
// model the limit does not match is not held up.
func TestCompleteChatWaitsForASlot(t *testing.T) {
	store := openStore(t)
	p := &countingProvider{}
	a := &LLM{Provider: p, Limits: Limits{{Provider: "openai", Model: "limited*", Concurrency: 1}}, Leases: store}
	ctx := context.Background()
	taken := time.Now()
	if id, _, err := store.AcquireLLMLease(ctx, limitKey(a.Limits[0], ""), models.LeaseLimit{Concurrency: 1}, 3*time.Second, taken); err != nil || id == "" {
		t.Fatalf("the dead holder's lease: %q %v", id, err)
	}
	began := time.Now()
	if err := completeChat(t, a, "other-model"); err != nil || time.Since(began) > 2*time.Second {
		t.Fatalf("an unlimited model: %v after %v", err, time.Since(began))
	}
	if err := completeChat(t, a, "limited-1"); err != nil {
		t.Fatal(err)
	}
	if since := time.Since(taken); since < 3*time.Second {
		t.Errorf("the call ended %v after the dead holder took its lease, before the lease expired (3 s)", since)
	}
	if p.calls.Load() != 2 {
		t.Errorf("%d calls, want 2", p.calls.Load())
	}
	// The call released its slot: the next one runs at once.
	began = time.Now()
	if err := completeChat(t, a, "limited-2"); err != nil || time.Since(began) > 2*time.Second {
		t.Errorf("the next call: %v after %v, want at once", err, time.Since(began))
	}
}

// TestCompleteChatGivesUpWaiting: a call that finds no slot for its share
// of the attempt's time fails with a retryable LLMLimited error with a
// next-retry delay, and never reaches the provider; a per-tenant limit
// keeps tenants apart.
func TestCompleteChatGivesUpWaiting(t *testing.T) {
	defer func(old time.Duration) { slotWaitPart = old }(slotWaitPart)
	slotWaitPart = 600 // the test environment's 10 minutes: 1 s
	store := openStore(t)
	p := &countingProvider{}
	lim := Limit{Provider: "openai", Model: "limited", Concurrency: 1, PerTenant: true}
	a := &LLM{Provider: p, Limits: Limits{lim}, Leases: store}
	if id, _, err := store.AcquireLLMLease(context.Background(), limitKey(lim, ""), models.LeaseLimit{Concurrency: 1}, time.Minute, time.Now()); err != nil || id == "" {
		t.Fatalf("the holder's lease: %q %v", id, err)
	}
	err := completeChat(t, a, "limited")
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != llm.ErrTypeLimited || appErr.NonRetryable() || appErr.NextRetryDelay() != time.Second {
		t.Fatalf("err = %v, want a retryable %s error with a 1 s next-retry delay", err, llm.ErrTypeLimited)
	}
	if p.calls.Load() != 0 {
		t.Errorf("the provider got %d calls", p.calls.Load())
	}
	// Another tenant's slot is its own: bob's call takes it at once, while
	// the anonymous tenant's would still wait.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	release, err := a.acquire(ctx, "openai", "limited", "bob")
	if err != nil {
		t.Fatalf("bob's call waited for the anonymous tenant's slot: %v", err)
	}
	defer release()
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	if _, err := a.acquire(short, "openai", "limited", ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the anonymous tenant's second call: %v, want it still waiting", err)
	}
}

func TestLimitsFind(t *testing.T) {
	ls := Limits{
		{Provider: "openai", Model: "gpt-4o-mini", Rate: 1},
		{Provider: "openai", Model: "gpt-4o*", Rate: 2},
		{Provider: "openai", Model: "gpt-*", Rate: 3},
		{Provider: "anthropic", Model: "claude*", Rate: 4},
	}
	for _, tt := range []struct {
		provider, model string
		want            float64
	}{
		{"openai", "gpt-4o-mini", 1}, {"openai", "gpt-4o-2024", 2}, {"openai", "gpt-5", 3},
		{"anthropic", "claude-x", 4}, {"anthropic", "gpt-4o", 0}, {"openai", "o3", 0},
	} {
		l, ok := ls.find(tt.provider, tt.model)
		if ok != (tt.want != 0) || l.Rate != tt.want {
			t.Errorf("find(%s, %s) = %+v %v, want rate %v", tt.provider, tt.model, l, ok, tt.want)
		}
	}
	for _, bad := range []Limit{{Model: "m", Rate: 1}, {Provider: "openai", Rate: 1}, {Provider: "openai", Model: "m"},
		{Provider: "openai", Model: "m", Rate: -1}, {Provider: "openai", Model: "m", Concurrency: -1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
