#!/bin/sh
# Schema job of docker-compose.yml (service temporal-admin-tools, image temporalio/admin-tools): creates the
# persistence and visibility databases and brings their schemas to the version the server image expects.
# Safe to re-run: create-database ignores an existing database, setup-schema keeps a newer version, and
# update-schema applies only what is missing. tools/temporal-postgres.sh runs the same three commands natively.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS (PostgreSQL host) is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${POSTGRES_PWD:?POSTGRES_PWD is required}"
DB_PORT="${DB_PORT:-5432}"
DBNAME="${DBNAME:-temporal}"
VISIBILITY_DBNAME="${VISIBILITY_DBNAME:-temporal_visibility}"

echo "waiting for PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT}"
i=0
until nc -z "$POSTGRES_SEEDS" "$DB_PORT"; do
  i=$((i + 1))
  if [ "$i" -ge 60 ]; then
    echo "PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT} is not reachable after 60s" >&2
    exit 1
  fi
  sleep 1
done

tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"
}

for pair in "$DBNAME:postgresql/v12/temporal" "$VISIBILITY_DBNAME:postgresql/v12/visibility"; do
  db="${pair%%:*}"
  schema="${pair#*:}"
  echo "database $db: create, setup-schema, update-schema ($schema)"
  tool --db "$db" create
  tool --db "$db" setup-schema -v 0.0
  # The schemas are embedded in the tool; /etc/temporal/schema/$schema/versioned holds the same files.
  tool --db "$db" update-schema --schema-name "$schema"
done
echo "schemas are current"
