//go:build tools

// Package compose pins the Docker Compose CLI plugin that .ci/run builds from
// the Go module proxy, so that tests/compose_test.go can validate
// docker-compose.yml with `docker compose config` on a machine whose docker
// client has no compose plugin (and no engine).
package compose

import _ "github.com/docker/compose/v2/cmd"
