package activities_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"

	"github.com/a2aflow/a2aflow/internal/activities"
	"github.com/a2aflow/a2aflow/internal/wire"
)

// recorder is a worker.ActivityRegistry that keeps the names registered.
type recorder struct{ names []string }

func (r *recorder) RegisterActivity(a any) {
	r.names = append(r.names, "unnamed "+reflect.TypeOf(a).String())
}

func (r *recorder) RegisterActivityWithOptions(a any, o activity.RegisterOptions) {
	if reflect.TypeOf(a).Kind() != reflect.Func {
		r.names = append(r.names, "struct "+reflect.TypeOf(a).String())
		return
	}
	r.names = append(r.names, o.Name)
}

func (r *recorder) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {
	r.names = append(r.names, "dynamic")
}

// TestActivityNames holds the promise that renaming Go code never breaks a
// running task: every activity the workflow code calls is named by a
// constant of internal/wire/names.go, and the worker's Set registers exactly
// those names, each as one function under its constant.
func TestActivityNames(t *testing.T) {
	consts := nameConstants(t, "../wire/names.go")

	// What the workflow code calls: the activity argument of every
	// workflow.ExecuteActivity in the packages holding workflow code.
	called := map[string][]string{}
	for _, dir := range []string{"../../workflows", "../llmagents", "../../llm"} {
		for file, calls := range executeActivityCalls(t, dir) {
			for _, c := range calls {
				if file == "../../llm/tool.go" && c.expr == "activityName" {
					continue // LLM tools: "tool:"+name, registered by llm.RegisterTools
				}
				if c.expr == "workerenv.DecidePolicy" {
					continue // a local activity run by its function: TestDecidePolicyName holds its name
				}
				value, ok := consts[c.name]
				if !ok {
					t.Errorf("%s:%d: workflow.ExecuteActivity calls %s, not a constant of internal/wire/names.go; a Go name would change with a rename", file, c.line, c.expr)
					continue
				}
				called[value] = append(called[value], file)
			}
		}
	}
	if len(called) == 0 {
		t.Fatal("found no workflow.ExecuteActivity call; the scan is broken")
	}

	// What the worker registers.
	var rec recorder
	activities.Set{
		Webhooks: &activities.Webhooks{}, ApprovalWebhooks: &activities.ApprovalWebhooks{},
		LLM: &activities.LLM{}, Tasks: &activities.Tasks{}, HistoryPages: &activities.HistoryPages{},
		Remote: &activities.Remote{}, Files: &activities.Files{}, MCP: &activities.MCP{},
		Directory: &activities.Directory{},
	}.Register(&rec)
	registered := map[string]bool{}
	for _, n := range rec.names {
		if registered[n] {
			t.Errorf("activity %q registered twice", n)
		}
		registered[n] = true
	}
	for name, files := range called {
		if !registered[name] {
			t.Errorf("activity %q is called (%s) but the worker does not register it", name, strings.Join(slices.Compact(files), ", "))
		}
	}

	builtin := wire.BuiltinActivities()
	want := slices.Sorted(maps.Values(consts))
	if got := slices.Sorted(slices.Values(builtin)); !slices.Equal(got, want) {
		t.Errorf("wire.BuiltinActivities() = %v, want every constant of names.go %v", got, want)
	}
	if got := slices.Sorted(maps.Keys(registered)); !slices.Equal(got, want) {
		t.Errorf("Set.Register registers %v, want exactly the built-in names %v", got, want)
	}
	for _, name := range want {
		if _, ok := called[name]; !ok {
			t.Errorf("activity %q is registered but no workflow code calls it", name)
		}
	}
}

// nameConstants reads the Activity* string constants of names.go: constant
// name to value.
func nameConstants(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Activity") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s: %s is not a string literal", path, n.Name)
				}
				out[n.Name], _ = strconv.Unquote(lit.Value)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no Activity* constant", path)
	}
	return out
}

type activityCall struct {
	expr string // the activity argument as written
	name string // its identifier: ActivityX for ActivityX and wire.ActivityX
	line int
}

// executeActivityCalls finds workflow.ExecuteActivity and
// workflow.ExecuteLocalActivity calls in the non-test files of dir.
func executeActivityCalls(t *testing.T, dir string) map[string][]activityCall {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]activityCall{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "ExecuteActivity" && sel.Sel.Name != "ExecuteLocalActivity") {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "workflow" {
				return true
			}
			c := activityCall{line: fset.Position(call.Pos()).Line}
			switch a := call.Args[1].(type) {
			case *ast.Ident: // a constant of the package: llm's alias of one of wire's
				c.expr = a.Name
				c.name = a.Name
			case *ast.SelectorExpr:
				if x, ok := a.X.(*ast.Ident); ok {
					c.expr = x.Name + "." + a.Sel.Name
					if x.Name == "wire" {
						c.name = a.Sel.Name
					}
				}
			default:
				c.expr = "an expression"
			}
			out[file] = append(out[file], c)
			return true
		})
	}
	return out
}
