package tests

import (
	"testing"

	"github.com/a2aflow/a2aflow/tests/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
