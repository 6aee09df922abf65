package workerenv

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestDecidePolicyName: the gates run DecidePolicy by its function, so
// Temporal records the function's name as the local activity's type; it
// must stay wire.ActivityDecidePolicy, which histories hold.
func TestDecidePolicyName(t *testing.T) {
	name := runtime.FuncForPC(reflect.ValueOf(DecidePolicy).Pointer()).Name()
	if got := name[strings.LastIndex(name, ".")+1:]; got != wire.ActivityDecidePolicy {
		t.Fatalf("DecidePolicy is recorded as %q, want %q", got, wire.ActivityDecidePolicy)
	}
}

// TestDecidePolicyWithoutPolicies: a worker without an Env, or whose Env
// has no policies, has none in force.
type fixedDecider wire.PolicyDecision

func (f fixedDecider) DecidePolicy(context.Context, wire.PolicyInput) wire.PolicyDecision {
	return wire.PolicyDecision(f)
}

func TestDecidePolicyWithoutPolicies(t *testing.T) {
	for _, ctx := range []context.Context{context.Background(), With(context.Background(), &Env{})} {
		if d, err := DecidePolicy(ctx, wire.PolicyInput{}); err != nil || d.Effect != wire.PolicyNone {
			t.Errorf("got %+v, %v; want none", d, err)
		}
	}
	ctx := With(context.Background(), &Env{Policies: fixedDecider{Effect: wire.PolicyDeny, Version: 4}})
	if d, _ := DecidePolicy(ctx, wire.PolicyInput{}); d.Effect != wire.PolicyDeny || d.Version != 4 {
		t.Errorf("with policies: %+v", d)
	}
}
