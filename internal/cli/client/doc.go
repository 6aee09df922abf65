// Package client is a2aflow's A2A client: the verbs that talk to any A2A
// agent, a2aflow's or not (card, send, get, list, cancel, subscribe, push),
// and the REPL (repl), which talks to the local agent and the agents it
// connects to, and can serve the local agents itself (:listen).
//
// Exit codes tell a script how a task stands (client.go).
package client
