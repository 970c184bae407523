#!/bin/sh
# One-shot schema setup for the Temporal server (temporalio/admin-tools), as in
# temporalio/samples-server compose/scripts/setup-postgres.sh. `create` fails harmlessly
# when a database exists; setup-schema -v 0.0 and update-schema are idempotent, so a
# second `up` on the same volume passes.
set -eu
: "${POSTGRES_SEEDS:?POSTGRES_SEEDS names the PostgreSQL host}"
: "${POSTGRES_USER:?POSTGRES_USER names the PostgreSQL user}"
port="${DB_PORT:-5432}"
sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$port" "$@"; }

nc -z -w 10 "$POSTGRES_SEEDS" "$port"
for db in temporal temporal_visibility; do
  sql --db "$db" create || true
done
sql --db temporal setup-schema -v 0.0
sql --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned
sql --db temporal_visibility setup-schema -v 0.0
sql --db temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned
echo "PostgreSQL schema set up"
