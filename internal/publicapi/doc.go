// Package publicapi holds the test that lists a2aflow's public API: the
// packages a program built on a2aflow may import (the root package, the
// author API of workflows and llm, and workflowstest) and every exported
// name of each, with its signature. The list is testdata/api.txt; a change
// to the public API changes it, so the change is deliberate and reviewed
// (go test ./internal/publicapi -update rewrites it). Every exported name is
// a promise under semantic versioning.
package publicapi
