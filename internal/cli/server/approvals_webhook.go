package server

import (
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/webhook"
)

// approvalWebhookTokenEnv prefixes the environment variables holding the
// approval webhooks' bearer tokens: A2AFLOW_APPROVAL_WEBHOOK_TOKEN_FINANCE
// for the group "finance". Tokens are read from the environment only, so
// they show neither in the process list nor in workflow history.
const approvalWebhookTokenEnv = "A2AFLOW_APPROVAL_WEBHOOK_TOKEN_"

// approvalWebhooksConfig holds the approval webhook flags of serve and
// worker: the worker notifies the groups, so the configuration is its own.
type approvalWebhooksConfig struct {
	Spec     string
	InboxURL string

	// hooks is built by build from the flags and the environment.
	hooks map[string]activities.ApprovalWebhook
}

func (c *approvalWebhooksConfig) bind(fs *pflag.FlagSet) {
	b := cmdutil.Bind(fs)
	b.String(&c.Spec, "approval-webhooks", "A2AFLOW_APPROVAL_WEBHOOKS", "",
		`webhooks told when an approval waits for a group, "finance=https://hooks.example/finance,managers=https://..."; `+
			`bearer tokens from `+approvalWebhookTokenEnv+`<GROUP>; addresses as allowed by --push-allow-hosts`)
	b.String(&c.InboxURL, "approval-inbox-url", "A2AFLOW_APPROVAL_INBOX_URL", "",
		"inbox page linked from approval webhook notices; serve defaults to <public-url or its own address>/inbox")
}

// build parses the flags and reads each group's token. apiURL, when set
// (serve), is where the inbox is unless --approval-inbox-url says otherwise.
// A webhook the push allow-list refuses by its address fails here, at once;
// one behind a host name is checked at every delivery.
func (c *approvalWebhooksConfig) build(policy *webhook.Policy, apiURL string, logger *slog.Logger) error {
	hooks, err := parseApprovalWebhooks(c.Spec)
	if err != nil {
		return fmt.Errorf("--approval-webhooks: %w", err)
	}
	for group, hook := range hooks {
		u, _ := webhook.ParseURL(hook.URL) // parseApprovalWebhooks checked it
		if addr, err := netip.ParseAddr(u.Hostname()); err == nil {
			if err := policy.CheckAddr(addr); err != nil {
				return fmt.Errorf("--approval-webhooks: group %s: %w (see --push-allow-hosts)", group, err)
			}
		}
		hook.Token = os.Getenv(approvalWebhookTokenEnv + envSuffix(group))
		if err := webhook.CheckAuth("Bearer", hook.Token, ""); err != nil {
			return fmt.Errorf("%s%s: %w", approvalWebhookTokenEnv, envSuffix(group), err)
		}
		hooks[group] = hook
	}
	c.hooks = hooks
	if c.InboxURL == "" && apiURL != "" {
		c.InboxURL = strings.TrimSuffix(apiURL, "/") + "/inbox"
	}
	if len(hooks) > 0 {
		logger.Debug("approval webhooks", "groups", slices.Sorted(maps.Keys(hooks)), "inbox", c.InboxURL)
	}
	return nil
}

// activity is the approval webhook activity, dialing through the push
// allow-list's checks.
func (c *approvalWebhooksConfig) activity(policy *webhook.Policy) *activities.ApprovalWebhooks {
	return &activities.ApprovalWebhooks{Hooks: c.hooks, Policy: policy, InboxURL: c.InboxURL}
}

// parseApprovalWebhooks reads "group=url,group=url". A URL holding a comma
// must encode it as %2C.
func parseApprovalWebhooks(spec string) (map[string]activities.ApprovalWebhook, error) {
	hooks := map[string]activities.ApprovalWebhook{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		group, raw, ok := strings.Cut(entry, "=")
		group, raw = strings.TrimSpace(group), strings.TrimSpace(raw)
		if !ok || group == "" || raw == "" {
			return nil, fmt.Errorf("entry %q: want group=https://...", entry)
		}
		if _, dup := hooks[group]; dup {
			return nil, fmt.Errorf("group %s has two webhooks", group)
		}
		if _, err := webhook.ParseURL(raw); err != nil {
			return nil, fmt.Errorf("group %s: %w", group, err)
		}
		hooks[group] = activities.ApprovalWebhook{URL: raw}
	}
	return hooks, nil
}

// envSuffix turns a group name into the end of an environment variable
// name: upper case, every other character than a letter or digit an
// underscore ("line-managers" -> "LINE_MANAGERS").
func envSuffix(group string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, group)
}
