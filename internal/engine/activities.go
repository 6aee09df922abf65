package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/llm"
	"github.com/a2aflow/a2aflow/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
)

// agentActivity is one activity of an agent, ready to register.
type agentActivity struct {
	name  string
	fn    any
	tool  *llm.Tool // an LLM tool's activity, registered by llm.RegisterTools
	key   string    // what it is, to tell one activity shared by two agents from two clashing ones
	agent string
}

// CheckActivities reports what RegisterActivities would refuse: an entry of
// workflows.Agent.Activities that is not a function, a struct pointer or an Activity;
// a function that is not an activity (its last result must be an error); an
// anonymous function without a name; two different activities under one
// name; a name of a2aflow's own (wire.BuiltinActivities, or an LLM tool's).
func CheckActivities(agents ...*workflows.Agent) error {
	_, err := agentActivities(agents)
	return err
}

// RegisterActivities registers the agents' own activities (workflows.Agent.Activities)
// with a worker (or a testsuite environment) under their names. An activity
// shared by several agents is registered once.
func RegisterActivities(r worker.ActivityRegistry, agents ...*workflows.Agent) error {
	defs, err := agentActivities(agents)
	if err != nil {
		return err
	}
	for _, d := range defs {
		if d.tool != nil {
			llm.RegisterTools(r, *d.tool)
			continue
		}
		r.RegisterActivityWithOptions(d.fn, activity.RegisterOptions{Name: d.name})
	}
	return nil
}

func agentActivities(agents []*workflows.Agent) ([]agentActivity, error) {
	set := newActivitySet()
	for _, a := range agents {
		if a == nil {
			continue
		}
		for i, item := range a.Activities {
			defs, err := activitiesOf(a.Name, i, item)
			if err != nil {
				return nil, err
			}
			for _, d := range defs {
				if err := set.add(d); err != nil {
					return nil, err
				}
			}
		}
	}
	return set.list, nil
}

// activitySet is the agents' activities gathered so far, each name once.
type activitySet struct {
	reserved map[string]bool // a2aflow's own activities
	seen     map[string]agentActivity
	list     []agentActivity
}

func newActivitySet() *activitySet {
	s := &activitySet{reserved: map[string]bool{}, seen: map[string]agentActivity{}}
	for _, name := range wire.BuiltinActivities() {
		s.reserved[name] = true
	}
	return s
}

// add adds d, unless it is the same activity as one added under its name
// (shared by two agents). It refuses a missing name, a name of a2aflow's
// own, a function that is no activity, and another activity under a name
// taken.
func (s *activitySet) add(d agentActivity) error {
	if d.name == "" {
		return fmt.Errorf("agent %q: an activity needs a name", d.agent)
	}
	if d.tool == nil && (s.reserved[d.name] || strings.HasPrefix(d.name, llm.ToolActivityPrefix)) {
		return fmt.Errorf("agent %q: activity name %q is one of a2aflow's own; choose another with workflows.Activity", d.agent, d.name)
	}
	if d.tool == nil {
		if err := checkActivityFunc(d.fn); err != nil {
			return fmt.Errorf("agent %q: activity %q: %w", d.agent, d.name, err)
		}
	}
	if prev, dup := s.seen[d.name]; dup {
		if prev.key == d.key {
			return nil // the same activity, shared by two agents
		}
		if d.tool != nil {
			return fmt.Errorf("agent %q: tool %q is another tool than agent %q's of that name; name one of them otherwise", d.agent, d.tool.Name(), prev.agent)
		}
		return fmt.Errorf("agent %q: activity name %q is taken by another activity of agent %q; name one of them with workflows.Activity", d.agent, d.name, prev.agent)
	}
	s.seen[d.name] = d
	s.list = append(s.list, d)
	return nil
}

// activitiesOf returns the activities that item, the i-th of agent's
// Activities, registers: an LLM tool's activity (none for a workflow
// tool), a named activity, a function under its Go name, or each exported
// method of a struct pointer under the method's name.
func activitiesOf(agent string, i int, item any) ([]agentActivity, error) {
	switch v := item.(type) {
	case llm.Tool:
		if v.ActivityName() == "" {
			return nil, nil // a workflow tool runs in the workflow
		}
		spec, _ := json.Marshal(v.Spec())
		return []agentActivity{{name: v.ActivityName(), tool: &v, key: "tool " + string(spec), agent: agent}}, nil
	case workflows.NamedActivity:
		return []agentActivity{{name: v.Name, fn: v.Func, key: funcKey(v.Func), agent: agent}}, nil
	case *workflows.NamedActivity:
		if v == nil {
			return nil, fmt.Errorf("agent %q: Activities[%d] is nil", agent, i)
		}
		return []agentActivity{{name: v.Name, fn: v.Func, key: funcKey(v.Func), agent: agent}}, nil
	}
	rv := reflect.ValueOf(item)
	switch {
	case rv.Kind() == reflect.Func && !rv.IsNil():
		name, err := goFuncName(rv)
		if err != nil {
			return nil, fmt.Errorf("agent %q: Activities[%d]: %w", agent, i, err)
		}
		return []agentActivity{{name: name, fn: item, key: funcKey(item), agent: agent}}, nil
	case rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct:
		if rv.NumMethod() == 0 {
			return nil, fmt.Errorf("agent %q: Activities[%d] (%s) has no exported methods", agent, i, rv.Type())
		}
		var out []agentActivity
		for m := 0; m < rv.NumMethod(); m++ {
			name := rv.Type().Method(m).Name
			key := fmt.Sprintf("%s@%x.%s", rv.Type(), rv.Pointer(), name)
			out = append(out, agentActivity{name: name, fn: rv.Method(m).Interface(), key: key, agent: agent})
		}
		return out, nil
	}
	return nil, fmt.Errorf("agent %q: Activities[%d] is a %T; want a function, a pointer to a struct, workflows.Activity(name, fn) or an llm.Tool", agent, i, item)
}

var (
	errorType   = reflect.TypeOf((*error)(nil)).Elem()
	contextType = reflect.TypeOf((*context.Context)(nil)).Elem()
)

// checkActivityFunc checks what the SDK would otherwise panic on at
// registration: fn is a function returning an error last (and at most one
// value before it).
func checkActivityFunc(fn any) error {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func || reflect.ValueOf(fn).IsNil() {
		return fmt.Errorf("is a %T, not a function", fn)
	}
	if t.NumOut() < 1 || t.NumOut() > 2 || !t.Out(t.NumOut()-1).Implements(errorType) {
		return fmt.Errorf("%s must return error or (value, error)", t)
	}
	for i := 0; i < t.NumIn(); i++ {
		if i > 0 && t.In(i) == contextType {
			return fmt.Errorf("%s takes a context.Context only as its first argument", t)
		}
	}
	return nil
}

// goFuncName is the Go name of a named function: "GetQuote" for
// example.com/po.GetQuote. Closures and method values have no name fit for
// a history; they need workflows.Activity.
func goFuncName(fn reflect.Value) (string, error) {
	full := runtime.FuncForPC(fn.Pointer()).Name() // example.com/po.GetQuote
	name := full[strings.LastIndex(full, "/")+1:]
	if i := strings.Index(name, "."); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || strings.ContainsAny(name, ".()-") || strings.HasPrefix(name, "func") {
		return "", fmt.Errorf("%s has no name of its own (a closure or method value); register it with workflows.Activity(name, fn)", full)
	}
	return name, nil
}

// funcKey identifies a function value, so the same function listed by two
// agents is one activity.
func funcKey(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return fmt.Sprintf("%T", fn)
	}
	return fmt.Sprintf("func@%x", v.Pointer())
}
