package activities

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/llm"
)

// Limit is a rate and concurrency limit on the LLM calls to one provider's
// model: the config file's [[llm-limits]] sections. Every worker process
// that shares the database (the models store) shares the limit.
type Limit struct {
	// Provider is "openai", "anthropic" or "gemini" (the provider's Name).
	Provider string
	// Model is the model as the call requests it (or the provider's
	// default); a name ending in "*" is a prefix.
	Model string
	// Rate is how many calls may start per second (0: no rate limit).
	Rate float64
	// Concurrency is how many calls may run at once (0: no limit).
	Concurrency int
	// PerTenant applies the limit to each tenant (the task's owner)
	// separately instead of to all of them together.
	PerTenant bool
}

// Validate checks l.
func (l Limit) Validate() error {
	switch {
	case l.Provider == "":
		return fmt.Errorf("provider is required")
	case l.Model == "":
		return fmt.Errorf("model is required")
	case l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0):
		return fmt.Errorf("rate must be a finite number of calls per second, not negative")
	case l.Concurrency < 0:
		return fmt.Errorf("concurrency must not be negative")
	case l.Rate == 0 && l.Concurrency == 0:
		return fmt.Errorf("set rate, concurrency or both")
	}
	return nil
}

// Limits are the limits of a worker. A call is limited by the entry of its
// provider and model: the exact model, else the longest prefix entry.
type Limits []Limit

func (ls Limits) find(provider, model string) (Limit, bool) {
	for _, l := range ls {
		if l.Provider == provider && l.Model == model {
			return l, true
		}
	}
	best, found := Limit{}, false
	for _, l := range ls {
		prefix, ok := strings.CutSuffix(l.Model, "*")
		if !ok || l.Provider != provider || !strings.HasPrefix(model, prefix) ||
			(found && len(prefix) <= len(strings.TrimSuffix(best.Model, "*"))) {
			continue
		}
		best, found = l, true
	}
	return best, found
}

// LeaseStore keeps the slots of the limits: *models.Store.
type LeaseStore interface {
	AcquireLLMLease(ctx context.Context, key string, lim models.LeaseLimit, ttl time.Duration, now time.Time) (string, time.Duration, error)
	RenewLLMLease(ctx context.Context, id string, ttl time.Duration, now time.Time) (bool, error)
	ReleaseLLMLease(ctx context.Context, id string, now time.Time) error
}

// How leases are held. A lease lives leaseTTL unless renewed, and is
// renewed every leaseRenew while its call runs: a killed worker's slot is
// free within leaseTTL. A waiting call tries again within
// maxSlotPoll (jittered), heartbeating each time.
var (
	leaseTTL    = 30 * time.Second
	leaseRenew  = 10 * time.Second
	maxSlotPoll = 250 * time.Millisecond
	// slotWaitPart: a call waits for a slot for 1/slotWaitPart of the
	// time its attempt has left.
	slotWaitPart time.Duration = 2
)

// limitKey names the slots a call takes: the limit's provider and model
// entry, and the tenant when the limit is per tenant.
func limitKey(l Limit, tenant string) string {
	key := l.Provider + "/" + l.Model
	if l.PerTenant {
		key += "\x00" + tenant
	}
	return key
}

// acquire waits for a slot of the limit of provider's model, if it has
// one, and returns the function that frees it. It waits inside the
// activity, heartbeating, so that waiting burns no attempt of the retry
// policy; only after half of the attempt's time is gone does it give up
// with a retryable LLMLimited error, leaving the other half for the call.
func (a *LLM) acquire(ctx context.Context, provider, model, tenant string) (func(), error) {
	l, ok := a.Limits.find(provider, model)
	if !ok || a.Leases == nil {
		return func() {}, nil
	}
	key := limitKey(l, tenant)
	lim := models.LeaseLimit{Concurrency: l.Concurrency, Rate: l.Rate}
	inActivity := activity.IsActivity(ctx)
	var giveUp time.Time
	if inActivity {
		if dl := activity.GetInfo(ctx).Deadline; !dl.IsZero() {
			giveUp = time.Now().Add(time.Until(dl) / slotWaitPart)
		}
	}
	waited := time.Now()
	for {
		id, wait, err := a.Leases.AcquireLLMLease(ctx, key, lim, leaseTTL, time.Now())
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			// A database that is busy or briefly away: try again, as for
			// a full limit; the limit is never skipped.
			if inActivity {
				activity.GetLogger(ctx).Warn("LLM call limit: cannot take a slot yet", "error", err)
			}
		}
		if id != "" {
			if inActivity && time.Since(waited) > time.Second {
				activity.GetLogger(ctx).Debug("LLM call limit: slot taken", "limit", l.Provider+"/"+l.Model, "waited", time.Since(waited))
			}
			return a.hold(ctx, id), nil
		}
		if inActivity {
			activity.RecordHeartbeat(ctx)
		}
		if !giveUp.IsZero() && time.Now().After(giveUp) {
			return nil, temporal.NewApplicationErrorWithOptions(
				fmt.Sprintf("LLM call limit %s/%s (rate %g/s, concurrency %d) had no free slot for %s", l.Provider, l.Model,
					l.Rate, l.Concurrency, time.Since(waited).Round(time.Second)),
				llm.ErrTypeLimited, temporal.ApplicationErrorOptions{NextRetryDelay: time.Second})
		}
		if wait <= 0 || wait > maxSlotPoll {
			wait = maxSlotPoll
		}
		wait = wait/2 + rand.N(wait/2+1) // spread the waiters out
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// hold renews lease id while the call runs, and returns the function that
// ends the call's hold: it stops renewing and releases the slot.
func (a *LLM) hold(ctx context.Context, id string) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(leaseRenew)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if _, err := a.Leases.RenewLLMLease(context.WithoutCancel(ctx), id, leaseTTL, time.Now()); err != nil && activity.IsActivity(ctx) {
					activity.GetLogger(ctx).Warn("LLM call limit: lease not renewed", "error", err)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := a.Leases.ReleaseLLMLease(rctx, id, time.Now()); err != nil && activity.IsActivity(ctx) {
			// The lease expires by itself within leaseTTL.
			activity.GetLogger(ctx).Warn("LLM call limit: slot not released", "error", err)
		}
	}
}
