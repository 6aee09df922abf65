// Package fakes holds what the end-to-end tests and the benchmarks put
// around a2aflow in place of the world: remote A2A agents (RemoteAgent
// serves an executor with its card; ExtAgent is the scripted one most tests
// delegate to) and OpenAI-compatible models (the request and answer kit in
// openai.go, LiveModel for streamed answers).
//
// It is test code in ordinary files, so that both packages can import it;
// nothing outside tests/ should.
package fakes
