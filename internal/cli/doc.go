// Package cli is the a2aflow command line: the root command, which puts
// together the commands of its three parts, and the entry points a2aflow.Main
// and a2aflow.New run (cmdutil holds what every command shares):
//
//   - server: the processes that serve agents (serve, api, worker,
//     temporal), their settings and config file (config print);
//   - client: the A2A client verbs (card, send, get, list, cancel,
//     subscribe, push) and the REPL, against any A2A agent;
//   - operator: the operator's tools (approvals, approve, reject,
//     waitpoint, agents, keys, deployments, replay).
//
// The root package also renders docs/config.md, the reference of every
// setting, and docs/cli.md, of every command (configref.go and
// clireference.go, from the templates in templates/; go generate
// ./internal/cli). cmd/a2aflow is a2aflow.Main with the built-in agents.
package cli

//go:generate go test -run TestConfigReference|TestCLIReference -update .
