# a2aflow — the two commands a newcomer needs are `make run` and `make test`;
# `make check` is the fast gate while working, `make help` lists every target.

GO            ?= go
BIN           ?= bin/a2aflow
WORKFLOWCHECK := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0
# staticcheck's checks are chosen in staticcheck.conf (why each one left out).
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Packages that do not link the embedded Temporal server run with -race; the
# server-linking ones (its own tests, the command line's root, server and
# operator packages, the root package's and the end-to-end tests, which build
# the binary) run without, as a race build of the server takes too long for CI.
# Both lists are computed only by the targets that use them (`=`, not `:=`).
MODULE         = $(shell $(GO) list -m)
LIGHT_PKGS     = $(shell $(GO) list ./... | grep -v -x -e $(MODULE) -e '.*/temporalserver.*' -e '.*/tests' -e '.*/tests/.*' -e '.*/cmd/a2aflow' -e '.*/internal/cli' -e '.*/internal/cli/server' -e '.*/internal/cli/operator')
HEAVY_PKGS    := . ./internal/temporalserver/... ./internal/cli ./internal/cli/server ./internal/cli/operator ./cmd/a2aflow ./tests/...
# The heavy packages but the end-to-end ones, for `make check`.
HEAVY_UNIT    := . ./internal/temporalserver/... ./internal/cli ./internal/cli/server ./internal/cli/operator ./cmd/a2aflow

.PHONY: help run build test check lint examples vet workflowcheck bench bench-peers fuzz clean demo-agents cluster cluster-down cluster-test kubernetes helm

## help: list the targets and what each does
help:
	@awk '/^## /{sub(/^## /,""); if ($$0 ~ /^[a-z-]+: /) printf "\n"; print "  " $$0}' $(MAKEFILE_LIST)

## run: build and start `a2aflow serve` (embedded Temporal + UI, worker, API on :8080)
run: build
	./$(BIN) serve

## demo-agents: three supervised `a2aflow serve` that know each other as peers: alpha, beta, gamma
## on API ports 4200-4202, each with its own embedded Temporal (frontend 7300-7302, UI 8300-8302, clear
## of the 7233/8233 defaults) and data dir DEMO_DIR/NAME (default data/demo); a killed one restarts.
## See scripts/demo-agents.sh.
demo-agents: build
	A2AFLOW_BIN=./$(BIN) ./scripts/demo-agents.sh

## cluster: the production shape on this machine, all on loopback: PostgreSQL, two Temporal server nodes
## (Temporal's own server command at the embedded version, deploy/cluster/go.mod), two `a2aflow worker`,
## two `a2aflow api` on 8081 and 8082; state in CLUSTER_DIR (default data/cluster). See scripts/cluster.sh
## (down, status, kill NODE, start NODE) and the README's "Production shape / scale-out".
cluster: build
	A2AFLOW_BIN=./$(BIN) ./scripts/cluster.sh up

cluster-down:
	./scripts/cluster.sh down

## cluster-test: the fault test on a cluster of its own (kill -9 of a worker, an api and a Temporal node,
## PostgreSQL restarted, under load); CLUSTER_TASKS (default 300) tasks, about 4 minutes. CI runs it after `make test`.
cluster-test:
	A2AFLOW_CLUSTER_TEST=1 A2AFLOW_CLUSTER_TASKS=$(or $(CLUSTER_TASKS),300) \
		$(GO) test -count=1 -timeout 30m -v -run '^TestCluster$$' ./tests/

## build: build the a2aflow binary into bin/, trimmed: no symbol table or DWARF (-s -w), no local paths (-trimpath)
build:
	$(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/a2aflow

## test: every gate CI runs — vet, staticcheck, workflowcheck, unit tests with -race, end-to-end tests
test: vet lint workflowcheck examples kubernetes helm
	$(GO) test -race -count=1 $(LIGHT_PKGS)
	$(GO) test -count=1 -timeout 40m $(HEAVY_PKGS)

## check: the fast gate while working (under 5 minutes on a warm cache): vet, staticcheck,
## workflowcheck and every unit test, without the end-to-end packages (./tests/...) and the examples.
## Test results are cached, as `go test` caches them: a package that did not change is not run again.
check: vet lint workflowcheck
	$(GO) test -race $(LIGHT_PKGS)
	$(GO) test $(HEAVY_UNIT)

## lint: staticcheck (pinned; its checks in staticcheck.conf) finds nothing
lint:
	$(GO) run $(STATICCHECK) ./...

## examples: each example module (its own go.mod) is tidy against this one, vets, passes workflowcheck and its tests
examples:
	cd examples/approval-pipeline && $(GO) mod tidy -diff && $(GO) vet ./... && \
		$(GO) run $(WORKFLOWCHECK) ./... && $(GO) test -count=1 ./...
	cd examples/tck-agent && $(GO) mod tidy -diff && $(GO) vet ./... && \
		$(GO) run $(WORKFLOWCHECK) ./... && $(GO) test -count=1 ./...
	cd examples/itk-agent && $(GO) mod tidy -diff && $(GO) vet ./... && \
		$(GO) run $(WORKFLOWCHECK) ./... && $(GO) test -count=1 ./...

## kubernetes: deploy/kubernetes's manifests decode strictly into the Kubernetes API's own types
## (k8s.io/api, offline) and fit together: selectors, probes on /healthz and /readyz, PDBs, HPAs
kubernetes:
	cd deploy/kubernetes && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) test -count=1 ./...

## helm: deploy/helm/a2aflow, the Helm chart: helm lint and helm template (Helm's Go packages,
## helm.sh/helm/v3, pinned in deploy/helm/go.mod) for three value sets, every rendered manifest
## decoded strictly into the Kubernetes API's types and checked to fit together
helm:
	cd deploy/helm && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) test -count=1 ./...

## vet: go.mod is tidy, every Go file is gofmt-formatted and go vet passes
vet:
	$(GO) mod tidy -diff
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then echo "gofmt -w these files:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

## workflowcheck: workflow code must stay deterministic
workflowcheck:
	$(GO) run $(WORKFLOWCHECK) ./...

## bench: latency and throughput against raw Temporal SDK calls on the same server
bench:
	$(GO) test ./tests/bench -run '^$$' -bench . -benchtime=200x -count=1 -timeout 120m

## bench-peers: the same small agent on a2aflow, the OpenAI Agents SDK on Temporal, LangGraph and Google ADK
## (bench/peers), against one fake OpenAI-compatible model: turn latency, memory per 1,000 parked
## conversations, what a kill -9 mid-question loses. Installs the peers from PyPI into bench/peers/.venv-*
## (pinned); not part of `make test`. BENCH_PEERS_FLAGS sets the sample sizes; the table is in docs/performance.md.
bench-peers:
	$(GO) build -o bin/peers-a2aflow ./bench/peers/a2aflow
	./bench/peers/venvs.sh
	$(GO) run ./bench/peers/driver -bin bin/peers-a2aflow -dir bench/peers $(BENCH_PEERS_FLAGS)

## fuzz: short fuzzing of the JSON-RPC and HTTP+JSON request decoding, FUZZTIME (default 20s) per
## target; `make test` runs their seed corpora. A failing input lands in internal/api/testdata/fuzz/: commit it.
fuzz:
	$(GO) test ./internal/api/ -run '^$$' -fuzz '^FuzzJSONRPC$$' -fuzztime=$(or $(FUZZTIME),20s)
	$(GO) test ./internal/api/ -run '^$$' -fuzz '^FuzzREST$$' -fuzztime=$(or $(FUZZTIME),20s)

clean:
	rm -rf bin data
