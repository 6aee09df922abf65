// Package server is the part of the a2aflow command line that serves
// agents: the process commands serve (everything in one process), api (the
// A2A API), worker (the task workflows and activities) and temporal (the
// embedded Temporal server alone), their settings (flags, A2AFLOW_*
// variables and the config file, config.go and configfile.go) and
// `config print`.
//
// Every process command starts in start.go, which orders the start-up steps
// once for all, each step for the roles the command runs (embedded Temporal,
// API, worker), and chooses how hints of new task events travel between
// processes; process.go says which flags come with which role. The
// operator's tools (package operator) take what they need of these settings
// from tools.go.
package server
