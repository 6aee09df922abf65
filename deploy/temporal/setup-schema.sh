#!/bin/sh
# Creates Temporal's two PostgreSQL databases and brings their schemas to the
# version this admin-tools image carries: the temporal-schema service of
# docker-compose.yml runs it (temporalio/admin-tools) before the server
# starts, on every `docker compose up`. Each step is idempotent: create
# skips an existing database, setup-schema -v 0.0 an initialised one, and
# update-schema applies only the versions not yet applied, so the same run
# migrates the schemas when the image tags are raised.
#
# temporal-sql-tool reads the connection from SQL_PLUGIN, SQL_HOST, SQL_PORT,
# SQL_USER and SQL_PASSWORD (set in docker-compose.yml).
set -eu

schemas=/etc/temporal/schema/postgresql/v12

echo "waiting for PostgreSQL at ${SQL_HOST}:${SQL_PORT}"
tries=0
until nc -z "$SQL_HOST" "$SQL_PORT"; do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "PostgreSQL is not reachable" >&2; exit 1; }
  sleep 2
done

setup() { # database, schema folder
  temporal-sql-tool --db "$1" create
  temporal-sql-tool --db "$1" setup-schema -v 0.0
  temporal-sql-tool --db "$1" update-schema -d "$schemas/$2/versioned"
}
setup temporal temporal
setup temporal_visibility visibility
echo "Temporal schemas are up to date"
