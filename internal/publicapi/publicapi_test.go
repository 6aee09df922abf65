package publicapi

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api.txt from the code")

// moduleRoot is the a2aflow module's root, from this package's folder.
const moduleRoot = "../.."

// public are the packages a program may import, relative to moduleRoot.
var public = []string{".", "llm", "pushverify", "workflows", "workflows/workflowstest"}

// TestPublicPackages: every package of the module outside internal/ is one
// of the public ones (or a command, a test, a folder of its own module).
func TestPublicPackages(t *testing.T) {
	var found []string
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(moduleRoot, path)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" ||
			rel == "internal" || rel == "cmd" || rel == "tests") {
			return filepath.SkipDir
		}
		if rel != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				// A command (package main, e.g. bench/peers' programs)
				// cannot be imported: no surface.
				if !isMain(f) {
					found = append(found, filepath.ToSlash(rel))
				}
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	want := slices.Sorted(slices.Values(public))
	if !slices.Equal(found, want) {
		t.Errorf("public packages %v, want %v: put implementation packages under internal/, or add a deliberate public one here and to testdata/api.txt", found, want)
	}
}

// isMain reports whether a Go file is of package main.
func isMain(file string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly)
	return err == nil && f.Name.Name == "main"
}

// TestPublicAPI compares the exported declarations of the public packages
// (their signatures, without comments) with testdata/api.txt.
func TestPublicAPI(t *testing.T) {
	var out bytes.Buffer
	for _, rel := range public {
		if err := listPackage(&out, rel); err != nil {
			t.Fatal(err)
		}
	}
	const golden = "testdata/api.txt"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, out.Bytes()) {
		t.Errorf("the public API changed: if that is deliberate, run `go test ./internal/publicapi -update` and review the diff of %s\n%s",
			golden, lineDiff(string(want), out.String()))
	}
}

// listPackage writes the exported declarations of the package in rel: its
// files as the go command builds them here (build constraints applied),
// without the tests.
func listPackage(w *bytes.Buffer, rel string) error {
	dir := filepath.Join(moduleRoot, rel)
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	files := make([]*ast.File, 0, len(bp.GoFiles))
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	importPath := "github.com/a2aflow/a2aflow/" + rel
	d, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "package %s // %s\n", d.Name, strings.TrimSuffix(importPath, "/."))
	for _, v := range d.Consts {
		decl(w, fset, v.Decl)
	}
	for _, v := range d.Vars {
		decl(w, fset, v.Decl)
	}
	for _, f := range d.Funcs {
		decl(w, fset, f.Decl)
	}
	for _, ty := range d.Types {
		decl(w, fset, ty.Decl)
		for _, v := range ty.Consts {
			decl(w, fset, v.Decl)
		}
		for _, v := range ty.Vars {
			decl(w, fset, v.Decl)
		}
		for _, f := range ty.Funcs {
			decl(w, fset, f.Decl)
		}
		for _, f := range ty.Methods {
			decl(w, fset, f.Decl)
		}
	}
	w.WriteString("\n")
	return nil
}

// decl writes a declaration without its comments, bodies and values of
// vars (a var's initial value is not its API).
func decl(w *bytes.Buffer, fset *token.FileSet, node ast.Decl) {
	switch d := node.(type) {
	case *ast.FuncDecl:
		f := *d
		f.Doc, f.Body = nil, nil
		node = &f
	case *ast.GenDecl:
		g := *d
		g.Doc = nil
		var specs []ast.Spec
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				v := *s
				v.Doc, v.Comment = nil, nil
				if g.Tok == token.VAR {
					v.Values = nil
				}
				specs = append(specs, &v)
			case *ast.TypeSpec:
				ts := *s
				ts.Doc, ts.Comment = nil, nil
				ts.Type = stripComments(ts.Type)
				specs = append(specs, &ts)
			}
		}
		g.Specs = specs
		node = &g
	}
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	if err := cfg.Fprint(&buf, token.NewFileSet(), node); err != nil {
		fmt.Fprintf(w, "// %v\n", err)
		return
	}
	w.Write(buf.Bytes())
	w.WriteString("\n")
}

// stripComments drops the field comments of struct and interface types.
func stripComments(e ast.Expr) ast.Expr {
	switch t := e.(type) {
	case *ast.StructType:
		st := *t
		st.Fields = stripFields(t.Fields)
		return &st
	case *ast.InterfaceType:
		it := *t
		it.Methods = stripFields(t.Methods)
		return &it
	}
	return e
}

func stripFields(fl *ast.FieldList) *ast.FieldList {
	if fl == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range fl.List {
		c := *f
		c.Doc, c.Comment = nil, nil
		c.Type = stripComments(f.Type)
		out.List = append(out.List, &c)
	}
	return out
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
