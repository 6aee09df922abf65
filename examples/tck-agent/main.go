// Command tck-agent serves the agent the A2A TCK tests (package tck) with a2aflow: all three
// bindings, each task a Temporal workflow on the embedded server. See README.md.
//
//	go run . serve --addr 127.0.0.1:9999
package main

import (
	"github.com/a2aflow/a2aflow"
	"github.com/a2aflow/a2aflow/examples/tck-agent/tck"
)

func main() {
	a2aflow.Main(tck.Agent())
}
