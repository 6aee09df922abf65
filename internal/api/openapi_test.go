package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/api"
	"github.com/a2aflow/a2aflow/internal/api/guard"
	"github.com/a2aflow/a2aflow/internal/blobstore"
	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/models"
	"github.com/a2aflow/a2aflow/workflows"
)

// The OpenAPI document (openapi.json) is written by hand; these tests keep
// it valid OpenAPI 3.1 and in step with the code: every route Gin
// registers and every route of a2a-go's HTTP+JSON transport is in it,
// every operation in it is served, and the server's answers fit its
// schemas.

// openAPIDoc is the embedded document as plain JSON, for the structural checks.
type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]openAPIParam `json:"parameters"`
	} `json:"components"`
}

type openAPIParam struct {
	Ref     string          `json:"$ref"`
	Name    string          `json:"name"`
	In      string          `json:"in"`
	Example json.RawMessage `json:"example"`
	Schema  struct {
		Enum []string `json:"enum"`
	} `json:"schema"`
}

type openAPIOperation struct {
	OperationID string         `json:"operationId"`
	Parameters  []openAPIParam `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Example  json.RawMessage `json:"example"`
			Examples map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"examples"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]json.RawMessage `json:"responses"`
}

// httpMethods are the operation keys of a path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func readOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(api.OpenAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// operations lists the document's operations as "METHOD path".
func (d openAPIDoc) operations() []string {
	var out []string
	for path, item := range d.Paths {
		for _, m := range httpMethods {
			if _, ok := item[m]; ok {
				out = append(out, strings.ToUpper(m)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (d openAPIDoc) has(method, path string) bool {
	_, ok := d.Paths[path][strings.ToLower(method)]
	return ok
}

func (d openAPIDoc) operation(t *testing.T, method, path string) openAPIOperation {
	t.Helper()
	var op openAPIOperation
	if err := json.Unmarshal(d.Paths[path][strings.ToLower(method)], &op); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	for i, p := range op.Parameters {
		if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
			op.Parameters[i] = d.Components.Parameters[name]
		}
	}
	return op
}

// TestOpenAPIValid checks that openapi.json is an OpenAPI 3.1 document: it
// validates against the OpenAPI 3.1 schema and libopenapi builds its model
// with every reference resolved.
func TestOpenAPIValid(t *testing.T) {
	doc, err := libopenapi.NewDocument(api.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi is %q; want 3.1.x", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build the model: %v", err)
	}
	if n := model.Model.Paths.PathItems.Len(); n < 30 {
		t.Fatalf("the model has %d paths; the document has more", n)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Error(e)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("  %s: %s", f.KeywordLocation, f.Reason)
			}
		}
	}
	// operationIds are unique (the OpenAPI rule no schema checks).
	seen := map[string]string{}
	d := readOpenAPI(t)
	for _, op := range d.operations() {
		method, path, _ := strings.Cut(op, " ")
		id := d.operation(t, method, path).OperationID
		if id == "" {
			t.Errorf("%s has no operationId", op)
		} else if other, dup := seen[id]; dup {
			t.Errorf("operationId %s is used by %s and %s", id, other, op)
		}
		seen[id] = op
	}
}

// TestOpenAPIAgentRoutes checks that every agent route of the default agent
// (the JSON-RPC endpoint, the card, the HTTP+JSON binding) is in the
// document under /agents/{name} too, as the same operation with the agent's
// name.
func TestOpenAPIAgentRoutes(t *testing.T) {
	d := readOpenAPI(t)
	agentPath := func(p string) string {
		if p == "/" {
			return "/agents/{name}"
		}
		return "/agents/{name}" + p
	}
	n := 0
	for path, item := range d.Paths {
		if path == "/agents" || strings.HasPrefix(path, "/agents/") || !isAgentRoute(path) {
			continue
		}
		for _, m := range httpMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			n++
			agent, ok := d.Paths[agentPath(path)][m]
			if !ok {
				t.Errorf("%s %s is not in the document as %s %s", strings.ToUpper(m), path, strings.ToUpper(m), agentPath(path))
				continue
			}
			root, other := stripOperation(t, raw), stripOperation(t, agent)
			wantParams := append([]any{map[string]any{"$ref": "#/components/parameters/AgentName"}}, root["parameters"].([]any)...)
			if !jsonEqual(other["parameters"], wantParams) {
				t.Errorf("%s %s: parameters %v; want the AgentName and those of %s", strings.ToUpper(m), agentPath(path), other["parameters"], path)
			}
			delete(root, "parameters")
			delete(other, "parameters")
			if !jsonEqual(root, other) {
				t.Errorf("%s %s differs from %s %s beyond its name, summary and description", strings.ToUpper(m), agentPath(path), strings.ToUpper(m), path)
			}
		}
	}
	if n < 14 {
		t.Fatalf("found %d operations of the default agent; want at least 14", n)
	}
}

// isAgentRoute reports whether a root path is one of an agent's routes:
// the JSON-RPC endpoint, the card, the HTTP+JSON binding.
func isAgentRoute(path string) bool {
	return path == "/" || path == "/.well-known/agent-card.json" || path == "/extendedAgentCard" ||
		strings.HasPrefix(path, "/message:") || path == "/tasks" || strings.HasPrefix(path, "/tasks/")
}

// stripOperation returns an operation without what may differ between an
// agent's operation and the default agent's.
func stripOperation(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var op map[string]any
	if err := json.Unmarshal(raw, &op); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"operationId", "tags", "summary", "description"} {
		delete(op, k)
	}
	if op["parameters"] == nil {
		op["parameters"] = []any{}
	}
	return op
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// openAPIServer is the API over the fuzz tests' fake Temporal, with every
// optional route on: the Temporal UI codec endpoint too.
func openAPIServer(t *testing.T, auth *guard.Authenticator) *gin.Engine {
	t.Helper()
	handle := func(workflow.Context, *workflows.Task) error { return nil }
	reg, err := engine.NewRegistry(
		&workflows.Agent{Name: "travel", Handle: handle},
		&workflows.Agent{Name: "echo", Handle: handle},
	)
	if err != nil {
		t.Fatal(err)
	}
	store, err := blobstore.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A real database: /policies answers from it.
	db, err := models.Open(filepath.Join(t.TempDir(), "a2aflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	h := api.New(fuzzTemporal{}, reg, api.Config{
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxBodyBytes:   64 << 10,
		Payloads:       store,
		UICodecOrigins: []string{"http://ui.example"},
		Auth:           auth,
		Policies:       db,
	}).Handler()
	engine, ok := h.(*gin.Engine)
	if !ok {
		t.Fatalf("Handler() is a %T, not the Gin engine", h)
	}
	return engine
}

// ginPath turns a Gin route into the document's form: ":id" is "{id}".
func ginPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}

// TestOpenAPIGinRoutes checks that every route the Gin engine registers is
// in the document. A catch-all route registered for every method (r.Any:
// an agent's HTTP+JSON binding, the codec endpoint) is in it when some
// operation lies under its prefix; the HTTP+JSON operations themselves are
// checked against a2a-go's routes (TestOpenAPIA2AGoRoutes).
func TestOpenAPIGinRoutes(t *testing.T) {
	d := readOpenAPI(t)
	engine := openAPIServer(t, nil)
	methods := map[string]int{}
	for _, r := range engine.Routes() {
		methods[r.Path]++
	}
	ops := d.operations()
	for _, r := range engine.Routes() {
		path := ginPath(r.Path)
		if prefix, _, catchAll := strings.Cut(path, "*"); catchAll {
			if methods[r.Path] < 7 {
				t.Errorf("%s %s: a catch-all route for some methods only; describe its operations", r.Method, r.Path)
				continue
			}
			if !slices.ContainsFunc(ops, func(op string) bool {
				_, p, _ := strings.Cut(op, " ")
				return strings.HasPrefix(p, prefix)
			}) {
				t.Errorf("%s %s: no operation under %s in the document", r.Method, r.Path, prefix)
			}
			continue
		}
		if !d.has(r.Method, path) {
			t.Errorf("Gin route %s %s is not in the document (as %s %s)", r.Method, r.Path, r.Method, path)
		}
	}
}

// TestOpenAPIA2AGoRoutes checks that every route of a2a-go's HTTP+JSON
// transport (a2asrv.NewRESTHandler, read from a2a-go's source in the module
// cache) is in the document, for the default agent and under
// /agents/{name}.
func TestOpenAPIA2AGoRoutes(t *testing.T) {
	d := readOpenAPI(t)
	routes := a2aGoRESTRoutes(t)
	if len(routes) < 12 {
		t.Fatalf("read %d routes from a2a-go's NewRESTHandler: %v; the parser missed some", len(routes), routes)
	}
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		for _, p := range []string{path, "/agents/{name}" + path} {
			if !d.has(method, p) {
				t.Errorf("a2a-go route %s is not in the document as %s %s", r, method, p)
			}
		}
	}
}

// a2aGoRESTRoutes reads the routes a2asrv.NewRESTHandler registers, as
// "METHOD /path" with the document's parameter names: the mux patterns,
// whose paths a2a-go builds with the helpers of its internal/rest package,
// evaluated; "/tasks/{idAndAction}" expanded into the actions its handler
// cuts off ("/tasks/{id}:cancel") and, when the handler also takes the
// bare ID, "/tasks/{id}".
func a2aGoRESTRoutes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/a2aproject/a2a-go/v2").Output()
	if err != nil {
		t.Skipf("cannot locate a2a-go's source (go list): %v", err)
	}
	dir := strings.TrimSpace(string(out))
	fset := token.NewFileSet()
	srv, err := parser.ParseFile(fset, filepath.Join(dir, "a2asrv", "rest.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := parser.ParseFile(fset, filepath.Join(dir, "internal", "rest", "rest.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{} // rest's functions and PathBuilder's methods by name
	for _, decl := range rest.Decls {
		if f, ok := decl.(*ast.FuncDecl); ok {
			funcs[f.Name.Name] = f
		}
	}
	handlers := map[string]*ast.FuncDecl{} // restHandler's methods
	var newHandler *ast.FuncDecl
	for _, decl := range srv.Decls {
		f, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		if f.Recv != nil {
			handlers[f.Name.Name] = f
		} else if f.Name.Name == "NewRESTHandler" {
			newHandler = f
		}
	}
	if newHandler == nil {
		t.Fatal("a2asrv/rest.go has no NewRESTHandler")
	}
	ev := pathEvaluator{funcs: funcs}
	var routes []string
	ast.Inspect(newHandler.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "HandleFunc" {
			return true
		}
		pattern, err := ev.eval(call.Args[0], nil)
		if err != nil {
			t.Fatalf("a2asrv/rest.go:%d: %v", fset.Position(call.Pos()).Line, err)
		}
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			t.Fatalf("a2asrv/rest.go:%d: pattern %q has no method", fset.Position(call.Pos()).Line, pattern)
		}
		prefix, isAction := strings.CutSuffix(path, "{idAndAction}")
		if !isAction {
			routes = append(routes, method+" "+path)
			return true
		}
		sel, _ := call.Args[1].(*ast.SelectorExpr)
		if sel == nil || handlers[sel.Sel.Name] == nil {
			t.Fatalf("a2asrv/rest.go:%d: cannot find the handler of %s", fset.Position(call.Pos()).Line, pattern)
		}
		actions, bare := taskActions(handlers[sel.Sel.Name])
		for _, a := range actions {
			routes = append(routes, method+" "+prefix+"{id}"+a)
		}
		if bare {
			routes = append(routes, method+" "+prefix+"{id}")
		}
		return true
	})
	return routes
}

// taskActions returns the ":action" suffixes a /tasks/{idAndAction}
// handler cuts off (strings.CutSuffix(idAndAction, ":cancel")), and
// whether it also passes idAndAction itself on (a bare task ID).
func taskActions(f *ast.FuncDecl) (actions []string, bare bool) {
	ast.Inspect(f.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if sel.Sel.Name == "CutSuffix" && len(call.Args) == 2 {
			if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					actions = append(actions, s)
				}
			}
			return true
		}
		if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == "idAndAction" && strings.HasPrefix(sel.Sel.Name, "handle") {
			bare = true
		}
		return true
	})
	return actions, bare
}

// pathEvaluator evaluates the string expressions a2a-go builds its paths
// with: literals, +, parameters, calls of internal/rest's helpers and
// PathBuilder's methods (one return statement each), and the zero
// PathBuilder's prefix ("").
type pathEvaluator struct {
	funcs map[string]*ast.FuncDecl
}

func (e pathEvaluator) eval(x ast.Expr, env map[string]string) (string, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", fmt.Errorf("literal %s is not a string", x.Value)
		}
		return strconv.Unquote(x.Value)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", fmt.Errorf("operator %s", x.Op)
		}
		l, err := e.eval(x.X, env)
		if err != nil {
			return "", err
		}
		r, err := e.eval(x.Y, env)
		return l + r, err
	case *ast.ParenExpr:
		return e.eval(x.X, env)
	case *ast.Ident:
		v, ok := env[x.Name]
		if !ok {
			return "", fmt.Errorf("unknown identifier %s", x.Name)
		}
		return v, nil
	case *ast.SelectorExpr:
		if x.Sel.Name == "prefix" {
			return "", nil // the v1.0 paths have none
		}
		return "", fmt.Errorf("unknown field %s", x.Sel.Name)
	case *ast.CallExpr:
		var name string
		switch fun := x.Fun.(type) {
		case *ast.SelectorExpr: // rest.MakeXPath(...) or builder.X(...)
			name = fun.Sel.Name
		case *ast.Ident:
			name = fun.Name
		}
		f := e.funcs[name]
		if f == nil {
			return "", fmt.Errorf("unknown function %s", name)
		}
		var params []string
		for _, field := range f.Type.Params.List {
			for _, n := range field.Names {
				params = append(params, n.Name)
			}
		}
		if len(params) != len(x.Args) {
			return "", fmt.Errorf("%s takes %d arguments, called with %d", name, len(params), len(x.Args))
		}
		inner := map[string]string{}
		for i, a := range x.Args {
			v, err := e.eval(a, env)
			if err != nil {
				return "", err
			}
			inner[params[i]] = v
		}
		if len(f.Body.List) != 1 {
			return "", fmt.Errorf("%s is not a single return statement", name)
		}
		ret, ok := f.Body.List[0].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			return "", fmt.Errorf("%s is not a single return statement", name)
		}
		return e.eval(ret.Results[0], inner)
	}
	return "", fmt.Errorf("cannot evaluate %T", x)
}

// openAPIRequest builds a request for an operation of the document from
// the document itself: path parameters and headers from their examples
// (or their first enum value), the body from the request body's example.
func openAPIRequest(t *testing.T, d openAPIDoc, method, path string) *http.Request {
	t.Helper()
	op := d.operation(t, method, path)
	target := path
	header := http.Header{}
	for _, p := range op.Parameters {
		value := ""
		if len(p.Example) > 0 {
			_ = json.Unmarshal(p.Example, &value)
		} else if len(p.Schema.Enum) > 0 {
			value = p.Schema.Enum[0]
		}
		switch p.In {
		case "path":
			if value == "" {
				value = "x"
			}
			target = strings.ReplaceAll(target, "{"+p.Name+"}", value)
		case "header":
			if value != "" {
				header.Set(p.Name, value)
			}
		}
	}
	var body []byte
	if op.RequestBody != nil {
		content, ok := op.RequestBody.Content["application/json"]
		if !ok {
			t.Fatalf("%s %s: a request body that is not JSON", method, path)
		}
		body = content.Example
		if len(body) == 0 {
			names := make([]string, 0, len(content.Examples))
			for name := range content.Examples {
				names = append(names, name)
			}
			sort.Strings(names)
			if len(names) > 0 {
				body = content.Examples[names[0]].Value
			}
		}
		if len(body) == 0 {
			t.Fatalf("%s %s: the request body has no example", method, path)
		}
		header.Set("Content-Type", "application/json")
	}
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header = header
	return req
}

// serveWithin serves req on h within a deadline: streams end with it.
func serveWithin(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	ctx, cancel := context.WithTimeout(req.Context(), 3*time.Second)
	defer cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	return rec
}

// routingMiss reports why an answer says that no route serves the request
// (Gin's or a2a-go's 404, a 405, a redirect, no such agent), or "".
func routingMiss(rec *httptest.ResponseRecorder) string {
	body := rec.Body.Bytes()
	switch {
	case rec.Code == http.StatusMethodNotAllowed:
		return "405"
	case rec.Code >= 300 && rec.Code < 400:
		return fmt.Sprintf("redirected (%d) to %s", rec.Code, rec.Header().Get("Location"))
	case rec.Code != http.StatusNotFound:
		return ""
	case !json.Valid(body):
		return "404 not in JSON"
	case bytes.Contains(body, []byte(`"METHOD_NOT_FOUND"`)):
		return "404 METHOD_NOT_FOUND"
	case bytes.Contains(body, []byte(`no agent named`)):
		return "404 no such agent"
	}
	return ""
}

// TestOpenAPIOperationsServed requests every operation of the document
// from the server (built from the document alone: its examples) and checks
// that a route serves it, and that the request and the answer fit the
// document (streams aside, whose events it describes in prose).
func TestOpenAPIOperationsServed(t *testing.T) {
	d := readOpenAPI(t)
	engine := openAPIServer(t, nil)
	registered := map[string]bool{}
	for _, r := range engine.Routes() {
		registered[r.Method+" "+ginPath(r.Path)] = true
	}
	v := openAPIValidator(t)
	for _, op := range d.operations() {
		method, path, _ := strings.Cut(op, " ")
		if op == "GET /readyz" && !registered[op] {
			t.Logf("%s: not registered yet; skipped", op)
			continue
		}
		req := openAPIRequest(t, d, method, path)
		rec := serveWithin(engine, req)
		if why := routingMiss(rec); why != "" {
			t.Errorf("%s (as %s %s): no route serves it: %s %s", op, req.Method, req.URL, why, truncateBody(rec.Body.Bytes()))
			continue
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			continue
		}
		v.check(t, openAPIRequest(t, d, method, path), rec)
	}
}

// docValidator validates requests and answers against the document;
// credentials are not its business.
type docValidator struct {
	v     validator.Validator
	model *v3.Document
	paths []docPath
}

// docPath is one path of the document as a pattern: libopenapi-validator
// (v0.16) takes /tasks/known-task:cancel for /tasks/{id}, so the test finds
// the path itself, the one with the most literal text winning.
type docPath struct {
	template string
	pattern  *regexp.Regexp
	literal  int
}

func openAPIValidator(t *testing.T) *docValidator {
	t.Helper()
	doc, err := libopenapi.NewDocument(api.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	dv := &docValidator{model: &model.Model,
		v: validator.NewValidatorFromV3Model(&model.Model, config.WithoutSecurityValidation(), config.WithFormatAssertions())}
	param := regexp.MustCompile(`\{[^}]+\}`)
	for template := range model.Model.Paths.PathItems.KeysFromOldest() {
		var expr strings.Builder
		literal, last := 0, 0
		for _, m := range param.FindAllStringIndex(template, -1) {
			expr.WriteString(regexp.QuoteMeta(template[last:m[0]]) + "[^/]+")
			literal += m[0] - last
			last = m[1]
		}
		expr.WriteString(regexp.QuoteMeta(template[last:]))
		literal += len(template) - last
		dv.paths = append(dv.paths, docPath{template: template, pattern: regexp.MustCompile("^" + expr.String() + "$"), literal: literal})
	}
	return dv
}

// check validates req and the answer rec against the document.
func (dv *docValidator) check(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	best := -1
	for i, p := range dv.paths {
		if p.pattern.MatchString(req.URL.Path) && (best < 0 || p.literal > dv.paths[best].literal) {
			best = i
		}
	}
	if best < 0 {
		t.Errorf("%s %s: no path of the document matches", req.Method, req.URL)
		return
	}
	template := dv.paths[best].template
	item := dv.model.Paths.PathItems.GetOrZero(template)
	_, reqErrs := dv.v.ValidateHttpRequestWithPathItem(req, item, template)
	_, respErrs := dv.v.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, rec.Result(), item, template)
	for _, e := range append(reqErrs, respErrs...) {
		t.Errorf("%s %s (%s) → %d: %v", req.Method, req.URL, template, rec.Code, e)
	}
	if len(reqErrs)+len(respErrs) > 0 {
		t.Logf("answer: %s", truncateBody(rec.Body.Bytes()))
	}
}

// TestOpenAPIResponses checks some answers, error answers among them and
// with authentication on, against the document's schemas.
func TestOpenAPIResponses(t *testing.T) {
	auth, err := guard.NewAuthenticator(context.Background(), guard.AuthConfig{
		APIKeys: map[string]string{"alice": "k-alice-1234"},
		JWT:     guard.JWTConfig{HS256Secret: []byte(strings.Repeat("s", 32))},
	})
	if err != nil {
		t.Fatal(err)
	}
	open, guarded := openAPIServer(t, nil), openAPIServer(t, auth)
	v := openAPIValidator(t)
	rpc := func(path, body string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		return req
	}
	get := func(path string, header ...string) *http.Request {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("A2A-Version", "1.0")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return req
	}
	for _, c := range []struct {
		name   string
		server *gin.Engine
		req    func() *http.Request
		status int
	}{
		{"agent card", open, func() *http.Request { return get("/.well-known/agent-card.json") }, 200},
		{"agent card with security schemes", guarded, func() *http.Request { return get("/agents/echo/.well-known/agent-card.json") }, 200},
		{"extended agent card", guarded, func() *http.Request { return get("/extendedAgentCard", "X-API-Key", "k-alice-1234") }, 200},
		{"agents", open, func() *http.Request { return get("/agents") }, 200},
		{"liveness", open, func() *http.Request { return get("/healthz") }, 200},
		{"task", open, func() *http.Request { return get("/tasks/known-task?historyLength=1") }, 200},
		{"tasks", open, func() *http.Request { return get("/agents/echo/tasks?pageSize=2&includeArtifacts=true") }, 200},
		{"task not found", open, func() *http.Request { return get("/tasks/nope") }, 404},
		{"not cancelable", open, func() *http.Request {
			req := get("/tasks/known-task:cancel")
			req.Method = http.MethodPost
			return req
		}, 400}, // A2A 1.0.1 §5.4 (1.0.0: 409)
		{"unauthenticated", guarded, func() *http.Request { return get("/tasks/known-task") }, 401},
		{"JSON-RPC result", open, func() *http.Request {
			return rpc("/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"known-task"}}`)
		}, 200},
		{"JSON-RPC list", open, func() *http.Request {
			return rpc("/agents/echo", `{"jsonrpc":"2.0","id":"l","method":"ListTasks","params":{"pageSize":1}}`)
		}, 200},
		{"JSON-RPC error", open, func() *http.Request {
			return rpc("/agents/echo", `{"jsonrpc":"2.0","id":"x","method":"GetTask","params":{"id":"nope"}}`)
		}, 200},
		{"JSON-RPC unauthenticated", guarded, func() *http.Request {
			return rpc("/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"known-task"}}`)
		}, 401},
		{"approval not found", open, func() *http.Request { return get("/approvals/known-task-approval-9") }, 404},
		{"timeline not found", open, func() *http.Request { return get("/agents/echo/tasks/nope/timeline?pageSize=10") }, 404},
		{"timeline page token", open, func() *http.Request { return get("/tasks/known-task/timeline?pageToken=bad") }, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := serveWithin(c.server, c.req())
			if rec.Code != c.status {
				t.Fatalf("status %d; want %d: %s", rec.Code, c.status, truncateBody(rec.Body.Bytes()))
			}
			v.check(t, c.req(), rec)
		})
	}
}

// TestOpenAPIServed checks /openapi.json and /docs: public with
// authentication on, the embedded document as it is, and a page that loads
// nothing from elsewhere.
func TestOpenAPIServed(t *testing.T) {
	auth, err := guard.NewAuthenticator(context.Background(), guard.AuthConfig{APIKeys: map[string]string{"alice": "k-alice-1234"}})
	if err != nil {
		t.Fatal(err)
	}
	h := openAPIServer(t, auth)
	rec := serveWithin(h, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), api.OpenAPIDocument) {
		t.Fatalf("GET /openapi.json: %d, %d bytes; want 200 and the document", rec.Code, rec.Body.Len())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET /openapi.json: Content-Type %q", ct)
	}
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
	req.Header.Set("If-None-Match", etag)
	if rec := serveWithin(h, req); rec.Code != http.StatusNotModified || etag == "" {
		t.Errorf("GET /openapi.json with If-None-Match %s: %d; want 304", etag, rec.Code)
	}

	rec = serveWithin(h, httptest.NewRequest(http.MethodGet, "/docs", nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{`url: "openapi.json"`, "SwaggerUIBundle", "validatorUrl: null", ".swagger-ui"} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /docs: the page lacks %q", want)
		}
	}
	for _, external := range []string{"<script src", "<link ", "@import"} {
		if strings.Contains(page, external) {
			t.Errorf("GET /docs: the page loads something (%q); everything should be inline", external)
		}
	}

	req = httptest.NewRequest(http.MethodGet, "/docs", nil)
	req.Header.Set("Accept-Encoding", "br, gzip;q=0.8")
	rec = serveWithin(h, req)
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Body.Len() >= len(page)/2 {
		t.Errorf("GET /docs accepting gzip: Content-Encoding %q, %d bytes of %d", rec.Header().Get("Content-Encoding"), rec.Body.Len(), len(page))
	}
}
