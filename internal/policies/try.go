package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// TryResult is what a candidate text of one scope would have changed in
// the requests the gates judged since Since (`a2aflow policies try`): each
// request judged again by the policies of the version it was judged under,
// once as they were and once with the scope's text replaced by the
// candidate's.
type TryResult struct {
	Scope    string    `json:"scope"`
	Since    time.Time `json:"since"`
	Requests int       `json:"requests"`
	// AllowedNow counts the requests that would run without a person now
	// (allow or none) and did not; StoppedNow those that would now be
	// denied or wait for approvals and did not; Changed every request whose
	// decision differs (other approvals among them).
	AllowedNow int `json:"allowedNow"`
	StoppedNow int `json:"stoppedNow"`
	Changed    int `json:"changed"`
	// Groups are the changed requests by agent, action, tool or step and
	// change, the most frequent first.
	Groups []TryGroup `json:"groups"`
}

// TryGroup is one kind of change: From and To are decisions as Outcome
// writes them ("allow", "approve(finance; cfo)", "deny: reason"...).
type TryGroup struct {
	Agent    string       `json:"agent"`
	Action   string       `json:"action"`
	Name     string       `json:"name"`
	From     string       `json:"from"`
	To       string       `json:"to"`
	Count    int          `json:"count"`
	Examples []TryExample `json:"examples"`
}

// TryExample is one request of a group.
type TryExample struct {
	TaskID    string          `json:"taskId"`
	Time      time.Time       `json:"time"`
	Version   int64           `json:"version"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Title     string          `json:"title,omitempty"`
}

// tryExamples is how many examples a group shows.
const tryExamples = 3

// Outcome is a decision in one phrase: its effect, the groups of each
// approval it requires, a forbid's reason.
func Outcome(d wire.PolicyDecision) string {
	switch d.Effect {
	case wire.PolicyApprove:
		var gs []string
		for _, a := range d.Approvals {
			gs = append(gs, strings.Join(a.Groups, ","))
		}
		return "approve(" + strings.Join(gs, "; ") + ")"
	case wire.PolicyDeny:
		return "deny: " + d.Reason
	}
	return d.Effect
}

// runs reports whether an outcome lets the request run without a person
// (as far as the policies go: the tool's own gate may still ask).
func runs(effect string) bool { return effect == wire.PolicyAllow || effect == wire.PolicyNone }

// Try judges requests again with scope's text replaced by text, and
// reports what changes. The text must compile.
func Try(ctx context.Context, src Source, scope, text string, since time.Time, requests []models.PolicyRequest) (TryResult, error) {
	candidate, err := Compile(scope, text)
	if err != nil {
		return TryResult{}, err
	}
	out := TryResult{Scope: scope, Since: since, Requests: len(requests), Groups: []TryGroup{}}
	type versionDocs struct {
		docs []*Document
		err  error
	}
	cache := map[int64]versionDocs{}
	index := map[string]int{}
	for _, r := range requests {
		var in wire.PolicyInput
		if err := json.Unmarshal([]byte(r.Input), &in); err != nil {
			continue
		}
		vd, ok := cache[r.Version]
		if !ok && r.Version > 0 {
			vd.docs, vd.err = Load(ctx, src, r.Version)
			cache[r.Version] = vd
		}
		before := Decide(vd.docs, r.Version, in)
		if vd.err != nil {
			before = wire.PolicyDecisionFailed(vd.err.Error())
		}
		docs := slices.DeleteFunc(slices.Clone(vd.docs), func(d *Document) bool { return d.Scope.String() == scope })
		after := Decide(append(docs, candidate), r.Version, in)
		from, to := Outcome(before), Outcome(after)
		if from == to {
			continue
		}
		out.Changed++
		switch {
		case runs(after.Effect) && !runs(before.Effect):
			out.AllowedNow++
		case !runs(after.Effect) && runs(before.Effect):
			out.StoppedNow++
		}
		key := strings.Join([]string{r.Agent, r.Action, r.Name, from, to}, "\x00")
		i, ok := index[key]
		if !ok {
			i = len(out.Groups)
			index[key] = i
			out.Groups = append(out.Groups, TryGroup{Agent: r.Agent, Action: r.Action, Name: r.Name, From: from, To: to})
		}
		g := &out.Groups[i]
		g.Count++
		if len(g.Examples) < tryExamples {
			g.Examples = append(g.Examples, TryExample{TaskID: r.TaskID, Time: r.CreatedAt, Version: r.Version, Arguments: in.Arguments, Title: in.Title})
		}
	}
	slices.SortStableFunc(out.Groups, func(a, b TryGroup) int { return b.Count - a.Count })
	return out, nil
}

// ParseSince reads a period back from now ("30d", "12h", "90m") or an
// RFC 3339 time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 && n <= 3660 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("since %q: want a period such as 30d or 12h, or an RFC 3339 time", s)
}
