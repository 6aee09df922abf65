package server

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
	"github.com/a2aflow/a2aflow/internal/cardsign"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/outbound"
	"github.com/a2aflow/a2aflow/internal/webhook"
)

// pushConfig holds the push notification flags of serve, api and worker;
// their secrets are sealed with the secrets key (secrets.go).
type pushConfig struct {
	AllowHosts       []string
	MaxRetryInterval time.Duration
	GiveUpAfter      time.Duration

	// policy is built by build from the flags above; outbound delivers
	// with it.
	policy   *webhook.Policy
	outbound *outbound.Client
	// signer signs the deliveries, naming issuer; set by sign.
	signer *cardsign.Signer
	issuer string
}

// bind adds the flags; delivery adds the worker's retry flags.
func (c *pushConfig) bind(fs *pflag.FlagSet, delivery bool) {
	b := cmdutil.Bind(fs)
	b.StringSlice(&c.AllowHosts, "push-allow-hosts", "A2AFLOW_PUSH_ALLOW_HOSTS", nil,
		"non-public addresses push webhooks may reach besides public ones: loopback, private, link-local, CIDRs or IPs, or all; comma-separated")
	if delivery {
		b.Duration(&c.MaxRetryInterval, "push-max-retry-interval", "A2AFLOW_PUSH_MAX_RETRY_INTERVAL", 5*time.Minute,
			"longest wait between two attempts to deliver a push notification")
		b.Duration(&c.GiveUpAfter, "push-give-up-after", "A2AFLOW_PUSH_GIVE_UP_AFTER", 24*time.Hour,
			"how long one push notification is retried before the webhook gets the next one")
	}
}

// build checks the flags and prepares the address policy.
func (c *pushConfig) build(sealed bool, logger *slog.Logger) error {
	policy, err := webhook.ParsePolicy(c.AllowHosts)
	if err != nil {
		return fmt.Errorf("--push-allow-hosts: %w", err)
	}
	c.policy = policy
	c.outbound = outbound.New(outbound.Options{Policy: policy})
	logger.Debug("push notifications", "webhooks may reach", policy.String(), "sealed", sealed)
	return nil
}

// sign makes the worker sign every delivery with signer (nil: none),
// naming issuer, the API's public base URL, where the key set is served.
func (c *pushConfig) sign(signer *cardsign.Signer, issuer string, logger *slog.Logger) error {
	if signer == nil {
		return nil
	}
	if issuer == "" {
		return errors.New("--card-key signs push notifications: give the worker --public-url, the API's public base URL, to name as their issuer (receivers fetch its /.well-known/jwks.json)")
	}
	c.signer, c.issuer = signer, issuer
	logger.Debug("push notifications are signed", "kid", signer.KeyID(), "issuer", issuer)
	return nil
}

// apiOptions is what the API needs: the policy checking new configs and the
// sealer of their secrets.
func (c *pushConfig) apiOptions(sealer *webhook.Sealer) taskservice.PushOptions {
	return taskservice.PushOptions{Policy: c.policy, Sealer: sealer}
}

// workflowOptions is how the task workflow retries deliveries.
func (c *pushConfig) workflowOptions() engine.PushOptions {
	return engine.PushOptions{MaxRetryInterval: c.MaxRetryInterval, GiveUpAfter: c.GiveUpAfter}
}

// activity is the delivery activity, its requests through the guarded
// outbound client with the push allow-list, opening the configs' secrets
// with sealer, signing with the card key when sign gave it one.
func (c *pushConfig) activity(sealer *webhook.Sealer) *activities.Webhooks {
	return &activities.Webhooks{Policy: c.policy, Outbound: c.outbound, Sealer: sealer, Signer: c.signer, Issuer: c.issuer}
}
