package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// TestMain builds the a2aflow binary only when a benchmark is to run:
// `go test ./tests/...` (make test) runs this package too, without
// -bench, and nothing here needs the binary then.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	harness.Main(m)
}
