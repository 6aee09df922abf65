package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Size limits of the code a program links (docs/architecture.md, "The
// layers"): what is measured is every non-test, non-generated Go file of
// the module outside tests/, examples/, bench/, deploy/ and testdata.
const (
	// maxFunctionLines is the longest a function may be, from its func
	// keyword to its closing brace: one that needs more is several.
	maxFunctionLines = 100
	// maxPackageShare is the largest share of the measured lines one
	// package folder may hold, in percent.
	maxPackageShare = 12.0
)

// measuredFile is one Go file the size limits count.
type measuredFile struct {
	rel   string // module-relative path
	src   []byte
	lines int
}

// measuredFiles reads the files the size limits count.
func measuredFiles(t *testing.T) []measuredFile {
	t.Helper()
	var files []measuredFile
	err := filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			first := strings.Split(rel, "/")[0]
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" ||
				first == "tests" || first == "examples" || first == "bench" || first == "deploy") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if ast.IsGenerated(mustParse(t, p, src)) {
			return nil
		}
		files = append(files, measuredFile{rel: rel, src: src, lines: strings.Count(string(src), "\n")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func mustParse(t *testing.T, path string, src []byte) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFunctionsAreShort fails on a function longer than maxFunctionLines.
func TestFunctionsAreShort(t *testing.T) {
	for _, f := range measuredFiles(t) {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f.rel, f.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFunctionLines {
				t.Errorf("%s: %s is %d lines, more than %d: make it several functions", f.rel, fd.Name.Name, n, maxFunctionLines)
			}
		}
	}
}

// TestPackagesAreSmall fails when one package folder holds more than
// maxPackageShare of the measured lines.
func TestPackagesAreSmall(t *testing.T) {
	perDir := map[string]int{}
	total := 0
	for _, f := range measuredFiles(t) {
		perDir[filepath.ToSlash(filepath.Dir(f.rel))] += f.lines
		total += f.lines
	}
	dirs := make([]string, 0, len(perDir))
	for d := range perDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if share := 100 * float64(perDir[d]) / float64(total); share > maxPackageShare {
			t.Errorf("%s holds %.1f%% of the module's %d measured lines, more than %.0f%%: split it by concern", d, share, total, maxPackageShare)
		}
	}
}
