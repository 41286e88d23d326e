#!/usr/bin/env bash
# The production image, proven without a Docker engine: replays the Dockerfile's `runtime` stage natively.
#
#   tools/check-production-image.sh            build, replay, run the checks, remove the scratch directory
#   tools/check-production-image.sh --keep     keep the scratch directory (its path is printed)
#
# 1. `npm run build` in the repository, as the `build` stage does.
# 2. A scratch directory holding only what the `runtime` stage COPYs (read from the Dockerfile itself: its
#    WORKDIR, ENV, COPY, RUN, USER and CMD lines, and those of the stages it is FROM), then the stage's
#    `npm ci --omit=dev …` there, timed and measured, and its `RUN node dist/….js` steps (the compile cache). No
#    development dependency, no sandbox, no TypeScript source and no .env may be in it.
# 3. The image's CMD (the worker), run there with an empty environment plus the stage's ENV, as an unprivileged
#    user over root-owned files when this runs as root (the image's USER):
#    - nothing configured: exits 2 with a configuration error, not a missing module;
#    - a payload key, no service: exits 2 naming COMPLIANCE_BASE_URL, COMPLIANCE_API_KEY, ACCOUNTING_BASE_URL and
#      ACCOUNTING_API_KEY;
#    - services and a payload key, but an image built without BUILD_COMMIT: exits 2 naming BUILD_COMMIT and
#      TEMPORAL_WORKER_BUILD_ID (no build id to run as);
#    - SANDBOX=embedded (with a Temporal dev server to get that far): exits 2 saying the sandbox is not part of a
#      production install;
#    - against the sandbox (run from the development tree) and the dev server: starts ("worker running": the
#      prebuilt workflow bundle is what it loads, never bundled at start; the native bridge and the failure converter
#      work from the production install) and stops cleanly on SIGTERM.
#    Running, it passes docker-compose.yml's health check of the worker (replayed against its /readyz).
# 4. The codec server as docker-compose.yml runs it from the same image: a configuration error naming
#    PAYLOAD_KEYS without a key, and CODEC_AUTH_TOKEN on 0.0.0.0 without a token; on 0.0.0.0 with its token from a
#    file (CODEC_AUTH_TOKEN_FILE, as compose mounts it), listening, passing compose's health check, exit 0 on SIGTERM.
#
# Needs the project's Node line (.node-version) and npm (registry access for the npm ci), and the Temporal CLI (TEMPORAL_CLI_PATH, PATH,
# .cache/temporal, or `npm run temporal:install`). CI runs it from .ci/run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

KEEP=false
for arg in "$@"; do
  case "$arg" in
    --keep) KEEP=true ;;
    -h | --help)
      awk 'NR > 1 && /^set -euo/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      echo "unknown argument: $arg (--keep | --help)" >&2
      exit 2
      ;;
  esac
done

say() { echo "[production-image] $*"; }
fail() {
  echo "[production-image] FAILED: $*" >&2
  exit 1
}

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/production-image.XXXXXX")"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$KEEP" = true ]; then
    say "kept $SCRATCH"
  else
    rm -rf "$SCRATCH"
  fi
}
trap cleanup EXIT

# --- the runtime stage, as the Dockerfile writes it ---------------------------------------------------------------
# One tab-separated line per step: WORKDIR <dir> | ENV <name> <value> | COPY . <source> <dest> | NPMCI <command> |
# USER <user> | CMD <argument> (one line per argument). A COPY source is relative to the repository: the build
# context, or for --from=<stage> its path under that stage's WORKDIR (the build stage builds in a copy of the repo).
# A stage's ARG takes its value from this environment, as `docker build --build-arg` gives it; BUILD_COMMIT is the
# repository's HEAD unless set.
PLAN="$SCRATCH/plan.tsv"
BUILD_COMMIT="${BUILD_COMMIT:-$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || true)}" \
  node - "$ROOT/Dockerfile" runtime >"$PLAN" <<'NODE'
const fs = require('node:fs');
const [file, target] = process.argv.slice(2);
const lines = fs.readFileSync(file, 'utf8').replace(/\\\n/g, ' ').split('\n').map((l) => l.trim());
const stages = new Map();
let current;
for (const line of lines) {
  if (line === '' || line.startsWith('#')) continue;
  const [instruction, ...rest] = line.split(/\s+/);
  const args = rest.join(' ');
  if (/^FROM$/i.test(instruction)) {
    const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
    if (!m) throw new Error(`cannot read: ${line}`);
    current = { from: m[1], steps: [] };
    if (m[2]) stages.set(m[2], current);
    continue;
  }
  if (current) current.steps.push({ instruction: instruction.toUpperCase(), args, line });
}
const workdirOf = (name) => {
  let dir = '/';
  for (const stage of chain(name)) for (const s of stage.steps) if (s.instruction === 'WORKDIR') dir = s.args;
  return dir;
};
function chain(name) {
  const stage = stages.get(name);
  if (!stage) throw new Error(`no stage ${name} in the Dockerfile`);
  return stages.has(stage.from) ? [...chain(stage.from), stage] : [stage];
}
const out = [];
const buildArgs = new Map();
const withArgs = (value) => value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => buildArgs.get(a ?? b) ?? '');
for (const stage of chain(target)) {
  for (const { instruction, args, line } of stage.steps) {
    switch (instruction) {
      case 'WORKDIR':
      case 'USER':
        out.push([instruction, args]);
        break;
      case 'ENV': {
        const pairs = [...args.matchAll(/(\w+)=("[^"]*"|\S+)/g)];
        if (pairs.length === 0) throw new Error(`write ENV as NAME=value: ${line}`);
        for (const m of pairs) out.push(['ENV', m[1], withArgs(m[2].replace(/^"|"$/g, ''))]);
        break;
      }
      case 'COPY': {
        const words = args.split(/\s+/);
        let from;
        while (words[0]?.startsWith('--')) {
          const flag = words.shift();
          if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
          else if (!flag.startsWith('--chown=') && !flag.startsWith('--chmod=')) throw new Error(`unsupported: ${line}`);
        }
        const dest = words.pop();
        for (const source of words) {
          if (from === undefined) out.push(['COPY', '.', source, dest]);
          else {
            const dir = workdirOf(from).replace(/\/$/, '');
            if (!source.startsWith(`${dir}/`)) throw new Error(`${line}: the source must be under stage ${from}'s WORKDIR ${dir}`);
            out.push(['COPY', '.', source.slice(dir.length + 1), dest]);
          }
        }
        break;
      }
      case 'RUN': {
        // The compiled product's own build steps (the compile cache), run in place after the install.
        if (/^node dist\/[\w/.-]+\.js$/.test(args)) {
          out.push(['NODE', args]);
          break;
        }
        const [first, ...others] = args.split('&&').map((c) => c.trim());
        if (!/^npm ci\b/.test(first) || !/\s--omit=dev\b/.test(first)) throw new Error(`the runtime stage may only RUN npm ci --omit=dev or node dist/….js: ${line}`);
        const allowed = /^(npm cache clean --force|node keep-own-native-binaries\.cjs|rm keep-own-native-binaries\.cjs)$/;
        for (const o of others) if (!allowed.test(o)) throw new Error(`unsupported after npm ci: ${o}`);
        out.push(['NPMCI', [first, ...others].join(' && ')]);
        break;
      }
      case 'CMD':
        for (const a of JSON.parse(args)) out.push(['CMD', a]);
        break;
      case 'ARG': {
        const m = /^(\w+)(?:=(.*))?$/.exec(args);
        if (!m) throw new Error(`cannot read: ${line}`);
        buildArgs.set(m[1], process.env[m[1]] ?? m[2] ?? '');
        break;
      }
      case 'EXPOSE':
      case 'LABEL':
        break;
      default:
        throw new Error(`tools/check-production-image.sh cannot replay ${instruction}: ${line}`);
    }
  }
}
process.stdout.write(out.map((row) => row.join('\t')).join('\n') + '\n');
NODE

WORKDIR=/
STAGE_ENV=()
COPIES=()
NPM_CI=""
# The ENV lines above a RUN are what it sees, as in a real build.
NPM_CI_ENV=()
NODE_STEPS=()
STAGE_USER=root
CMD=()
while IFS=$'\t' read -r kind a b c; do
  case "$kind" in
    WORKDIR) WORKDIR="$a" ;;
    ENV) STAGE_ENV+=("$a=$b") ;;
    COPY) COPIES+=("$b"$'\t'"$c") ;;
    NPMCI)
      NPM_CI="$a"
      NPM_CI_ENV=("${STAGE_ENV[@]}")
      ;;
    NODE) NODE_STEPS+=("$a") ;;
    USER) STAGE_USER="$a" ;;
    CMD) CMD+=("$a") ;;
  esac
done <"$PLAN"
[ -n "$NPM_CI" ] || fail "the runtime stage runs no npm ci --omit=dev"
[ "${#CMD[@]}" -gt 0 ] || fail "the runtime stage has no CMD"
case "$STAGE_USER" in root | 0 | 0:*) fail "the runtime stage runs as root (USER $STAGE_USER)" ;; esac
say "runtime stage: WORKDIR $WORKDIR, ENV ${STAGE_ENV[*]:-none}, USER $STAGE_USER, ${#COPIES[@]} COPY source(s), CMD ${CMD[*]}"

# --- 1. build ---------------------------------------------------------------------------------------------------
started=$SECONDS
npm run --silent build
say "npm run build: $((SECONDS - started))s"

# --- 2. the runtime stage's file system ---------------------------------------------------------------------------
APP="$SCRATCH/root${WORKDIR%/}"
mkdir -p "$APP"
# A path the stage names under its WORKDIR is that path in the scratch copy.
for i in "${!STAGE_ENV[@]}"; do
  value="${STAGE_ENV[$i]#*=}"
  case "$value" in "${WORKDIR%/}"/*) STAGE_ENV[i]="${STAGE_ENV[$i]%%=*}=$APP/${value#"${WORKDIR%/}"/}" ;; esac
done
for copy in "${COPIES[@]}"; do
  source="${copy%%$'\t'*}"
  dest="${copy#*$'\t'}"
  case "$dest" in /*) target="$SCRATCH/root$dest" ;; *) target="$APP/$dest" ;; esac
  [ -e "$ROOT/$source" ] || fail "COPY $source: not in the build output / context"
  if [ -d "$ROOT/$source" ]; then
    mkdir -p "$target"
    cp -R "$ROOT/$source/." "$target/"
  elif [ "${dest%/}" != "$dest" ] || [ -d "$target" ]; then
    mkdir -p "$target"
    cp "$ROOT/$source" "$target/"
  else
    mkdir -p "$(dirname "$target")"
    cp "$ROOT/$source" "$target"
  fi
done

started=$SECONDS
(cd "$APP" && env "${NPM_CI_ENV[@]}" bash -c "$NPM_CI" >"$SCRATCH/npm-ci.log" 2>&1) || {
  cat "$SCRATCH/npm-ci.log" >&2
  fail "$NPM_CI"
}
install_seconds=$((SECONDS - started))
say "$NPM_CI: ${install_seconds}s; node_modules $(du -sh "$APP/node_modules" | cut -f1), dist $(du -sh "$APP/dist" | cut -f1), whole stage $(du -sh "$APP" | cut -f1) ($(find "$APP/node_modules" -maxdepth 3 -name package.json | wc -l) package.json files)"
# The stage's own build steps, as root like the rest of the build (the compile cache).
for step in "${NODE_STEPS[@]}"; do
  output="$(cd "$APP" && env -i PATH="$PATH" "${STAGE_ENV[@]}" bash -c "$step" 2>&1)" || fail "RUN $step: $output"
  say "RUN $step: $output"
done

# The Temporal core bridge's native library for this platform only.
bridge_releases="$APP/node_modules/@temporalio/core-bridge/releases"
[ -d "$bridge_releases" ] || fail "no Temporal core bridge in the production install"
platforms="$(ls "$bridge_releases" | tr '\n' ' ' | sed 's/ $//')"
[ "$(ls "$bridge_releases" | wc -l)" -eq 1 ] || fail "the core bridge keeps other platforms' binaries: $platforms"
say "Temporal core bridge binaries: $platforms only"

# Nor the development Node that npm ci installs as an optional dependency: the image runs its base image's node.
dev_node="$(cd "$APP" && ls -d node_modules/.bin/node node_modules/node-*-*/bin/node* 2>/dev/null | tr '\n' ' ' || true)"
[ -z "$dev_node" ] || fail "a development Node binary in the production install: $dev_node"
say "no Node binary in node_modules (the image runs its base image's node)"

# No development dependency (those package-lock.json marks dev-only), no sandbox, no TypeScript, no .env.
dev_only="$(node -e '
  const lock = require(process.argv[1] + "/package-lock.json");
  for (const [key, entry] of Object.entries(lock.packages)) if (key && entry.dev) console.log(key);
' "$APP")"
present=()
while read -r key; do
  [ -n "$key" ] && [ -e "$APP/$key" ] && present+=("$key")
done <<<"$dev_only"
[ "${#present[@]}" -eq 0 ] || fail "development dependencies in the production install: ${present[*]}"
for name in typescript tsx vitest eslint pdfkit qrcode puppeteer-core @temporalio/testing; do
  [ ! -e "$APP/node_modules/$name" ] || fail "node_modules/$name is in the production install"
done
stray="$(cd "$APP" && find . -path ./node_modules -prune -o \( -name '*.ts' -o -name '.env*' -o -path '*/sandbox/*' -o -name sandbox \) -print | head -n 5)"
[ -z "$stray" ] || fail "the runtime stage holds files it should not: $stray"
say "no development dependency ($(wc -l <<<"$dev_only") dev-only packages in the lock), no sandbox, no .ts, no .env"

# The image's USER: the process may read, not write, the application files.
RUN_AS=()
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
  chmod -R go-w,a+rX "$SCRATCH/root"
  chmod 755 "$SCRATCH"
  if setpriv --reuid=65534 --regid=65534 --clear-groups node -e 0 2>/dev/null; then
    RUN_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    say "entry points run as uid 65534 over root-owned, read-only files (the image's USER $STAGE_USER)"
  else
    say "WARNING: uid 65534 cannot run $(command -v node): the entry points run as root"
  fi
fi
HOME_DIR="$SCRATCH/home"
mkdir -p "$HOME_DIR"
chmod 777 "$HOME_DIR"

# Runs an entry point as the image would: in WORKDIR, an empty environment plus the stage's ENV and "$@" before --.
# Output in $SCRATCH/<name>.out / .err; the exit code in $status.
run_entry() {
  local name="$1" seconds="$2"
  shift 2
  local vars=()
  while [ "$1" != "--" ]; do
    vars+=("$1")
    shift
  done
  shift
  status=0
  (cd "$APP" && timeout -k 5 "$seconds" env -i PATH="$PATH" HOME="$HOME_DIR" "${STAGE_ENV[@]}" "${vars[@]}" "${RUN_AS[@]}" "$@") \
    >"$SCRATCH/$name.out" 2>"$SCRATCH/$name.err" || status=$?
}

show() {
  echo "--- $1: exit $status; stderr:" >&2
  tail -n 20 "$SCRATCH/$1.err" >&2
  echo "--- stdout (tail):" >&2
  tail -n 20 "$SCRATCH/$1.out" >&2
}

expect_config_error() {
  local name="$1"
  shift
  # A module missing from the production install crashes at import: exit 1 and a stack, not runMain's exit 2.
  if [ "$status" -ne 2 ] || ! head -n 1 "$SCRATCH/$name.err" | grep -q '^configuration error: '; then
    show "$name"
    if grep -q 'ERR_MODULE_NOT_FOUND' "$SCRATCH/$name.err"; then
      fail "$name: a module is missing from the production install (see above)"
    fi
    fail "$name: expected exit 2 and 'configuration error: …' on stderr"
  fi
  local word
  for word in "$@"; do
    grep -qF -- "$word" "$SCRATCH/$name.err" || {
      show "$name"
      fail "$name: stderr does not say '$word'"
    }
  done
  say "$name: exit 2, $(head -c 400 "$SCRATCH/$name.err" | head -n 1)"
}

# docker-compose.yml's health check of a service, as its argument list (a `test: [...]` line, or a `test:` list whose
# items may be folded `>-` scalars): one argument per line, NUL-free, the CMD marker dropped.
compose_healthcheck() {
  node - "$ROOT/docker-compose.yml" "$1" <<'NODE'
const fs = require('node:fs');
const [file, service] = process.argv.slice(2);
const lines = fs.readFileSync(file, 'utf8').split('\n');
const start = lines.findIndex((l) => l === `  ${service}:`);
if (start < 0) throw new Error(`no service ${service} in ${file}`);
const end = lines.findIndex((l, i) => i > start && /^  \S/.test(l));
const block = lines.slice(start + 1, end < 0 ? undefined : end);
const at = block.findIndex((l) => /^    healthcheck:/.test(l));
if (at < 0) throw new Error(`${service} has no healthcheck`);
const testAt = block.findIndex((l, i) => i > at && /^      test:/.test(l));
const inline = /^      test:\s*(\[.*\])\s*$/.exec(block[testAt]);
let args;
if (inline) {
  args = JSON.parse(inline[1]);
} else {
  args = [];
  for (let i = testAt + 1; i < block.length && /^        (- |\s)/.test(block[i]); i++) {
    const item = /^        - (.*)$/.exec(block[i]);
    if (item && item[1] === '>-') {
      const folded = [];
      while (i + 1 < block.length && /^          \s*\S/.test(block[i + 1])) folded.push(block[++i].trim());
      args.push(folded.join(' '));
    } else if (item) {
      args.push(item[1]);
    }
  }
}
if (args[0] !== 'CMD') throw new Error(`${service}: the health check is not a CMD list`);
for (const a of args.slice(1)) {
  if (a.includes('\n')) throw new Error('an argument spans lines');
  console.log(a);
}
NODE
}

# Runs a service's compose health check with these variables until it passes (or the seconds run out).
expect_healthy() {
  local service="$1" seconds="$2"
  shift 2
  local check=()
  mapfile -t check < <(compose_healthcheck "$service")
  [ "${#check[@]}" -gt 0 ] || fail "docker-compose.yml: cannot read the health check of $service"
  local started=$SECONDS
  until env -i PATH="$PATH" "$@" "${check[@]}" >"$SCRATCH/$service-health.out" 2>&1; do
    if [ $((SECONDS - started)) -gt "$seconds" ]; then
      cat "$SCRATCH/$service-health.out" >&2
      fail "$service: docker-compose.yml's health check did not pass in ${seconds}s"
    fi
    sleep 1
  done
  say "$service: docker-compose.yml's health check passes ($((SECONDS - started))s)"
}

PAYLOAD_KEY="PAYLOAD_KEYS=check-1:$(node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("base64"))')"

# --- 3. the worker, as the image's CMD ------------------------------------------------------------------------------
run_entry worker-unconfigured 60 -- "${CMD[@]}"
expect_config_error worker-unconfigured COMPLIANCE_BASE_URL COMPLIANCE_API_KEY ACCOUNTING_BASE_URL ACCOUNTING_API_KEY

# Services named (never contacted: the settings are refused first), no payload key.
SERVICES=(COMPLIANCE_BASE_URL=https://compliance.invalid COMPLIANCE_API_KEY=cmp_sk_test_image_check_not_a_key
  ACCOUNTING_BASE_URL=https://accounting.invalid ACCOUNTING_API_KEY=sk_development_image_check_not_a_key)
run_entry worker-no-payload-keys 60 "${SERVICES[@]}" -- "${CMD[@]}"
expect_config_error worker-no-payload-keys PAYLOAD_KEYS

# An image built without --build-arg BUILD_COMMIT: no build id to run as, said before Temporal is contacted.
run_entry worker-no-build-id 60 "${SERVICES[@]}" "$PAYLOAD_KEY" BUILD_COMMIT= -- "${CMD[@]}"
expect_config_error worker-no-build-id BUILD_COMMIT TEMPORAL_WORKER_BUILD_ID

# A Temporal dev server, for the worker that runs; SANDBOX=embedded is refused before Temporal is contacted.
temporal_cli() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
    echo "$TEMPORAL_CLI_PATH"
  elif command -v temporal >/dev/null 2>&1; then
    command -v temporal
  else
    local found
    found="$(find "$ROOT/.cache/temporal/" -maxdepth 3 -type f -name temporal -perm -u+x 2>/dev/null | sort | tail -n 1 || true)"
    if [ -z "$found" ]; then
      found="$(npm run --silent temporal:install | sed -n 's/^temporal: \(.*\) (source: .*/\1/p' | tail -n 1)"
    fi
    [ -n "$found" ] || fail "no Temporal CLI: run 'npm run temporal:install' or set TEMPORAL_CLI_PATH"
    echo "$found"
  fi
}
free_ports() {
  node -e '
    import(process.argv[1]).then(async ({ freePort }) => {
      const ports = [];
      for (let i = 0; i < Number(process.argv[2]); i++) ports.push(await freePort());
      console.log(ports.join(" "));
    });
  ' "$ROOT/tools/free-port.ts" "$1"
}
TEMPORAL="$(temporal_cli)"
read -r grpc_port http_port metrics_port <<<"$(free_ports 3)"
TEMPORAL_ADDRESS="127.0.0.1:$grpc_port"
"$TEMPORAL" server start-dev --headless --ip 127.0.0.1 --port "$grpc_port" --http-port "$http_port" \
  --metrics-port "$metrics_port" --log-level warn --dynamic-config-value matching.enableFairness=true \
  --dynamic-config-value matching.maxTaskQueuesInDeploymentVersion=1000 \
  >"$SCRATCH/temporal.log" 2>&1 &
PIDS+=($!)
started=$SECONDS
until "$TEMPORAL" operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace default >/dev/null 2>&1; do
  if [ $((SECONDS - started)) -gt 60 ]; then
    cat "$SCRATCH/temporal.log" >&2
    fail "the Temporal dev server did not start in 60 s"
  fi
  sleep 0.5
done
say "Temporal dev server at $TEMPORAL_ADDRESS ($((SECONDS - started))s)"

run_entry worker-embedded 120 "$PAYLOAD_KEY" SANDBOX=embedded TEMPORAL_ADDRESS="$TEMPORAL_ADDRESS" -- "${CMD[@]}"
expect_config_error worker-embedded "not part of a production install" COMPLIANCE_BASE_URL COMPLIANCE_API_KEY ACCOUNTING_BASE_URL ACCOUNTING_API_KEY

# The sandbox, from the development tree (it is no part of the image), as the services the worker is configured with.
node --import tsx sandbox/main.ts --compliance-port 0 --accounting-port 0 >"$SCRATCH/sandbox.out" 2>"$SCRATCH/sandbox.err" &
PIDS+=($!)
started=$SECONDS
until grep -q '"sandbox listening"' "$SCRATCH/sandbox.out" 2>/dev/null; do
  if [ $((SECONDS - started)) -gt 60 ]; then
    cat "$SCRATCH/sandbox.err" "$SCRATCH/sandbox.out" >&2
    fail "the sandbox did not start in 60 s"
  fi
  sleep 0.5
done
read -r compliance_url accounting_url <<<"$(node -e '
  const line = require("node:fs").readFileSync(process.argv[1], "utf8").split("\n").find((l) => l.includes("\"sandbox listening\""));
  const { complianceUrl, accountingUrl } = JSON.parse(line);
  console.log(complianceUrl, accountingUrl);
' "$SCRATCH/sandbox.out")"
say "sandbox (development tree) at $compliance_url and $accounting_url"

# The sandbox's demo credentials (docs/sandbox.md; docker-compose.yml's defaults for the `sandbox` profile).
SERVICES=(
  COMPLIANCE_BASE_URL="$compliance_url" COMPLIANCE_API_KEY=cmp_sk_test_demo_org_wide_0001 COMPLIANCE_BUSINESS_ID=biz_demo_nairobi
  ACCOUNTING_BASE_URL="$accounting_url" ACCOUNTING_API_KEY=sk_development_demo_key_0000000000000001
  ACCOUNTING_CLIENT_SECRET=cs_demo_client_secret_000000000001
)
read -r worker_metrics_port worker_health_port <<<"$(free_ports 2)"
WORKER_METRICS="METRICS_BIND_ADDRESS=0.0.0.0:$worker_metrics_port"
# The health server compose's check asks (/readyz), as the compose file sets it.
WORKER_HEALTH="HEALTH_BIND_ADDRESS=0.0.0.0:$worker_health_port"
started=$SECONDS
(cd "$APP" && exec env -i PATH="$PATH" HOME="$HOME_DIR" "${STAGE_ENV[@]}" "$PAYLOAD_KEY" TEMPORAL_ADDRESS="$TEMPORAL_ADDRESS" \
  LOG_FORMAT=json "$WORKER_METRICS" "$WORKER_HEALTH" "${SERVICES[@]}" "${RUN_AS[@]}" "${CMD[@]}") >"$SCRATCH/worker-running.out" 2>"$SCRATCH/worker-running.err" &
worker_pid=$!
PIDS+=("$worker_pid")
until grep -q '"worker running"' "$SCRATCH/worker-running.out" 2>/dev/null; do
  if ! kill -0 "$worker_pid" 2>/dev/null || [ $((SECONDS - started)) -gt 180 ]; then
    kill -TERM "$worker_pid" 2>/dev/null || true
    status=0
    wait "$worker_pid" || status=$?
    show worker-running
    fail "the worker did not start against the sandbox and the dev server"
  fi
  sleep 0.5
done
say "worker-running: 'worker running' after $((SECONDS - started))s"
# The runtime stage loads the bundle the build stage made from the same code; it never bundles at start.
grep -q '"workflow bundle loaded (built with the code)"' "$SCRATCH/worker-running.out" || {
  show worker-running
  fail "the worker did not load the prebuilt workflow bundle (dist/workflow-bundles)"
}
if grep -q '"bundling the workflows at start"\|"workflow bundle built"' "$SCRATCH/worker-running.out"; then
  show worker-running
  fail "the worker bundled its workflows at start instead of loading dist/workflow-bundles"
fi
say "worker-running: loaded the prebuilt workflow bundle ($(node -e 'const m=require(process.argv[1]);console.log(m.inputs)' "$APP/dist/workflow-bundles/manifest.json"))"
expect_healthy worker 60 "$WORKER_HEALTH"
kill -TERM "$worker_pid"
status=0
wait "$worker_pid" || status=$?
if [ "$status" -ne 0 ]; then
  show worker-running
  fail "the worker exited $status on SIGTERM, not 0"
fi
say "worker-running: SIGTERM, exit 0"

# --- 4. the codec server, as docker-compose.yml runs it from the same image --------------------------------------------
codec_command="$(awk '/^  codec-server:/ { inside = 1; next } inside && /^  [^ ]/ { exit } inside && /^    command:/ { sub(/^    command: */, ""); print; exit }' docker-compose.yml)"
[ -n "$codec_command" ] || fail "docker-compose.yml: the codec-server service has no command"
mapfile -t CODEC < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "$codec_command")
run_entry codec-unconfigured 60 -- "${CODEC[@]}"
expect_config_error codec-unconfigured PAYLOAD_KEYS
# Compose's container listens on 0.0.0.0: without its token the codec server does not start.
run_entry codec-no-token 60 "$PAYLOAD_KEY" CODEC_HOST=0.0.0.0 -- "${CODEC[@]}"
expect_config_error codec-no-token CODEC_HOST CODEC_AUTH_TOKEN

read -r codec_port <<<"$(free_ports 1)"
codec_token_file="$SCRATCH/codec-auth-token"
node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("base64url") + "\n")' >"$codec_token_file"
chmod 644 "$codec_token_file"
started=$SECONDS
(cd "$APP" && exec env -i PATH="$PATH" HOME="$HOME_DIR" "${STAGE_ENV[@]}" "$PAYLOAD_KEY" CODEC_HOST=0.0.0.0 CODEC_PORT="$codec_port" \
  CODEC_AUTH_TOKEN_FILE="$codec_token_file" LOG_FORMAT=json "${RUN_AS[@]}" "${CODEC[@]}") >"$SCRATCH/codec-running.out" 2>"$SCRATCH/codec-running.err" &
codec_pid=$!
PIDS+=("$codec_pid")
until grep -q '"codec server listening"' "$SCRATCH/codec-running.out" 2>/dev/null; do
  if ! kill -0 "$codec_pid" 2>/dev/null || [ $((SECONDS - started)) -gt 60 ]; then
    kill -TERM "$codec_pid" 2>/dev/null || true
    status=0
    wait "$codec_pid" || status=$?
    show codec-running
    fail "the codec server did not start"
  fi
  sleep 0.2
done
expect_healthy codec-server 30 CODEC_PORT="$codec_port"
kill -TERM "$codec_pid"
status=0
wait "$codec_pid" || status=$?
[ "$status" -eq 0 ] || {
  show codec-running
  fail "the codec server exited $status on SIGTERM, not 0"
}
say "codec-running: listening on 0.0.0.0:$codec_port with its token from a file (${CODEC[*]}), exit 0 on SIGTERM"

say "the runtime stage runs from its production install (npm ci --omit=dev in ${install_seconds}s, $(du -sh "$APP" | cut -f1))"
