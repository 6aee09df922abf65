package demo_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTestedCode checks that the Go code the README shows is the
// code of this package's example tests, which compile and run it: the
// agent of "Writing an agent" (greeter_example_test.go) and the gated tool
// of "LLM agents under human control" (payables_example_test.go).
func TestREADMEShowsTestedCode(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, tc := range []struct{ section, fn, file string }{
		{"## Writing an agent", "func Greeter()", "greeter_example_test.go"},
		{"## LLM agents under human control", "func Payables(", "payables_example_test.go"},
	} {
		_, section, ok := strings.Cut(readme, "\n"+tc.section+"\n")
		if !ok {
			t.Errorf("README.md has no %q section", tc.section)
			continue
		}
		section, _, _ = strings.Cut(section, "\n## ")
		var block string
		for rest := section; ; {
			var found bool
			if _, rest, found = strings.Cut(rest, "```go\n"); !found {
				break
			}
			if block, rest, found = strings.Cut(rest, "```\n"); found && strings.Contains(block, tc.fn) {
				break
			}
			block = ""
		}
		if block == "" {
			t.Errorf("the README's %q section has no Go block with %s", tc.section, tc.fn)
			continue
		}
		self, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(self), "\n"+block) {
			t.Errorf("the README's %s is not the code of cmd/a2aflow/internal/demo/%s; README block:\n%s", tc.fn, tc.file, block)
		}
	}
}
