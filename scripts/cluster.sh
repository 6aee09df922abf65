#!/usr/bin/env bash
# A production-shaped a2aflow on one machine, all on loopback: PostgreSQL
# (Debian's binaries), a Temporal cluster of two server nodes built from
# Temporal's own server command (go.temporal.io/server/cmd/server, the version
# a2aflow embeds; deploy/cluster/go.mod pins it) sharing that database, and two
# `a2aflow worker` and two `a2aflow api` processes against it, a2aflow's own
# records in PostgreSQL too. `make cluster` runs `up`.
#
#   scripts/cluster.sh up            build what is missing, start what is not running
#   scripts/cluster.sh down          stop every process (SIGTERM, then SIGKILL); data stays
#   scripts/cluster.sh status        each process: pid, up/down, its port
#   scripts/cluster.sh kill NODE     kill -9 one process (postgres temporal1 temporal2
#                                    worker1 worker2 api1 api2)
#   scripts/cluster.sh stop NODE     stop one process cleanly (SIGTERM; PostgreSQL's fast
#                                    shutdown, SIGINT, which ends its clients' sessions)
#   scripts/cluster.sh start NODE    start one process again (waits until it answers)
#   scripts/cluster.sh env           the addresses, as shell variables
#
# All state lives under CLUSTER_DIR (default data/cluster): postgres/ (the
# database), temporal/ (each node's config), logs/NAME.log, pids/NAME.pid,
# bin/ (the Temporal binaries), blobs/ (the payload store api and worker
# share) and secrets.key. `rm -rf data/cluster` after `down` starts afresh.
#
# Ports (each overridable by its variable):
#   CLUSTER_PG_PORT=5433         PostgreSQL
#   CLUSTER_TEMPORAL1_PORT=7233  Temporal node 1: frontend gRPC; it takes this port
#   CLUSTER_TEMPORAL2_PORT=7333    and the next 9 (membership, HTTP, history, matching,
#                                  worker service, metrics)
#   CLUSTER_API1_PORT=8081       a2aflow api 1 (dials Temporal node 1)
#   CLUSTER_API2_PORT=8082       a2aflow api 2 (dials Temporal node 2)
#   CLUSTER_WORKER1_PORT=8091    a2aflow worker 1's health port (dials node 1)
#   CLUSTER_WORKER2_PORT=8092    a2aflow worker 2's health port (dials node 2)
# A2AFLOW_BIN (default bin/a2aflow, built when missing) is the a2aflow binary.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLUSTER_DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
mkdir -p "$CLUSTER_DIR"
CLUSTER_DIR="$(cd "$CLUSTER_DIR" && pwd)"
A2AFLOW_BIN="${A2AFLOW_BIN:-$ROOT/bin/a2aflow}"
case "$A2AFLOW_BIN" in /*) ;; *) A2AFLOW_BIN="$PWD/$A2AFLOW_BIN" ;; esac
PG_PORT="${CLUSTER_PG_PORT:-5433}"
T1_PORT="${CLUSTER_TEMPORAL1_PORT:-7233}"
T2_PORT="${CLUSTER_TEMPORAL2_PORT:-7333}"
API1_PORT="${CLUSTER_API1_PORT:-8081}"
API2_PORT="${CLUSTER_API2_PORT:-8082}"
W1_PORT="${CLUSTER_WORKER1_PORT:-8091}"
W2_PORT="${CLUSTER_WORKER2_PORT:-8092}"
NAMESPACE="${CLUSTER_NAMESPACE:-default}"
SHARDS="${CLUSTER_SHARDS:-4}"
PG_USER=a2aflow
BIN="${CLUSTER_BIN:-$CLUSTER_DIR/bin}"
LOGS="$CLUSTER_DIR/logs"
PIDS="$CLUSTER_DIR/pids"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

NODES=(postgres temporal1 temporal2 worker1 worker2 api1 api2)

die() { echo "cluster: $*" >&2; exit 1; }
log() { echo "cluster: $*"; }

pidof_node() { [ -f "$PIDS/$1.pid" ] && cat "$PIDS/$1.pid" || true; }
alive() { local pid; pid="$(pidof_node "$1")"; [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

# port_of NODE: the port a process answers on.
port_of() {
  case "$1" in
    postgres) echo "$PG_PORT" ;;
    temporal1) echo "$T1_PORT" ;;
    temporal2) echo "$T2_PORT" ;;
    worker1) echo "$W1_PORT" ;;
    worker2) echo "$W2_PORT" ;;
    api1) echo "$API1_PORT" ;;
    api2) echo "$API2_PORT" ;;
    *) die "unknown node $1 (one of: ${NODES[*]})" ;;
  esac
}

# ports_of NODE: every port a process listens on.
ports_of() {
  case "$1" in
    temporal1 | temporal2)
      local base; base="$(port_of "$1")"
      seq "$base" $((base + 9)) ;;
    *) port_of "$1" ;;
  esac
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# check_ports NODE: refuse, naming the port, when one is taken by another process.
check_ports() {
  local p
  for p in $(ports_of "$1"); do
    if port_busy "$p"; then
      die "port $p (for $1) is already in use on 127.0.0.1: stop what listens there or set another (see the ports in $0)"
    fi
  done
}

# wait_port NODE PORT SECONDS: until the process accepts connections on PORT.
wait_port() {
  local node="$1" port="$2" secs="$3" i
  for ((i = 0; i < secs * 5; i++)); do
    port_busy "$port" && return 0
    alive "$node" || die "$node exited while starting; see $LOGS/$node.log:
$(tail -n 20 "$LOGS/$node.log")"
    sleep 0.2
  done
  die "$node does not answer on port $port after ${secs}s; see $LOGS/$node.log"
}

# wait_http NODE URL SECONDS: until GET URL answers 200.
wait_http() {
  local node="$1" url="$2" secs="$3" i
  for ((i = 0; i < secs * 5; i++)); do
    if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then return 0; fi
    alive "$node" || die "$node exited while starting; see $LOGS/$node.log:
$(tail -n 20 "$LOGS/$node.log")"
    sleep 0.2
  done
  die "$node: $url is not ready after ${secs}s; see $LOGS/$node.log"
}

# launch NODE CMD...: run CMD in its own session, output to its log, pid recorded.
launch() {
  local node="$1"; shift
  mkdir -p "$LOGS" "$PIDS"
  echo "=== $(date -u +%FT%TZ) start: $*" >>"$LOGS/$node.log"
  setsid "$@" >>"$LOGS/$node.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$node.pid"
}

pg_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && { echo "$d"; return; }
  done
  command -v initdb >/dev/null && { dirname "$(readlink -f "$(command -v initdb)")"; return; }
  die "no PostgreSQL: initdb and postgres are neither in /usr/lib/postgresql/*/bin nor on PATH (apt-get install postgresql)"
}

# AS_PG prefixes PostgreSQL's commands: it refuses to run as root, so as
# root it runs as the postgres user.
AS_PG=()
if [ "$(id -u)" = 0 ]; then AS_PG=(setpriv --reuid=postgres --regid=postgres --init-groups); fi

pg_dsn() { echo "postgres://$PG_USER@127.0.0.1:$PG_PORT/$1?sslmode=disable"; }

build() {
  if [ ! -x "$A2AFLOW_BIN" ]; then
    log "building $A2AFLOW_BIN"
    (cd "$ROOT" && go build -o "$A2AFLOW_BIN" ./cmd/a2aflow)
  fi
  mkdir -p "$BIN"
  local tool
  for tool in temporal-server:go.temporal.io/server/cmd/server temporal-sql-tool:go.temporal.io/server/cmd/tools/sql namespace:./namespace; do
    if [ ! -x "$BIN/${tool%%:*}" ]; then
      log "building ${tool#*:} (deploy/cluster/go.mod)"
      (cd "$ROOT/deploy/cluster" && go build -o "$BIN/${tool%%:*}" "${tool#*:}")
    fi
  done
}

start_postgres() {
  local bin data="$CLUSTER_DIR/postgres"
  bin="$(pg_bin)"
  if [ ! -f "$data/PG_VERSION" ]; then
    log "initdb $data"
    mkdir -p "$data"
    if [ "${#AS_PG[@]}" -gt 0 ]; then
      id postgres >/dev/null 2>&1 || die "running as root and there is no postgres user to run PostgreSQL as"
      chown postgres:postgres "$data"
    fi
    chmod 700 "$data"
    "${AS_PG[@]}" "$bin/initdb" -D "$data" -U "$PG_USER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-instructions >>"$LOGS/postgres.log" 2>&1 \
      || die "initdb failed; see $LOGS/postgres.log"
  fi
  launch postgres "${AS_PG[@]}" "$bin/postgres" -D "$data" -p "$PG_PORT" -c listen_addresses=127.0.0.1 \
    -c unix_socket_directories= -c max_connections=300
  wait_port postgres "$PG_PORT" 60
  local i
  for ((i = 0; i < 150; i++)); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d postgres && return 0
    sleep 0.2
  done
  die "PostgreSQL does not accept connections after 30s; see $LOGS/postgres.log"
}

# setup_schema: Temporal's databases and their schemas with Temporal's own
# SQL tool (idempotent: create skips an existing database, setup-schema -v 0.0
# an initialised one, update-schema applies the versions not yet applied),
# and a2aflow's database.
setup_schema() {
  local schemas sql=("$BIN/temporal-sql-tool" --plugin postgres12 --ep 127.0.0.1 -p "$PG_PORT" -u "$PG_USER")
  schemas="$(cd "$ROOT/deploy/cluster" && go list -m -f '{{.Dir}}' go.temporal.io/server)/schema/postgresql/v12"
  local db dir
  for db in temporal:temporal temporal_visibility:visibility; do
    dir="${db#*:}"; db="${db%%:*}"
    "${sql[@]}" --db "$db" create >>"$LOGS/schema.log" 2>&1 || true
    "${sql[@]}" --db "$db" setup-schema -v 0.0 >>"$LOGS/schema.log" 2>&1 || true
    "${sql[@]}" --db "$db" update-schema -d "$schemas/$dir/versioned" >>"$LOGS/schema.log" 2>&1 \
      || die "update-schema of $db failed; see $LOGS/schema.log"
  done
  "${sql[@]}" --db a2aflow create >>"$LOGS/schema.log" 2>&1 || true
}

# temporal_config N: node N's config, the same database and shards for both.
temporal_config() {
  local n="$1" base file
  base="$(port_of "temporal$n")"
  file="$CLUSTER_DIR/temporal/node$n.yaml"
  mkdir -p "$CLUSTER_DIR/temporal"
  cat >"$file" <<EOF
# Temporal node $n of the a2aflow cluster (written by scripts/cluster.sh).
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: $SHARDS
  datastores:
    default:
      sql:
        pluginName: postgres12
        databaseName: temporal
        connectAddr: 127.0.0.1:$PG_PORT
        connectProtocol: tcp
        user: $PG_USER
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    visibility:
      sql:
        pluginName: postgres12
        databaseName: temporal_visibility
        connectAddr: 127.0.0.1:$PG_PORT
        connectProtocol: tcp
        user: $PG_USER
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: 127.0.0.1:$((base + 9))
services:
  frontend:
    rpc: {grpcPort: $base, membershipPort: $((base + 1)), httpPort: $((base + 2)), bindOnLocalHost: true}
  history:
    rpc: {grpcPort: $((base + 3)), membershipPort: $((base + 4)), bindOnLocalHost: true}
  matching:
    rpc: {grpcPort: $((base + 5)), membershipPort: $((base + 6)), bindOnLocalHost: true}
  worker:
    rpc: {grpcPort: $((base + 7)), membershipPort: $((base + 8)), bindOnLocalHost: true}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$base
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: $ROOT/deploy/temporal/dynamicconfig.yaml
  pollInterval: 10s
EOF
  echo "$file"
}

start_temporal() {
  local n="$1" file
  file="$(temporal_config "$n")"
  launch "temporal$n" "$BIN/temporal-server" --config-file "$file" --allow-no-auth start
  wait_port "temporal$n" "$(port_of "temporal$n")" 120
}

secrets_key() {
  # A cluster dir of an earlier release keeps its key as push.key.
  [ -f "$CLUSTER_DIR/push.key" ] && [ ! -f "$CLUSTER_DIR/secrets.key" ] && mv "$CLUSTER_DIR/push.key" "$CLUSTER_DIR/secrets.key"
  [ -f "$CLUSTER_DIR/secrets.key" ] || head -c 32 /dev/urandom | base64 >"$CLUSTER_DIR/secrets.key"
  cat "$CLUSTER_DIR/secrets.key"
}

# a2aflow_env N: what api N and worker N share; they dial Temporal node N.
a2aflow_env() {
  local n="$1"
  echo "A2AFLOW_TEMPORAL_ADDR=127.0.0.1:$(port_of "temporal$n")"
  echo "A2AFLOW_NAMESPACE=$NAMESPACE"
  echo "A2AFLOW_SECRETS_KEY=$(secrets_key)"
  echo "A2AFLOW_PAYLOAD_STORE=$CLUSTER_DIR/blobs"
  echo "A2AFLOW_DATA_DIR=$CLUSTER_DIR/a2aflow$n"
  echo "A2AFLOW_LOG_LEVEL=${A2AFLOW_LOG_LEVEL:-warn}"
}

start_a2aflow() {
  local node="$1" n="${1: -1}" port
  port="$(port_of "$node")"
  local -a envs
  mapfile -t envs < <(a2aflow_env "$n")
  mkdir -p "$CLUSTER_DIR/blobs" "$CLUSTER_DIR/a2aflow$n"
  case "$node" in
    worker*)
      launch "$node" env "${envs[@]}" "$A2AFLOW_BIN" worker --database "$(pg_dsn a2aflow)" --health-addr "127.0.0.1:$port" ;;
    api*)
      launch "$node" env "${envs[@]}" "$A2AFLOW_BIN" api --database "$(pg_dsn a2aflow)" --http-addr "127.0.0.1:$port" --public-url "http://127.0.0.1:$port" ;;
  esac
  wait_http "$node" "http://127.0.0.1:$port/readyz" 120
}

start_node() {
  local node="$1"
  if alive "$node"; then
    log "$node is running (pid $(pidof_node "$node"))"
    return
  fi
  check_ports "$node"
  case "$node" in
    postgres) start_postgres ;;
    temporal1) start_temporal 1 ;;
    temporal2) start_temporal 2 ;;
    worker* | api*) start_a2aflow "$node" ;;
    *) die "unknown node $node (one of: ${NODES[*]})" ;;
  esac
  log "$node is up (pid $(pidof_node "$node"), port $(port_of "$node"))"
}

up() {
  local node
  # Every port first: a taken one is one clear error before anything starts.
  for node in "${NODES[@]}"; do alive "$node" || check_ports "$node"; done
  build
  mkdir -p "$LOGS" "$PIDS"
  start_node postgres
  setup_schema
  start_node temporal1
  start_node temporal2
  "$BIN/namespace" --address "127.0.0.1:$T1_PORT" --namespace "$NAMESPACE" >>"$LOGS/schema.log" 2>&1 \
    || die "could not register namespace $NAMESPACE; see $LOGS/schema.log and $LOGS/temporal1.log"
  for node in worker1 worker2 api1 api2; do start_node "$node"; done
  status
  cat <<EOF

a2aflow cluster is up (state in $CLUSTER_DIR)
  A2A API       http://127.0.0.1:$API1_PORT  http://127.0.0.1:$API2_PORT
  Temporal      127.0.0.1:$T1_PORT  127.0.0.1:$T2_PORT  (namespace $NAMESPACE, $SHARDS history shards)
  PostgreSQL    $(pg_dsn postgres)
  logs          $LOGS/NAME.log
EOF
}

stop_node() { # NODE SIGNAL
  local node="$1" sig="$2" pid i
  pid="$(pidof_node "$node")"
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$node (pid $pid) did not stop on SIG$sig; kill -9"
      kill -9 "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -f "$PIDS/$node.pid"
}

down() {
  local i
  for ((i = ${#NODES[@]} - 1; i >= 0; i--)); do
    # PostgreSQL's smart shutdown waits for clients: fast shutdown is SIGINT.
    if [ "${NODES[$i]}" = postgres ]; then stop_node postgres INT; else stop_node "${NODES[$i]}" TERM; fi
  done
  log "down (state kept in $CLUSTER_DIR)"
}

status() {
  local node pid state
  printf '%-10s %-8s %-6s %s\n' NODE PID STATE PORT
  for node in "${NODES[@]}"; do
    pid="$(pidof_node "$node")"
    if alive "$node"; then state=up; else state=down; fi
    printf '%-10s %-8s %-6s %s\n' "$node" "${pid:--}" "$state" "$(port_of "$node")"
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  kill)
    [ -n "${2:-}" ] || die "usage: $0 kill NODE (one of: ${NODES[*]})"
    port_of "$2" >/dev/null
    alive "$2" || die "$2 is not running"
    pid="$(pidof_node "$2")"
    kill -9 "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$PIDS/$2.pid"
    log "$2 killed (kill -9 $pid)" ;;
  stop)
    [ -n "${2:-}" ] || die "usage: $0 stop NODE (one of: ${NODES[*]})"
    port_of "$2" >/dev/null
    alive "$2" || die "$2 is not running"
    if [ "$2" = postgres ]; then stop_node postgres INT; else stop_node "$2" TERM; fi
    log "$2 stopped" ;;
  start)
    [ -n "${2:-}" ] || die "usage: $0 start NODE (one of: ${NODES[*]})"
    port_of "$2" >/dev/null
    start_node "$2" ;;
  env)
    echo "CLUSTER_DIR=$CLUSTER_DIR"
    echo "A2A_URLS=http://127.0.0.1:$API1_PORT,http://127.0.0.1:$API2_PORT"
    echo "TEMPORAL_ADDRS=127.0.0.1:$T1_PORT,127.0.0.1:$T2_PORT"
    echo "DATABASE=$(pg_dsn a2aflow)" ;;
  *) die "usage: $0 up|down|status|kill NODE|stop NODE|start NODE|env" ;;
esac
