package layers

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const (
	// moduleRoot is the a2aflow module's root, from this package's folder.
	moduleRoot = "../.."
	// modulePath is the module's import path.
	modulePath = "github.com/a2aflow/a2aflow"
	// tableHeading is the heading of the section whose first table lists
	// the layers, in docs/architecture.md.
	tableHeading = "## The layers"
	// rootName names the module's root package in the table.
	rootName = "a2aflow"
)

// layer is one row of the table: its number (1 the top) and the patterns
// of its packages, module-relative ("." the root; "x/..." x and every
// package under it).
type layer struct {
	n        int
	patterns []string
}

// readLayers reads the table of layers from docs/architecture.md.
func readLayers(t *testing.T) []layer {
	t.Helper()
	path := filepath.Join(moduleRoot, "docs", "architecture.md")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers, err := parseLayers(bufio.NewScanner(f))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return layers
}

var quoted = regexp.MustCompile("`([^`]+)`")

// parseLayers reads the first table after tableHeading: a row
// "| N | `pattern`, `pattern` | what they are |" per layer.
func parseLayers(lines *bufio.Scanner) ([]layer, error) {
	var layers []layer
	inSection, inTable := false, false
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		switch {
		case line == tableHeading:
			inSection = true
			continue
		case !inSection:
			continue
		case strings.HasPrefix(line, "## "):
			return layers, checkLayers(layers) // the next section
		case strings.HasPrefix(line, "|"):
			inTable = true
		case inTable:
			return layers, checkLayers(layers)
		default:
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		n, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil || len(cells) < 2 {
			continue // the header and its rule
		}
		l := layer{n: n}
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			p := m[1]
			if p == rootName {
				p = "."
			}
			l.patterns = append(l.patterns, p)
		}
		layers = append(layers, l)
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	return layers, checkLayers(layers)
}

// checkLayers reports a table that is missing, or whose rows are not
// numbered 1, 2, 3... or hold no package.
func checkLayers(layers []layer) error {
	if len(layers) < 2 {
		return fmt.Errorf("no table of layers under %q", tableHeading)
	}
	for i, l := range layers {
		if l.n != i+1 || len(l.patterns) == 0 {
			return fmt.Errorf("row %d of the layers is layer %d with packages %v: want layer %d, with packages", i+1, l.n, l.patterns, i+1)
		}
	}
	return nil
}

// layerOf returns the layer of a module-relative package path: the one
// whose pattern matching it is the longest.
func layerOf(layers []layer, pkg string) (int, bool) {
	best, n := -1, 0
	for _, l := range layers {
		for _, p := range l.patterns {
			base, tree := strings.CutSuffix(p, "/...")
			if pkg == base || tree && strings.HasPrefix(pkg, base+"/") {
				if len(p) > best {
					best, n = len(p), l.n
				}
			}
		}
	}
	return n, best >= 0
}

// moduleImports returns the module's packages (module-relative paths) and
// the packages of the module each imports, test files aside.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = moduleRoot
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := relative(fields[0])
		if !ok {
			t.Fatalf("go list lists %s, outside the module", fields[0])
		}
		imports[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := relative(imp); ok {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}
	return imports
}

// relative returns the module-relative path of an import path of the
// module ("." its root).
func relative(importPath string) (string, bool) {
	if importPath == modulePath {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, modulePath+"/")
	return rel, ok
}

// violations lists the packages in no layer and the imports that run up.
func violations(layers []layer, imports map[string][]string) []string {
	var out []string
	for pkg, deps := range imports {
		n, ok := layerOf(layers, pkg)
		if !ok {
			out = append(out, fmt.Sprintf("%s is in no layer: add it to the row of its layer", pkg))
			continue
		}
		for _, dep := range deps {
			if m, ok := layerOf(layers, dep); ok && m < n {
				out = append(out, fmt.Sprintf("%s (layer %d) imports %s (layer %d, above it)", pkg, n, dep, m))
			}
		}
	}
	return out
}

// TestImportsRunDown: no package of the module imports one of a layer
// above its own, and every package is in a layer of the table in
// docs/architecture.md.
func TestImportsRunDown(t *testing.T) {
	layers := readLayers(t)
	imports := moduleImports(t)
	if len(imports) < 20 {
		t.Fatalf("go list found %d packages, want the module's", len(imports))
	}
	for _, v := range violations(layers, imports) {
		t.Error(v)
	}
}

// TestImportsRunDownCatchesABadImport: the check above fails on an import
// that runs up a layer, and on a package in no layer; a package's own
// layer and the ones below are fine.
func TestImportsRunDownCatchesABadImport(t *testing.T) {
	table := `# Architecture

## The layers

| layer | packages | what they are |
|---|---|---|
| 1 | ` + "`cmd/...`" + ` | commands |
| 2 | ` + "`a2aflow`, `internal/api/...`" + ` | the root, the API |
| 3 | ` + "`workflows`" + ` | the author API |
| 4 | ` + "`internal/...`" + ` | the rest |

## Next
`
	layers, err := parseLayers(bufio.NewScanner(strings.NewReader(table)))
	if err != nil {
		t.Fatal(err)
	}
	got := violations(layers, map[string][]string{
		"cmd/a2aflow":        {".", "workflows", "internal/wire"},
		".":                  {"internal/api", "internal/api/guard"},
		"internal/api":       {"internal/api/guard", "workflows"},
		"internal/api/guard": {"internal/wire"},
		"workflows":          {"internal/wire"},
		"internal/wire":      {"workflows"},
		"llm":                {"workflows"},
	})
	want := map[string]bool{
		"internal/wire (layer 4) imports workflows (layer 3, above it)": true,
		"llm is in no layer: add it to the row of its layer":            true,
	}
	if len(got) != len(want) {
		t.Errorf("violations %q, want %d", got, len(want))
	}
	for _, v := range got {
		if !want[v] {
			t.Errorf("unexpected violation %q", v)
		}
	}
}
