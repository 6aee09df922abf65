package api

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// apiPath is this package's import path.
const apiPath = "github.com/a2aflow/a2aflow/internal/api"

// packageOrder reads the order of the API's packages from this package's
// doc: the indented list "//\tname  what it holds", first to last.
func packageOrder(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := regexp.MustCompile(`^//\t([a-z0-9]+) {2,}`)
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := entry.FindStringSubmatch(sc.Text()); m != nil {
			order = append(order, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return order
}

// TestPackagesImportInOrder: each package under internal/api imports only
// the packages before it in doc.go's list (the ones it is built on), and
// the three ways in (a2abinding, resources, mcpserver) none of one
// another. A package missing from the list fails too.
func TestPackagesImportInOrder(t *testing.T) {
	order := packageOrder(t)
	if len(order) < 6 {
		t.Fatalf("doc.go lists the packages %v, want the API's", order)
	}
	peers := []string{"a2abinding", "resources", "mcpserver"}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg, ok := apiPackage(fields[0])
		if !ok || pkg == "" {
			continue // internal/api itself assembles them all
		}
		at := slices.Index(order, pkg)
		if at < 0 {
			t.Errorf("internal/api/%s is not in doc.go's list of the API's packages", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := apiPackage(imp)
			if !ok || dep == pkg {
				continue
			}
			switch i := slices.Index(order, dep); {
			case dep == "":
				t.Errorf("internal/api/%s imports internal/api, which assembles it", pkg)
			case i >= at:
				t.Errorf("internal/api/%s imports internal/api/%s, which comes after it in doc.go", pkg, dep)
			case slices.Contains(peers, pkg) && slices.Contains(peers, dep):
				t.Errorf("internal/api/%s imports internal/api/%s: the ways in import none of one another", pkg, dep)
			}
		}
	}
}

// apiPackage returns the package of internal/api an import path names, by
// its first element under internal/api ("guard" for guard/guardtest too),
// "" for internal/api itself.
func apiPackage(importPath string) (string, bool) {
	if importPath == apiPath {
		return "", true
	}
	rest, ok := strings.CutPrefix(importPath, apiPath+"/")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "/")
	return name, true
}
