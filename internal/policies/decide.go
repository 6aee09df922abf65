package policies

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Decide judges in by the policies of docs that apply to it, as the
// version version, by the rule of the package doc: any forbid wins, a
// permit that requires approval beats one that allows, a permit allows,
// and no policy leaves it to the gate. A policy that fails to evaluate
// (Cedar skips it) makes the decision PolicyFailed: a forbid that could
// not be read must not let the request through.
func Decide(docs []*Document, version int64, in wire.PolicyInput) wire.PolicyDecision {
	set := cedar.NewPolicySet()
	byID := map[types.PolicyID]*Policy{}
	for _, d := range docs {
		if !d.Scope.applies(in) {
			continue
		}
		for i := range d.Policies {
			p := &d.Policies[i]
			set.Add(types.PolicyID(p.ID), p.cedar)
			byID[types.PolicyID(p.ID)] = p
		}
	}
	out := wire.PolicyDecision{Effect: wire.PolicyNone, Version: version}
	if len(byID) == 0 {
		return out
	}
	req, entities, err := request(in)
	if err != nil {
		out.Effect, out.Reason = wire.PolicyFailed, err.Error()
		return out
	}
	decision, diag := cedar.Authorize(set, entities, req)
	if len(diag.Errors) > 0 {
		var msgs []string
		for _, e := range diag.Errors {
			msgs = append(msgs, fmt.Sprintf("%s: %s", e.PolicyID, e.Message))
		}
		slices.Sort(msgs)
		out.Effect, out.Reason = wire.PolicyFailed, "a policy failed to evaluate: "+strings.Join(msgs, "; ")
		return out
	}
	var matched []*Policy
	for _, r := range diag.Reasons {
		matched = append(matched, byID[r.PolicyID])
	}
	slices.SortFunc(matched, byLayer)
	for _, p := range matched {
		out.Policies = append(out.Policies, p.ID)
	}
	switch {
	case decision == cedar.Deny && len(matched) > 0:
		out.Effect = wire.PolicyDeny
		var reasons []string
		for _, p := range matched {
			if r := p.Reason; r != "" && !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		out.Reason = strings.Join(reasons, "; ")
		if out.Reason == "" {
			out.Reason = "forbidden by policy " + strings.Join(out.Policies, ", ")
		}
	case decision == cedar.Allow:
		out.Effect = wire.PolicyAllow
		for _, p := range matched {
			if p.Approval != nil {
				out.Effect = wire.PolicyApprove
				out.Approvals = append(out.Approvals, *p.Approval)
			}
		}
	}
	return out
}

// byLayer orders policies the server's first, then by scope and line.
func byLayer(a, b *Policy) int {
	sa, _, _ := strings.Cut(a.ID, "#")
	sb, _, _ := strings.Cut(b.ID, "#")
	la, _, _ := strings.Cut(sa, "/")
	lb, _, _ := strings.Cut(sb, "/")
	if c := layerOrder[la] - layerOrder[lb]; c != 0 {
		return c
	}
	if c := strings.Compare(sa, sb); c != 0 {
		return c
	}
	return a.Line - b.Line
}

// The entity types of Schema.
const (
	typeTenant  = types.EntityType("Tenant")
	typeCaller  = types.EntityType("Caller")
	typeAgent   = types.EntityType("Agent")
	typeTask    = types.EntityType("Task")
	typeNumbers = types.EntityType("Numbers")
	typeTexts   = types.EntityType("Texts")
	typeFlags   = types.EntityType("Flags")
)

// request is in as a Cedar request and the entities it names.
func request(in wire.PolicyInput) (cedar.Request, cedar.EntityMap, error) {
	tenant := types.NewEntityUID(typeTenant, types.String(in.Tenant))
	caller := types.NewEntityUID(typeCaller, types.String(in.Caller))
	agent := types.NewEntityUID(typeAgent, types.String(in.Agent))
	task := types.NewEntityUID(typeTask, types.String(in.TaskID))
	entities := cedar.EntityMap{
		tenant: {UID: tenant},
		caller: {UID: caller, Parents: types.NewEntityUIDSet(tenant)},
		agent:  {UID: agent},
		task: {UID: task, Parents: types.NewEntityUIDSet(agent),
			Attributes: types.NewRecord(types.RecordMap{"contextId": types.String(in.ContextID)})},
	}
	req := cedar.Request{Principal: caller, Action: types.NewEntityUID("Action", types.String(in.Action)), Resource: task}
	switch in.Action {
	case wire.PolicyCallTool:
		ctx, err := toolContext(in, entities)
		if err != nil {
			return req, nil, err
		}
		req.Context = ctx
	case wire.PolicyApproveStep:
		groups := make([]types.Value, len(in.Groups))
		for i, g := range in.Groups {
			groups[i] = types.String(g)
		}
		req.Context = types.NewRecord(types.RecordMap{"step": types.String(in.Step), "title": types.String(in.Title),
			"groups": types.NewSet(groups...)})
	default:
		return req, nil, fmt.Errorf("unknown action %q", in.Action)
	}
	return req, entities, nil
}

// toolContext is the context of a tool call: its arguments by type as the
// tags of three entities (Schema) added to entities.
func toolContext(in wire.PolicyInput, entities cedar.EntityMap) (types.Record, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(in.Arguments)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(in.Arguments))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return types.Record{}, fmt.Errorf("the arguments of %s are not a JSON object: %w", in.Tool, err)
		}
	}
	numbers, texts, flags := types.RecordMap{}, types.RecordMap{}, types.RecordMap{}
	flatten("", args, numbers, texts, flags)
	uid := func(t types.EntityType, tags types.RecordMap) types.EntityUID {
		u := types.NewEntityUID(t, "call")
		entities[u] = types.Entity{UID: u, Tags: types.NewRecord(tags)}
		return u
	}
	a := in.Annotations
	return types.NewRecord(types.RecordMap{
		"tool": types.String(in.Tool), "source": types.String(in.Source), "arguments": types.String(in.Arguments),
		"annotations": types.NewRecord(types.RecordMap{"readOnly": types.Boolean(a.ReadOnly),
			"destructive": types.Boolean(a.Destructive), "idempotent": types.Boolean(a.Idempotent), "openWorld": types.Boolean(a.OpenWorld)}),
		"numbers": uid(typeNumbers, numbers), "texts": uid(typeTexts, texts), "flags": uid(typeFlags, flags),
	}), nil
}

// flatten sorts the arguments of obj into numbers, texts and flags by
// name, a nested object's members as "outer.inner". Arrays and nulls are
// left out (context.arguments has them).
func flatten(prefix string, obj map[string]any, numbers, texts, flags types.RecordMap) {
	for k, v := range obj {
		name := types.String(prefix + k)
		switch v := v.(type) {
		case json.Number:
			if n, ok := roundUp(v); ok {
				numbers[name] = types.Long(n)
			}
		case string:
			texts[name] = types.String(v)
		case bool:
			flags[name] = types.Boolean(v)
		case map[string]any:
			flatten(string(name)+".", v, numbers, texts, flags)
		}
	}
}

// roundUp reads n as a Long, a fraction rounded up (1000.5 is 1001), so
// that a threshold such as > 1000 catches what is above it; a number
// beyond a Long is left out.
func roundUp(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0, false
	}
	return int64(math.Ceil(f)), true
}
