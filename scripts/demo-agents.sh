#!/usr/bin/env bash
# demo-agents.sh — three a2aflow instances that know each other, supervised.
#
#   alpha   A2A API http://127.0.0.1:4200   Temporal 127.0.0.1:7300   UI http://127.0.0.1:8300
#   beta    A2A API http://127.0.0.1:4201   Temporal 127.0.0.1:7301   UI http://127.0.0.1:8301
#   gamma   A2A API http://127.0.0.1:4202   Temporal 127.0.0.1:7302   UI http://127.0.0.1:8302
#
# Each instance is a plain `a2aflow serve` with its OWN embedded Temporal
# server and data dir (DEMO_DIR/NAME), as three independent deployments of
# three organisations would be: nothing is shared but A2A over HTTP, so a
# delegation from alpha to beta to gamma really crosses three task stores,
# and killing one instance takes down its Temporal with it, which is what the
# demo is about. One Temporal per instance also needs no extra flags (a shared
# Temporal would need the `temporal`/`worker`/`api` split and one task queue
# per instance). The Temporal frontends use 7300-7302 and the UIs 8300-8302,
# next to the defaults 7233/8233 but clear of them, so a `make run` or a
# `temporal server start-dev` can keep running beside the demo. The Temporal
# services' internal ports are picked free by each server.
#
# Peers (`serve --peer`): every instance knows the other two by name, at their
# router (NAME=http://127.0.0.1:PORT/agents/router), and beta also knows
# gamma's travel agent as gamma-travel. So, sent to alpha's router,
# "@beta @gamma-travel Book a flight" goes alpha -> beta -> gamma's travel agent.
#
# Supervision: when an instance dies (a crash, a kill -9), the script logs it
# and starts it again after ~1 s on the same ports and data dir, as systemd
# would; its tasks resume from its embedded Temporal. Ctrl-C or SIGTERM stops
# the three (SIGTERM, then SIGKILL after 20 s) and leaves no process behind.
#
# Environment:
#   A2AFLOW_BIN      the a2aflow binary (default: bin/a2aflow of this repository)
#   DEMO_DIR         data dirs, logs (NAME.log), pid files (NAME.pid) and the shell's
#                    own messages (supervisor.log) (default ./data/demo)
#   DEMO_LOG_LEVEL   --log-level of the instances (default info)
#   DEMO_HEALTH_TIMEOUT  seconds to wait for an instance to answer /healthz (default 120)
# A2AFLOW_DATABASE, A2AFLOW_PEERS, A2AFLOW_PUBLIC_URL and A2AFLOW_TEMPORAL_UI_URL
# are ignored: they would make the three share a database or a URL.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${A2AFLOW_BIN:-$here/../bin/a2aflow}
DEMO_DIR=${DEMO_DIR:-./data/demo}
LOG_LEVEL=${DEMO_LOG_LEVEL:-info}
HEALTH_TIMEOUT=${DEMO_HEALTH_TIMEOUT:-120}
unset A2AFLOW_DATABASE A2AFLOW_PEERS A2AFLOW_PUBLIC_URL A2AFLOW_TEMPORAL_UI_URL

names=(alpha beta gamma)
api_ports=(4200 4201 4202)
temporal_ports=(7300 7301 7302)
ui_ports=(8300 8301 8302)

# Messages of this script go to stdout, errors to fd 3 (the original stderr):
# once the instances run, the shell's own stderr goes to DEMO_DIR/supervisor.log,
# as bash reports each killed child there ("Killed  $BIN serve ...").
exec 3>&2
say() { printf '%s demo-agents: %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { say "error: $*" >&3; exit 1; }

[ -x "$BIN" ] || die "no a2aflow binary at $BIN: run \`make build\` or set A2AFLOW_BIN"
command -v curl >/dev/null || die "curl is needed to check the instances' /healthz"
mkdir -p "$DEMO_DIR" || die "cannot create DEMO_DIR $DEMO_DIR"
DEMO_DIR=$(cd "$DEMO_DIR" && pwd)

# port_taken PORT: something accepts connections on 127.0.0.1:PORT.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

taken=()
for i in 0 1 2; do
	for spec in "${api_ports[$i]}:A2A API" "${temporal_ports[$i]}:Temporal frontend" "${ui_ports[$i]}:Temporal UI"; do
		port=${spec%%:*}
		if port_taken "$port"; then
			taken+=("  127.0.0.1:$port (${names[$i]}'s ${spec#*:})")
		fi
	done
done
if [ ${#taken[@]} -gt 0 ]; then
	say "error: ports the demo needs are in use:" >&3
	printf '%s\n' "${taken[@]}" >&3
	die "is a demo already running (pid files in $DEMO_DIR)? stop it, or free the ports"
fi

# set_peers I: peer_args becomes the --peer flags of instance I.
set_peers() {
	local i=$1 j
	peer_args=()
	for j in 0 1 2; do
		[ "$j" = "$i" ] && continue
		peer_args+=(--peer "${names[$j]}=http://127.0.0.1:${api_ports[$j]}/agents/router")
	done
	if [ "${names[$i]}" = beta ]; then
		peer_args+=(--peer "gamma-travel=http://127.0.0.1:${api_ports[2]}/agents/travel")
	fi
}

pids=("" "" "")
started=(0 0 0)     # when each was last started (epoch seconds)
quick_deaths=(0 0 0) # deaths within 10 s of a start, in a row
pending=(1 1 1)     # 1 until the last start answered /healthz
stopping=0

start_instance() {
	local i=$1 name=${names[$i]}
	set_peers "$i"
	mkdir -p "$DEMO_DIR/$name"
	printf '\n==== %s demo-agents: starting %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$name" >>"$DEMO_DIR/$name.log"
	"$BIN" serve \
		--http-addr "127.0.0.1:${api_ports[$i]}" \
		--temporal-addr "127.0.0.1:${temporal_ports[$i]}" \
		--ui-addr "127.0.0.1:${ui_ports[$i]}" \
		--data-dir "$DEMO_DIR/$name" \
		--log-level "$LOG_LEVEL" \
		"${peer_args[@]}" >>"$DEMO_DIR/$name.log" 2>&1 3>&- &
	pids[$i]=$!
	started[$i]=$(date +%s)
	pending[$i]=1
	echo "${pids[$i]}" >"$DEMO_DIR/$name.pid"
}

healthy() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${api_ports[$1]}/healthz" 2>/dev/null; }
alive() { [ -n "${pids[$1]}" ] && kill -0 "${pids[$1]}" 2>/dev/null; }

stop_all() {
	[ "$stopping" = 1 ] && return
	stopping=1
	trap '' INT TERM
	say "stopping alpha, beta and gamma"
	local i deadline
	for i in 0 1 2; do alive "$i" && kill -TERM "${pids[$i]}" 2>/dev/null; done
	deadline=$(($(date +%s) + 20))
	for i in 0 1 2; do
		while alive "$i" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
		if alive "$i"; then
			say "${names[$i]} did not stop within 20 s: kill -9"
			kill -KILL "${pids[$i]}" 2>/dev/null
		fi
		[ -n "${pids[$i]}" ] && wait "${pids[$i]}" 2>/dev/null
		rm -f "$DEMO_DIR/${names[$i]}.pid"
	done
	say "stopped"
}
trap 'stop_all; exit 0' INT TERM
trap 'stop_all' EXIT
exec 2>>"$DEMO_DIR/supervisor.log"
# Job control puts each instance in its own process group: Ctrl-C reaches this
# script alone, which stops the three in order instead of racing them.
set -m

for i in 0 1 2; do start_instance "$i"; done
say "started alpha, beta and gamma; logs in $DEMO_DIR/{alpha,beta,gamma}.log"

# Wait until the three answer /healthz; an instance that exits meanwhile is a
# start-up error (a port, a data dir), not something to retry.
deadline=$(($(date +%s) + HEALTH_TIMEOUT))
for i in 0 1 2; do
	until healthy "$i"; do
		if ! alive "$i"; then
			say "error: ${names[$i]} exited during start-up; the end of $DEMO_DIR/${names[$i]}.log:" >&3
			tail -n 20 "$DEMO_DIR/${names[$i]}.log" >&3
			exit 1
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			say "error: ${names[$i]} did not answer /healthz within ${HEALTH_TIMEOUT}s; see $DEMO_DIR/${names[$i]}.log" >&3
			exit 1
		fi
		sleep 0.5 & wait $!
	done
	pending[$i]=0
done

bin_hint=$BIN
[ "$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")" = "$(cd "$here/.." && pwd)/bin/a2aflow" ] && bin_hint=bin/a2aflow
say "the three agents are healthy"
for i in 0 1 2; do
	printf '  %-6s A2A API http://127.0.0.1:%s (router: /agents/router)  Temporal UI http://127.0.0.1:%s  pid %s\n' \
		"${names[$i]}" "${api_ports[$i]}" "${ui_ports[$i]}" "${pids[$i]}"
done
cat <<EOF

  Peers: each knows the other two by name (their routers); beta also knows gamma-travel
  (gamma's travel agent). Try, in another terminal:

    $bin_hint send --agent http://127.0.0.1:4200/agents/router "@beta @gamma-travel Book a flight"
    $bin_hint agents list --data-dir $DEMO_DIR/alpha

  kill -9 \$(cat $DEMO_DIR/beta.pid) and see it come back. Ctrl-C stops the three.

EOF

# Supervise: restart a dead instance after ~1 s; report when it is healthy again.
while :; do
	for i in 0 1 2; do
		name=${names[$i]}
		if ! alive "$i"; then
			wait "${pids[$i]}" 2>/dev/null
			code=$?
			now=$(date +%s)
			if [ $((now - started[$i])) -lt 10 ]; then
				quick_deaths[$i]=$((quick_deaths[$i] + 1))
			else
				quick_deaths[$i]=0
			fi
			if [ "${quick_deaths[$i]}" -ge 5 ]; then
				say "error: $name died 5 times within 10 s of starting; giving up. The end of $DEMO_DIR/$name.log:" >&3
				tail -n 20 "$DEMO_DIR/$name.log" >&3
				exit 1
			fi
			say "$name (pid ${pids[$i]}) died (exit status $code); restarting it in 1 s on the same ports and data dir"
			sleep 1 & wait $!
			[ "$stopping" = 1 ] && break
			start_instance "$i"
			say "$name restarted (pid ${pids[$i]})"
		elif [ "${pending[$i]}" = 1 ] && healthy "$i"; then
			pending[$i]=0
			say "$name is healthy again (pid ${pids[$i]})"
		fi
	done
	sleep 0.5 & wait $!
done
