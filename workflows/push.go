package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/a2aflow/a2aflow/internal/link"
	"github.com/a2aflow/a2aflow/internal/wire"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/webhook"
)

// pushState is a task's webhooks and how far each one got.
type pushState struct {
	r    *run             `carry:"-"`
	opts link.PushOptions `carry:"-"` // the worker's

	subs      []*pushSub // live configs, oldest first (a slice: ranging stays deterministic)
	unstarted []*pushSub `carry:"-"` // configs whose delivery coroutine the dispatcher has yet to start; restore starts every enabled one
}

// pushSub is one webhook of the task. One coroutine per webhook delivers
// its events one at a time, in order, so a later state never overtakes an
// earlier one at the same webhook, and a slow webhook delays no other.
type pushSub struct {
	config   *a2a.PushConfig
	after    int64 // events up to this number are delivered (or given up)
	deleted  bool  `carry:"-"` // deleted configs leave subs
	disabled bool  // failed for GiveUpAfter; creating the config again resumes it
	// generation: an A2A 1.1 config, whose deliveries carry the generation
	// (wire.CreatePushConfigInput.Generation)
	generation bool
	cancel     workflow.CancelFunc `carry:"-"`
}

// registerPush sets the push handlers and starts the coroutine that starts
// each webhook's delivery coroutine. None of them blocks the skill.
func (u *pushState) register(ctx workflow.Context) error {
	r := u.r
	if err := workflow.SetQueryHandler(ctx, wire.QueryPushConfigs, func(in wire.PushConfigsInput) ([]*a2a.PushConfig, error) {
		if err := r.checkAccess(in.Agent, in.Owner); err != nil {
			return nil, err
		}
		out := make([]*a2a.PushConfig, 0, len(r.push.subs))
		for _, s := range r.push.subs {
			c := *s.config
			out = append(out, &c)
		}
		return out, nil
	}); err != nil {
		return fmt.Errorf("set query handler %s: %w", wire.QueryPushConfigs, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateCreatePushConfig, r.onCreatePushConfig, workflow.UpdateHandlerOptions{
		Validator:   r.validateCreatePushConfig,
		Description: "A2A CreateTaskPushNotificationConfig: add or replace a webhook",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateCreatePushConfig, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateDeletePushConfig, r.onDeletePushConfig, workflow.UpdateHandlerOptions{
		Validator:   r.validateDeletePushConfig,
		Description: "A2A DeleteTaskPushNotificationConfig: remove a webhook",
	}); err != nil {
		return fmt.Errorf("set update handler %s: %w", wire.UpdateDeletePushConfig, err)
	}

	// Deliveries outlive a cancellation of the workflow, so that a webhook
	// also learns that its task was canceled.
	// A fork replaying its original starts them once the replay is over
	// (fork.go: afterReplay).
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	r.fork.afterReplay(func() {
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				if err := workflow.Await(ctx, func() bool { return len(r.push.unstarted) > 0 }); err != nil {
					return
				}
				for _, sub := range r.push.unstarted {
					subCtx, cancel := workflow.WithCancel(ctx)
					sub.cancel = cancel
					workflow.Go(subCtx, func(ctx workflow.Context) { r.deliver(ctx, sub) })
				}
				r.push.unstarted = nil
			}
		})
	})
	return nil
}

func (r *run) validateCreatePushConfig(ctx workflow.Context, in wire.CreatePushConfigInput) error {
	if err := r.checkAccess(in.Agent, in.Owner); err != nil {
		return err
	}
	if r.task.Status.State.Terminal() {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s is %s and sends no more notifications", r.task.ID, r.task.Status.State), wire.ErrTypeUnsupportedOperation)
	}
	if in.Config == nil {
		return temporal.NewApplicationError("the push notification config is required", wire.ErrTypeInvalidParams)
	}
	return r.validatePushConfig(in.Config)
}

// validatePushConfig checks a config without I/O: the API has checked its
// addresses already (and the delivery checks them again).
func (r *run) validatePushConfig(c *a2a.PushConfig) error {
	if c == nil {
		return nil
	}
	invalid := func(format string, args ...any) error {
		return temporal.NewApplicationError(fmt.Sprintf(format, args...), wire.ErrTypeInvalidParams)
	}
	if c.ID == "" {
		return invalid("the push notification config needs an id")
	}
	if c.TaskID != "" && c.TaskID != r.task.ID {
		return invalid("push notification config taskId %q does not match task %q", c.TaskID, r.task.ID)
	}
	if _, err := webhook.ParseURL(c.URL); err != nil {
		return invalid("push notification config url: %v", err)
	}
	if r.pushSub(c.ID) == nil && len(r.push.subs) >= wire.MaxPushConfigs {
		return invalid("task %s already has %d push notification configs, the most it takes", r.task.ID, wire.MaxPushConfigs)
	}
	return nil
}

func (r *run) onCreatePushConfig(ctx workflow.Context, in wire.CreatePushConfigInput) (*a2a.PushConfig, error) {
	c := *r.addPushConfig(in.Config, in.Generation)
	return &c, nil
}

// addPushConfig stores c, replacing the config with its ID if there is one,
// and returns the stored config. A new webhook gets the events after now; a
// replaced one keeps its place in the event sequence. generation says
// whether it is an A2A 1.1 config. A nil c is ignored.
func (r *run) addPushConfig(c *a2a.PushConfig, generation bool) *a2a.PushConfig {
	if c == nil {
		return nil
	}
	stored := *c
	stored.TaskID = r.task.ID
	if stored.Auth != nil {
		auth := *stored.Auth
		stored.Auth = &auth
	}
	if sub := r.pushSub(stored.ID); sub != nil {
		sub.config, sub.generation = &stored, generation
		if sub.disabled {
			sub.disabled, sub.after = false, r.lastSeq
			r.push.unstarted = append(r.push.unstarted, sub)
		}
		return &stored
	}
	sub := &pushSub{config: &stored, after: r.lastSeq, generation: generation}
	r.push.subs = append(r.push.subs, sub)
	r.push.unstarted = append(r.push.unstarted, sub)
	return &stored
}

func (r *run) pushSub(id string) *pushSub {
	for _, s := range r.push.subs {
		if s.config.ID == id {
			return s
		}
	}
	return nil
}

func (r *run) validateDeletePushConfig(ctx workflow.Context, in wire.DeletePushConfigInput) error {
	if err := r.checkAccess(in.Agent, in.Owner); err != nil {
		return err
	}
	if r.pushSub(in.ID) == nil {
		return temporal.NewApplicationError(
			fmt.Sprintf("task %s has no push notification config %q", r.task.ID, in.ID), wire.ErrTypePushConfigNotFound)
	}
	return nil
}

func (r *run) onDeletePushConfig(ctx workflow.Context, in wire.DeletePushConfigInput) error {
	for i, s := range r.push.subs {
		if s.config.ID != in.ID {
			continue
		}
		s.deleted = true
		if s.cancel != nil {
			s.cancel() // stops a delivery that is being retried
		}
		r.push.subs = append(r.push.subs[:i:i], r.push.subs[i+1:]...)
		return nil
	}
	return nil
}

// deliver sends sub's events, one at a time and in order, until sub is
// deleted. An event the webhook refused for good (a 4xx) is logged and the
// next one follows. A webhook still failing after GiveUpAfter is disabled, so
// that a dead endpoint keeps no finished task open for GiveUpAfter per event.
func (r *run) deliver(ctx workflow.Context, sub *pushSub) {
	for {
		if err := workflow.Await(ctx, func() bool { return sub.deleted || r.lastSeq > sub.after }); err != nil || sub.deleted {
			return
		}
		e, skipped := r.eventAfter(sub.after)
		if skipped > 0 {
			r.logger.Warn("webhook fell behind the retained events; some were not delivered",
				"config", sub.config.ID, "skipped", skipped)
		}
		actx := workflow.WithActivityOptions(ctx, r.pushActivityOptions(sub.config.ID, e.Seq))
		err := workflow.ExecuteActivity(actx, wire.ActivityDeliverPush, wire.PushDelivery{Config: *sub.config, Event: e, Generation: sub.generation}).Get(actx, nil)
		if sub.deleted {
			return
		}
		// The activity's errors name the webhook by its redacted URL and
		// carry no token or credentials.
		// Without a MaximumAttempts, an error that is not the webhook's
		// final refusal means the retries ran out of GiveUpAfter.
		var refused *temporal.ApplicationError
		if err != nil && !(errors.As(err, &refused) && refused.NonRetryable()) {
			r.logger.Warn("webhook disabled: it failed for too long; create its config again to resume",
				"config", sub.config.ID, "seq", e.Seq, "error", err)
			sub.disabled, sub.after = true, r.lastSeq
			return
		}
		if err != nil {
			r.logger.Warn("push notification not delivered", "config", sub.config.ID, "seq", e.Seq, "error", err)
		}
		sub.after = e.Seq
	}
}

// eventAfter returns the event following seq, or the oldest retained one
// when seq is older than that, with the number of events skipped.
func (r *run) eventAfter(seq int64) (wire.Event, int64) {
	first := r.lastSeq - int64(len(r.events)) + 1
	if seq+1 < first {
		return r.events[0], first - seq - 1
	}
	return r.events[seq+1-first], 0
}

func (r *run) pushActivityOptions(configID string, seq int64) workflow.ActivityOptions {
	o := r.push.opts
	if o.MaxRetryInterval <= 0 {
		o.MaxRetryInterval = 5 * time.Minute
	}
	if o.GiveUpAfter <= 0 {
		o.GiveUpAfter = 24 * time.Hour
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 30 * time.Second
	}
	initial := min(time.Second, o.MaxRetryInterval)
	return workflow.ActivityOptions{
		StartToCloseTimeout:    o.AttemptTimeout,
		ScheduleToCloseTimeout: o.GiveUpAfter,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    initial,
			BackoffCoefficient: 2,
			MaximumInterval:    o.MaxRetryInterval,
		},
		Summary: fmt.Sprintf("push event %d to webhook %s", seq, configID),
	}
}

// pushIdle reports whether every webhook has every event, so the workflow
// may complete without abandoning a delivery.
func (r *run) pushIdle() bool {
	for _, s := range r.push.subs {
		if !s.disabled && s.after < r.lastSeq {
			return false
		}
	}
	return true
}

var _ unit = (*pushState)(nil)

func (u *pushState) claims(wire.SendMessageInput) bool { return false }

// validateMessage checks the push config a message may carry.
func (u *pushState) validateMessage(_ workflow.Context, in wire.SendMessageInput, _ unit) error {
	return u.r.validatePushConfig(in.PushConfig)
}

func (u *pushState) receive(workflow.Context, wire.SendMessageInput) (sendResult, error) {
	return sendResult{}, nil
}

// carry hands over every webhook and how far it got.
func (u *pushState) carry(c *continuedTask) {
	for _, s := range u.subs {
		c.Push = append(c.Push, carriedPush{Config: s.config, After: s.after, Disabled: s.disabled, Generation: s.generation})
	}
}

// restore takes the webhooks back; the enabled ones deliver again from
// where they were.
func (u *pushState) restore(c *continuedTask) {
	for _, p := range c.Push {
		sub := &pushSub{config: p.Config, after: p.After, disabled: p.Disabled, generation: p.Generation}
		u.subs = append(u.subs, sub)
		if !p.Disabled {
			u.unstarted = append(u.unstarted, sub)
		}
	}
}

func (u *pushState) resume(workflow.Context) {}
func (u *pushState) end(workflow.Context)    {}

// idle reports whether no webhook has an event left to deliver.
func (u *pushState) idle() bool { return u.r.pushIdle() }
