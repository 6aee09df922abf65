package taskservice

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// DelegationLookup finds the delegations from one approver to another
// (models.Store): an approver's authority lent for a period (out of
// office, POST /delegations).
type DelegationLookup interface {
	DelegationsFromTo(ctx context.Context, from, to string) ([]models.Delegation, error)
}

// Delegates checks who's decisions with the authority of from, the one
// check of every decision path (REST, the CLI, a message's decision part).
type Delegates struct {
	Lookup         DelegationLookup // nil: no delegations kept
	ApproverGroups map[string][]string
	AuthOn         bool
	Logger         *slog.Logger
}

// OnBehalfOf returns who deciding with the authority of from: the
// delegation from from to who in force now makes them "WHO for FROM" with
// from's groups; without one, PermissionDenied saying why (none, not yet,
// ended, revoked).
func (d Delegates) OnBehalfOf(ctx context.Context, who wire.Caller, from string) (wire.Caller, error) {
	from = strings.TrimSpace(from)
	if d.Lookup == nil {
		return who, a2a.NewError(a2a.ErrUnsupportedOperation, "this server keeps no delegations (no database)")
	}
	if from == "" || len(from) > 128 || !utf8.ValidString(from) || strings.ContainsRune(from, 0) {
		return who, apierror.BadRequest("onBehalfOf names an approver: 1 to 128 bytes of UTF-8 text")
	}
	list, err := d.Lookup.DelegationsFromTo(ctx, from, who.Approver)
	if err != nil {
		if d.Logger != nil {
			d.Logger.ErrorContext(ctx, "delegation store", "error", err)
		}
		return who, a2a.NewError(a2a.ErrServerError, "the delegation store did not answer")
	}
	now := time.Now()
	for _, dl := range list {
		if dl.ActiveAt(now) {
			who.OnBehalfOf = from
			who.Approver = who.Approver + " for " + from
			who.Groups = guard.ApproverGroups(d.ApproverGroups, d.AuthOn, from)
			return who, nil
		}
	}
	why := "there is none"
	if len(list) > 0 {
		switch dl := list[0]; {
		case dl.RevokedAt != nil && !now.Before(*dl.RevokedAt):
			why = fmt.Sprintf("the latest (%d) was revoked by %s at %s", dl.ID, dl.RevokedBy, dl.RevokedAt.Format(time.RFC3339))
		case now.Before(dl.Start):
			why = fmt.Sprintf("the latest (%d) starts at %s", dl.ID, dl.Start.Format(time.RFC3339))
		default:
			why = fmt.Sprintf("the latest (%d) ended at %s", dl.ID, dl.End.Format(time.RFC3339))
		}
	}
	return who, a2a.NewError(a2a.ErrUnauthorized, fmt.Sprintf("%s holds no delegation from %s now: %s", who.Approver, from, why))
}

// decisionOnBehalfOf returns the onBehalfOf of a message's decision part
// ({"approvalId": ..., "onBehalfOf": "carl"}), or "".
func decisionOnBehalfOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			if _, ok := data["approvalId"]; ok {
				if name, ok := data["onBehalfOf"].(string); ok {
					return name
				}
			}
		}
	}
	return ""
}
