#!/bin/sh
# Registers the namespace a2aflow uses, once Temporal answers: the
# temporal-namespace service of docker-compose.yml runs it
# (temporalio/admin-tools) before a2aflow's api and worker start. An
# existing namespace is left as it is. a2aflow's api and worker add the
# search attributes they need themselves.
set -eu

: "${NAMESPACE:=default}"
: "${RETENTION:=720h}"

tries=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "Temporal at $TEMPORAL_ADDRESS is not healthy" >&2; exit 1; }
  sleep 2
done

if temporal operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$TEMPORAL_ADDRESS"
  echo "namespace $NAMESPACE created (retention $RETENTION)"
fi
