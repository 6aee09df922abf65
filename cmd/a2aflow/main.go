// Command a2aflow serves the demo agents (package demo) over A2A, every
// task a durable Temporal workflow. A program serving its own agents is the
// same line with its agents; see package a2aflow.
//
//	a2aflow serve      all in one: embedded Temporal + Web UI, worker, HTTP API
//	a2aflow temporal   the embedded Temporal server and Web UI alone
//	a2aflow api        the stateless HTTP API against any Temporal frontend
//	a2aflow worker     the workflow and activity worker against any Temporal frontend
//
// Every flag has an A2AFLOW_* environment fallback; `a2aflow help serve`
// lists them.
package main

import (
	"github.com/a2aflow/a2aflow"
	"github.com/a2aflow/a2aflow/cmd/a2aflow/internal/demo"
)

func main() { a2aflow.Main(demo.All()...) }
