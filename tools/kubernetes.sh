#!/usr/bin/env bash
# Every Kustomize overlay under deploy/kubernetes/overlays/, applied for real to a kube-apiserver + etcd on this
# machine, without Docker or a cluster: the binaries are built from the Go module proxy (tools/kubernetes/go.mod pins
# them, go.sum fixes their whole dependency graph), the CRDs of the kinds the manifests use are installed first
# (KEDA's and the Prometheus operator's from their Go modules, the Temporal worker controller's from
# tools/kubernetes/crds/), and every object goes through server-side apply with strict field validation.
#
#   tools/kubernetes.sh build     only build (or find) the cached binaries and CRDs; returns at once when cached
#   tools/kubernetes.sh start     build if needed, start etcd and kube-apiserver on loopback, print the kubeconfig path
#   tools/kubernetes.sh validate [overlay-dir...]
#                                 install the CRDs, refuse the deliberately wrong manifests of tools/kubernetes/selfcheck/,
#                                 then for each overlay (default: every deploy/kubernetes/overlays/*/ with a
#                                 kustomization): `kubectl kustomize` without a warning, its Namespaces applied first,
#                                 then all of it, then a server-side dry run of what the Temporal worker controller would
#                                 create from its WorkerDeployments and WorkerResourceTemplates (needs jq); one line per
#                                 overlay with its objects counted by kind. tools/kubernetes/README.md says what it proves.
#   tools/kubernetes.sh stop      stop both and delete the run directory's data (etcd, keys, token); logs stay
#   tools/kubernetes.sh status    is it running, where
#   tools/kubernetes.sh kubectl ...  the built kubectl against the running apiserver
#
# Binaries are cached by version outside the clone, so a machine builds them once (about 6 minutes on 2 cores):
#   root: /var/cache/etims-kubernetes/v<version>/bin   others: ${XDG_CACHE_HOME:-~/.cache}/etims-kubernetes/v<version>/bin
# where <version> is k8s.io/kubernetes' version in tools/kubernetes/go.mod. A change to go.mod, go.sum or the CRD
# module pins below rebuilds. The run directory (keys, kubeconfig, etcd data, logs, pid files) is <cache>/v<version>/run.
#
# Everything has a default and can be overridden from the environment:
#   ETIMS_K8S_CACHE            see above   cache root
#   ETIMS_K8S_ETCD_PORT        12379       etcd client port (its peer port is this + 1), 127.0.0.1 only
#   ETIMS_K8S_APISERVER_PORT   16443       kube-apiserver's secure port, 127.0.0.1 only
#   ETIMS_K8S_OVERLAYS         deploy/kubernetes/overlays   where validate looks for overlays
#   ETIMS_K8S_ALLOW_WARNINGS   0           1: a warning from the apiserver while applying is printed, not fatal
#   ETIMS_K8S_START_TIMEOUT    60          seconds start waits for etcd and then for the apiserver's /readyz
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$REPO_ROOT/tools/kubernetes"

# The CRDs of the kinds the manifests use, from the projects' own Go modules (go mod download verifies them against
# the checksum database; the h1 sums pin them here too). The Temporal worker controller's module is refused by the
# proxy (403): tools/kubernetes/crds/ holds our own copies, each naming the upstream file and commit it mirrors.
KEDA_MODULE=github.com/kedacore/keda/v2
KEDA_VERSION=v2.21.0
KEDA_SUM=h1:R6z2HZvstK4RLUMxroNACzBj74xGxt3kG59b5Xc+Xps=
KEDA_CRD_DIR=config/crd/bases
PROMETHEUS_OPERATOR_MODULE=github.com/prometheus-operator/prometheus-operator
PROMETHEUS_OPERATOR_VERSION=v0.85.0
PROMETHEUS_OPERATOR_SUM=h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s=
PROMETHEUS_OPERATOR_CRD_DIR=example/prometheus-operator-crd

VERSION="$(awk '$1 == "k8s.io/kubernetes" { sub(/^v/, "", $2); print $2; exit }' "$TOOLS_DIR/go.mod")"
ETCD_VERSION="$(awk '$1 == "go.etcd.io/etcd/server/v3" { sub(/^v/, "", $2); print $2; exit }' "$TOOLS_DIR/go.mod")"
if [ -n "${ETIMS_K8S_CACHE:-}" ]; then
  CACHE_ROOT="$ETIMS_K8S_CACHE"
elif [ "$(id -u)" -eq 0 ]; then
  CACHE_ROOT=/var/cache/etims-kubernetes
else
  CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/etims-kubernetes"
fi
VERSION_DIR="$CACHE_ROOT/v$VERSION"
BIN_DIR="$VERSION_DIR/bin"
CRD_CACHE="$VERSION_DIR/crds"
STAMP="$VERSION_DIR/inputs.sha256"
RUN_DIR="$VERSION_DIR/run"
KUBECTL="$BIN_DIR/kubectl"
APISERVER="$BIN_DIR/kube-apiserver"
ETCD="$BIN_DIR/etcd"
KUBECONFIG_FILE="$RUN_DIR/kubeconfig"

ETCD_PORT="${ETIMS_K8S_ETCD_PORT:-12379}"
ETCD_PEER_PORT=$((ETCD_PORT + 1))
APISERVER_PORT="${ETIMS_K8S_APISERVER_PORT:-16443}"
OVERLAYS_DIR="${ETIMS_K8S_OVERLAYS:-$REPO_ROOT/deploy/kubernetes/overlays}"
START_TIMEOUT="${ETIMS_K8S_START_TIMEOUT:-60}"
# The kubeconfig's default namespace, which no manifest creates: a namespaced object without metadata.namespace
# fails on it (NotFound) instead of landing in "default" unnoticed.
NO_NAMESPACE=no-namespace-in-manifest

log() { echo "[kubernetes] $*" >&2; }
die() {
  echo "[kubernetes] ERROR: $*" >&2
  exit 1
}

[ -n "$VERSION" ] && [ -n "$ETCD_VERSION" ] || die "cannot read the k8s.io/kubernetes and go.etcd.io/etcd/server/v3 versions from $TOOLS_DIR/go.mod"

# ---------------------------------------------------------------------------------------------------- build
# What the cached build was made from: a different go.mod, go.sum or CRD module pin means another build.
inputs_sum() {
  {
    cat "$TOOLS_DIR/go.mod" "$TOOLS_DIR/go.sum"
    echo "$KEDA_MODULE@$KEDA_VERSION $KEDA_SUM $KEDA_CRD_DIR"
    echo "$PROMETHEUS_OPERATOR_MODULE@$PROMETHEUS_OPERATOR_VERSION $PROMETHEUS_OPERATOR_SUM $PROMETHEUS_OPERATOR_CRD_DIR"
  } | sha256sum | cut -d' ' -f1
}

built() {
  [ -x "$APISERVER" ] && [ -x "$KUBECTL" ] && [ -x "$ETCD" ] && [ -d "$CRD_CACHE/keda" ] &&
    [ -d "$CRD_CACHE/prometheus-operator" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(inputs_sum)" ]
}

# Copies one module's CRD directory into the cache, after checking the module's h1 sum against the pin.
fetch_crds() {
  local module="$1" version="$2" sum="$3" dir="$4" dest="$5" json got_dir got_sum
  # Outside any module, so that nothing is added to tools/kubernetes/go.sum.
  json=$(cd "$VERSION_DIR" && GO111MODULE=on GOWORK=off go mod download -json "$module@$version" 2>&1) ||
    die "go mod download $module@$version failed: $json"
  got_dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
  got_sum=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
  [ "$got_sum" = "$sum" ] || die "$module@$version has checksum $got_sum, pinned $sum"
  [ -d "$got_dir/$dir" ] || die "$module@$version has no $dir"
  mkdir -p "$dest"
  cp "$got_dir/$dir"/*.yaml "$dest/"
  chmod -R u+w "$dest"
}

build() {
  if built; then
    log "kube-apiserver, kubectl v$VERSION and etcd v$ETCD_VERSION cached in $BIN_DIR"
    return 0
  fi
  command -v go >/dev/null 2>&1 ||
    die "Go is not installed: kube-apiserver, kubectl and etcd are built with 'go build' from the Go module proxy"
  mkdir -p "$VERSION_DIR"
  # One build per machine even when two checkouts start at once.
  exec 9>"$VERSION_DIR/build.lock"
  flock 9
  if built; then
    flock -u 9
    return 0
  fi
  local out="$VERSION_DIR/build-out" build_log="$VERSION_DIR/build.log" started=$SECONDS minor="${VERSION#*.}"
  minor="${minor%%.*}"
  rm -rf "$out" "$STAMP"
  mkdir -p "$out"
  log "building kube-apiserver, kubectl v$VERSION and etcd v$ETCD_VERSION with go build (about 6 minutes on 2 cores; log: $build_log)"
  # -mod=readonly: the build uses exactly tools/kubernetes/go.mod and go.sum, or fails. The -X flags are what
  # Kubernetes' own build stamps (hack/lib/version.sh), so `kubectl version` and /version report v$VERSION.
  local v ldflags="-s -w"
  for v in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X $v.gitVersion=v$VERSION -X $v.gitMajor=${VERSION%%.*} -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
  done
  if ! (cd "$TOOLS_DIR" && GOTOOLCHAIN=auto GOWORK=off go build -mod=readonly -ldflags "$ldflags" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3) >"$build_log" 2>&1; then
    tail -n 30 "$build_log" >&2 || true
    flock -u 9
    die "building kube-apiserver, kubectl and etcd failed (full log: $build_log). Needs the Go module proxy (GOPROXY) and about 4 GB of disk for the module and build caches."
  fi
  log "CRDs: $KEDA_MODULE@$KEDA_VERSION, $PROMETHEUS_OPERATOR_MODULE@$PROMETHEUS_OPERATOR_VERSION"
  rm -rf "$CRD_CACHE"
  fetch_crds "$KEDA_MODULE" "$KEDA_VERSION" "$KEDA_SUM" "$KEDA_CRD_DIR" "$CRD_CACHE/keda"
  fetch_crds "$PROMETHEUS_OPERATOR_MODULE" "$PROMETHEUS_OPERATOR_VERSION" "$PROMETHEUS_OPERATOR_SUM" \
    "$PROMETHEUS_OPERATOR_CRD_DIR" "$CRD_CACHE/prometheus-operator"
  mkdir -p "$BIN_DIR"
  mv -f "$out/kube-apiserver" "$APISERVER"
  mv -f "$out/kubectl" "$KUBECTL"
  mv -f "$out/server" "$ETCD" # go build names go.etcd.io/etcd/server/v3's binary "server"
  rmdir "$out" 2>/dev/null || true
  inputs_sum >"$STAMP"
  flock -u 9
  log "built in $((SECONDS - started))s: $BIN_DIR"
}

# ---------------------------------------------------------------------------------------------------- start
pid_of() {
  local file="$RUN_DIR/$1.pid" pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

port_busy() {
  if command -v ss >/dev/null 2>&1; then
    ss -Htln "sport = :$1" 2>/dev/null | grep -q .
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

kubectl_() { "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$RUN_DIR/kubectl-cache" "$@"; }

# A throw-away CA and serving certificate, the service-account signing key and an admin token: what the apiserver needs
# to run without a cluster around it.
write_credentials() {
  command -v openssl >/dev/null 2>&1 || die "openssl is missing (Debian package openssl)"
  local pki="$RUN_DIR/pki"
  rm -rf "$pki"
  mkdir -p "$pki"
  chmod 700 "$pki"
  (
    cd "$pki"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key
    openssl req -x509 -new -key ca.key -sha256 -days 2 -subj /CN=etims-kubernetes-check-ca -out ca.crt
    openssl ecparam -name prime256v1 -genkey -noout -out apiserver.key
    openssl req -new -key apiserver.key -subj /CN=kube-apiserver -out apiserver.csr
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 2 \
      -extfile apiserver.ext -out apiserver.crt
    openssl ecparam -name prime256v1 -genkey -noout -out service-account.key
    openssl ec -in service-account.key -pubout -out service-account.pub
    # token,user,uid,"group": system:masters passes every authorizer, RBAC included.
    echo "$(openssl rand -hex 32),etims-admin,etims-admin,\"system:masters\"" >tokens.csv
  ) >"$RUN_DIR/openssl.log" 2>&1 || {
    cat "$RUN_DIR/openssl.log" >&2
    die "generating the keys with openssl failed"
  }
  local token
  token=$(cut -d, -f1 "$pki/tokens.csv")
  cat >"$KUBECONFIG_FILE" <<EOF
# Written by tools/kubernetes.sh start; valid until the next stop.
apiVersion: v1
kind: Config
clusters:
  - name: etims-check
    cluster:
      server: https://127.0.0.1:$APISERVER_PORT
      certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
  - name: etims-admin
    user:
      token: $token
contexts:
  - name: etims-check
    context:
      cluster: etims-check
      user: etims-admin
      namespace: $NO_NAMESPACE
current-context: etims-check
EOF
  chmod 600 "$KUBECONFIG_FILE"
}

wait_for() {
  local what="$1" pid="$2" log_file="$3" deadline=$((SECONDS + START_TIMEOUT))
  shift 3
  while [ $SECONDS -lt $deadline ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$log_file" >&2 || true
      die "$what exited during start-up (log: $log_file)"
    fi
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  tail -n 30 "$log_file" >&2 || true
  die "$what is not ready after ${START_TIMEOUT}s (log: $log_file)"
}

etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
apiserver_ready() { [ "$(kubectl_ get --raw /readyz --request-timeout=2s 2>/dev/null)" = ok ]; }

start() {
  local started=$SECONDS pid
  if pid=$(pid_of kube-apiserver) && pid_of etcd >/dev/null; then
    log "already running (kube-apiserver pid $pid)"
    echo "$KUBECONFIG_FILE"
    return 0
  fi
  build >&2
  stop_processes >&2
  command -v curl >/dev/null 2>&1 || die "curl is missing (Debian package curl)"
  local p
  for p in "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT"; do
    port_busy "$p" && die "port $p is in use on this machine: stop what holds it or set ETIMS_K8S_ETCD_PORT / ETIMS_K8S_APISERVER_PORT"
  done
  rm -rf "$RUN_DIR/etcd-data" "$RUN_DIR/kubectl-cache"
  mkdir -p "$RUN_DIR"
  write_credentials
  # A start that fails from here on leaves nothing running.
  trap 'if [ "${START_OK:-0}" != 1 ]; then log "start failed: stopping again"; stop_processes; fi' EXIT

  log "starting etcd v$ETCD_VERSION on 127.0.0.1:$ETCD_PORT (log: $RUN_DIR/etcd.log)"
  # The data is thrown away at stop: no fsync. setsid: it outlives this shell; stop ends it by its pid.
  setsid "$ETCD" --name etims-check --data-dir "$RUN_DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "etims-check=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
    --unsafe-no-fsync --log-level warn >"$RUN_DIR/etcd.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/etcd.pid"
  wait_for etcd "$(cat "$RUN_DIR/etcd.pid")" "$RUN_DIR/etcd.log" etcd_healthy

  log "starting kube-apiserver v$VERSION on https://127.0.0.1:$APISERVER_PORT (log: $RUN_DIR/kube-apiserver.log)"
  local pki="$RUN_DIR/pki"
  # No cluster behind it: no cloud provider, no kubelets, no endpoints for the kubernetes Service (the endpoint
  # reconciler refuses a loopback address); the admission plugins are the default set.
  setsid "$APISERVER" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --token-auth-file "$pki/tokens.csv" --authorization-mode RBAC --anonymous-auth=false \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/service-account.pub" --service-account-signing-key-file "$pki/service-account.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --endpoint-reconciler-type none \
    --profiling=false >"$RUN_DIR/kube-apiserver.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/kube-apiserver.pid"
  wait_for kube-apiserver "$(cat "$RUN_DIR/kube-apiserver.pid")" "$RUN_DIR/kube-apiserver.log" apiserver_ready
  START_OK=1
  log "ready in $((SECONDS - started))s: kube-apiserver v$VERSION + etcd v$ETCD_VERSION, kubeconfig $KUBECONFIG_FILE"
  echo "$KUBECONFIG_FILE"
}

# --------------------------------------------------------------------------------------------------- stop
stop_process() {
  local name="$1" signal="$2" pid i
  if pid=$(pid_of "$name"); then
    log "stopping $name (pid $pid)"
    kill "-$signal" "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name still running after 10s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$RUN_DIR/$name.pid"
}

# etcd is killed outright once the apiserver is gone: its data is deleted next (a graceful stop takes 2 s more).
stop_processes() {
  stop_process kube-apiserver TERM
  stop_process etcd KILL
}

stop() {
  stop_processes
  # Everything but the logs and validate/ (what the last validate rendered): etcd's data, the keys, the token and the
  # kubeconfig that holds it.
  rm -rf "$RUN_DIR/etcd-data" "$RUN_DIR/pki" "$RUN_DIR/kubectl-cache" "$KUBECONFIG_FILE"
  log "stopped"
}

status() {
  local pid
  if pid=$(pid_of kube-apiserver) && pid_of etcd >/dev/null; then
    echo "running: https://127.0.0.1:$APISERVER_PORT (kube-apiserver v$VERSION pid $pid, etcd v$ETCD_VERSION pid $(pid_of etcd)), kubeconfig $KUBECONFIG_FILE"
  else
    echo "not running (would listen on https://127.0.0.1:$APISERVER_PORT, etcd on 127.0.0.1:$ETCD_PORT)"
    return 3
  fi
}

# ----------------------------------------------------------------------------------------------- validate
# "group kind file" for every CRD file we can install. The files are controller-gen's layout (ours follow it):
# spec.group at two spaces, spec.names.kind at four.
crd_catalogue() {
  local f
  for f in "$CRD_CACHE"/keda/*.yaml "$CRD_CACHE"/prometheus-operator/*.yaml "$TOOLS_DIR"/crds/*.yaml; do
    awk -v f="$f" '
      /^  group: / { g = $2 }
      /^  names:/ { n = 1; next }
      n && /^    kind: / { k = $2; n = 0 }
      n && /^  [a-z]/ { n = 0 }
      END { if (g != "" && k != "") print g, k, f }' "$f"
  done
}

# "group kind" of every object in a stream of kustomize output (apiVersion and kind are top-level keys at column 0).
kinds_of() {
  awk '
    FNR == 1 && NR > 1 { if (k != "") print g, k; g = ""; k = "" }
    /^---/ { if (k != "") print g, k; g = ""; k = ""; next }
    /^apiVersion: / { v = $2; g = (v ~ /\//) ? substr(v, 1, index(v, "/") - 1) : "core" }
    /^kind: / { k = $2 }
    END { if (k != "") print g, k }' "$@"
}

# Documents of a kustomize stream whose kind is (select=1) or is not (select=0) Namespace.
namespaces_only() { split_namespaces 1 "$1"; }
without_namespaces() { split_namespaces 0 "$1"; }
split_namespaces() {
  awk -v want="$1" '
    function flush() { if (doc != "" && ((isns && want == 1) || (!isns && want == 0))) printf "---\n%s", doc; doc = ""; isns = 0 }
    /^---/ { flush(); next }
    { doc = doc $0 "\n"; if ($0 == "kind: Namespace") isns = 1 }
    END { flush() }' "$2"
}

# Server-side apply with strict field validation (--validate=strict: the request's fieldValidation=Strict; server-side
# apply refuses a field the schema does not declare in any case). Returns 1 when refused, 2 when the apiserver answered
# with a warning (accepted, but a failure unless ETIMS_K8S_ALLOW_WARNINGS=1).
apply_strict() {
  local file="$1" out="$2" err="$RUN_DIR/validate/apply.err"
  if ! kubectl_ apply --server-side --validate=strict -f "$file" >"$out" 2>"$err"; then
    cat "$err" >&2
    return 1
  fi
  if [ -s "$err" ]; then
    cat "$err" >&2
    if grep -qi '^warning' "$err" && [ "${ETIMS_K8S_ALLOW_WARNINGS:-0}" != 1 ]; then
      return 2
    fi
  fi
}

# Why apply_strict failed, in words.
refusal() {
  if [ "$1" -eq 2 ]; then
    echo "applied, but the apiserver answered with the warning(s) above (ETIMS_K8S_ALLOW_WARNINGS=1 lets warnings pass)"
  else
    echo "refused by the apiserver (above)"
  fi
}

install_crds() {
  local wanted="$1" catalogue="$RUN_DIR/validate/crds.txt" files=() names=() g k f
  crd_catalogue >"$catalogue"
  while read -r g k; do
    f=$(awk -v g="$g" -v k="$k" '$1 == g && $2 == k { print $3; exit }' "$catalogue")
    [ -n "$f" ] || continue
    files+=("$f")
  done < <(sort -u "$wanted")
  [ "${#files[@]}" -gt 0 ] || return 0
  local list="$RUN_DIR/validate/crds.yaml"
  : >"$list"
  for f in "${files[@]}"; do
    { echo "---"; cat "$f"; } >>"$list"
    names+=("crd/$(awk '/^metadata:/ { m = 1; next } m && /^  name: / { print $2; exit }' "$f")")
  done
  apply_strict "$list" "$RUN_DIR/validate/crds.out" || die "installing the CRDs failed: $(refusal $?)"
  kubectl_ wait --for condition=Established --timeout 30s "${names[@]}" >/dev/null ||
    die "the CRDs are not established after 30s"
  # kubectl caches discovery: the new kinds must be seen.
  rm -rf "$RUN_DIR/kubectl-cache"
  log "CRDs installed: $(for f in "${files[@]}"; do basename "$f" .yaml; done | sed 's/^[^_]*_//' | sort | tr '\n' ' ')"
}

# Each file of tools/kubernetes/selfcheck/ is wrong on purpose and says, in a "# expect: " line, what the apiserver must
# answer; it must be refused with that answer, so this validator is shown able to fail.
self_check() {
  local f expect out err n=0
  apply_strict "$TOOLS_DIR/selfcheck/namespace.yaml" /dev/null || die "self-check: its namespace: $(refusal $?)"
  for f in "$TOOLS_DIR"/selfcheck/*.yaml; do
    [ "$(basename "$f")" = namespace.yaml ] && continue
    expect=$(sed -n 's/^# expect: //p' "$f")
    [ -n "$expect" ] || die "self-check: $f has no '# expect: ' line"
    err="$RUN_DIR/validate/selfcheck.err"
    if kubectl_ apply --server-side --validate=strict -f "$f" >/dev/null 2>"$err"; then
      die "self-check: $(basename "$f") was accepted, but must be refused with: $expect"
    fi
    grep -qF -- "$expect" "$err" || {
      cat "$err" >&2
      die "self-check: $(basename "$f") was refused, but not with: $expect"
    }
    echo "self-check: $(basename "$f") refused as it must be: $(grep -F -m1 -- "$expect" "$err" | cut -c1-200)"
    n=$((n + 1))
  done
  # These are accepted (their CRDs do not look so deep); what the worker controller would create from them is not.
  for f in "$TOOLS_DIR"/selfcheck/controller/*.yaml; do
    expect=$(sed -n 's/^# expect: //p' "$f")
    [ -n "$expect" ] || die "self-check: $f has no '# expect: ' line"
    err="$RUN_DIR/validate/selfcheck.err"
    apply_strict "$f" /dev/null || die "self-check: controller/$(basename "$f") must be accepted: $(refusal $?)"
    if controller_dry_run "$f" "$RUN_DIR/validate/selfcheck" >/dev/null 2>"$err"; then
      die "self-check: what the worker controller would create from controller/$(basename "$f") was accepted, but must be refused with: $expect"
    fi
    grep -qF -- "$expect" "$err" || {
      cat "$err" >&2
      die "self-check: what the worker controller would create from controller/$(basename "$f") was refused, but not with: $expect"
    }
    echo "self-check: controller/$(basename "$f") accepted, what the worker controller would create from it refused as it must be: $(grep -F -m1 -- "$expect" "$err" | cut -c1-200)"
    n=$((n + 1))
  done
  log "self-check: all $n wrong manifests of tools/kubernetes/selfcheck/ refused, each with the expected error"
}

# What the Temporal worker controller creates from an overlay's objects, rendered as its v1.8.1 code does
# (internal/k8s/deployments.go, workerresourcetemplates.go) for a build id "check": from each (Temporal)WorkerDeployment a
# Deployment (its pod template, the controller's selector labels, replicas, minReadySeconds; not the env vars, volumes
# and annotations it adds), from each WorkerResourceTemplate its template with what the controller fills in
# (selector.matchLabels and scaleTargetRef when {}, the temporal triggers' "" metadata, metric selector labels).
# Dry-run against the real schemas, this checks what those CRDs keep unvalidated: the pod template below two levels,
# and a WorkerResourceTemplate's whole template (a KEDA ScaledObject, an HPA, a PDB...).
# shellcheck disable=SC2016 # a jq program, not shell
CONTROLLER_RENDER_JQ='
(if .kind == "List" then .items else [.] end) as $objs
| ($objs | map(select(.apiVersion == "temporal.io/v1alpha1" and (.kind == "WorkerDeployment" or .kind == "TemporalWorkerDeployment"))
    | {key: (.metadata.namespace + "/" + .metadata.name), value: (.spec.workerOptions.temporalNamespace // "")}) | from_entries) as $tns
| {apiVersion: "v1", kind: "List", items: [$objs[] | select(.apiVersion == "temporal.io/v1alpha1") |
  if .kind == "WorkerDeployment" or .kind == "TemporalWorkerDeployment" then
    .metadata.name as $wd
    | {"temporal.io/deployment-name": $wd, "temporal.io/build-id": "check"} as $sel
    | {apiVersion: "apps/v1", kind: "Deployment",
       metadata: {name: ($wd + "-check"), namespace: .metadata.namespace, labels: $sel},
       spec: ({selector: {matchLabels: $sel},
               template: (.spec.template | .metadata.labels = ((.metadata.labels // {}) + $sel))}
              + (if .spec.replicas != null then {replicas: .spec.replicas} else {} end)
              + (if .spec.minReadySeconds != null then {minReadySeconds: .spec.minReadySeconds} else {} end))}
  elif .kind == "WorkerResourceTemplate" then
    (.spec.workerDeploymentRef.name // .spec.temporalWorkerDeploymentRef.name) as $wd
    | .metadata.namespace as $ns
    | .metadata.name as $wrt
    | {"temporal.io/deployment-name": $wd, "temporal.io/build-id": "check"} as $sel
    | ($ns + "/" + $wd) as $server
    | ($tns[$ns + "/" + $wd] // "") as $tn
    | {temporal_worker_deployment_name: ($server | sub("/"; "_")), temporal_worker_build_id: "check", temporal_namespace: $tn} as $msel
    | .spec.template
    | .metadata = ((.metadata // {}) + {name: ($wd + "-" + $wrt + "-check"), namespace: $ns})
    | .metadata.labels = ((.metadata.labels // {}) + $sel)
    | if (.spec | type) == "object" then .spec |= (
        (if (.selector | type) == "object" and .selector.matchLabels == {} then .selector.matchLabels = $sel else . end)
        | (if (.metrics | type) == "array" then .metrics |= map(
            if (.external.metric.selector | type) == "object" and (.external.metric.selector | has("matchLabels"))
            then .external.metric.selector.matchLabels = ((.external.metric.selector.matchLabels // {}) + $msel) else . end)
          else . end)
        | (if (.triggers | type) == "array" then .triggers |= map(
            if .type == "temporal" and (.metadata | type) == "object" then .metadata |= (
              (if .workerDeploymentName == "" then .workerDeploymentName = $server else . end)
              | (if .workerDeploymentBuildId == "" then .workerDeploymentBuildId = "check" else . end)
              | (if .namespace == "" then .namespace = $tn else . end))
            else . end)
          else . end)
        | walk(if type == "object" and .scaleTargetRef == {}
            then .scaleTargetRef = {apiVersion: "apps/v1", kind: "Deployment", name: ($wd + "-check")} else . end))
      else . end
  else empty end]}'

# Prints "Kind=count ..." of the objects dry-run, or nothing when the overlay has no worker controller object.
controller_dry_run() {
  local rendered="$1" base="$2" rc=0
  grep -q '^apiVersion: temporal.io/' "$rendered" || return 0
  command -v jq >/dev/null 2>&1 || die "jq is missing (Debian package jq): it renders what the worker controller would create"
  # The objects as the apiserver stored them (defaults applied), then rendered.
  kubectl_ get -f "$rendered" -o json >"$base.stored.json" || return 1
  jq "$CONTROLLER_RENDER_JQ" "$base.stored.json" >"$base.controller.json" || return 1
  [ "$(jq '.items | length' "$base.controller.json")" -gt 0 ] || return 0
  # One document per object, not a v1 List: kubectl validates a List on the client side, each object on the server.
  jq -r '.items[] | "---", tojson' "$base.controller.json" >"$base.controller.yaml"
  if ! kubectl_ apply --server-side --dry-run=server --validate=strict -f "$base.controller.yaml" \
    >"$base.controller.out" 2>"$base.controller.err"; then
    cat "$base.controller.err" >&2
    return 1
  fi
  if [ -s "$base.controller.err" ]; then
    cat "$base.controller.err" >&2
    grep -qi '^warning' "$base.controller.err" && [ "${ETIMS_K8S_ALLOW_WARNINGS:-0}" != 1 ] && return 2
  fi
  jq -r '.items[].kind' "$base.controller.json" | sort | uniq -c | awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $2, $1 }'
}

validate() {
  local started=$SECONDS
  status >/dev/null || die "not running: tools/kubernetes.sh start first"
  [ -d "$CRD_CACHE/keda" ] || die "no CRDs in $CRD_CACHE: run tools/kubernetes.sh build"
  local overlays=() d
  if [ "$#" -gt 0 ]; then
    overlays=("$@")
  elif [ -d "$OVERLAYS_DIR" ]; then
    for d in "$OVERLAYS_DIR"/*/; do
      [ -f "$d/kustomization.yaml" ] || [ -f "$d/kustomization.yml" ] || [ -f "$d/Kustomization" ] || continue
      overlays+=("${d%/}")
    done
    [ "${#overlays[@]}" -gt 0 ] || die "no overlay with a kustomization in $OVERLAYS_DIR"
  fi
  local work="$RUN_DIR/validate"
  rm -rf "$work"
  mkdir -p "$work"

  # Render every overlay first: the kinds they use decide which CRDs to install.
  local i=0 name failed=0
  : >"$work/kinds.txt"
  kinds_of "$TOOLS_DIR"/selfcheck/*.yaml "$TOOLS_DIR"/selfcheck/controller/*.yaml >>"$work/kinds.txt"
  for d in "${overlays[@]}"; do
    i=$((i + 1))
    name=$(basename "$d")
    if ! kubectl_ kustomize "$d" >"$work/$i.yaml" 2>"$work/$i.kustomize.err"; then
      cat "$work/$i.kustomize.err" >&2
      log "FAIL $name: kubectl kustomize $d failed"
      failed=1
      continue
    fi
    if [ -s "$work/$i.kustomize.err" ]; then
      cat "$work/$i.kustomize.err" >&2
      log "FAIL $name: kubectl kustomize $d printed the warning(s) above"
      failed=1
      continue
    fi
    kinds_of "$work/$i.yaml" >>"$work/kinds.txt"
  done
  install_crds "$work/kinds.txt"
  self_check

  i=0
  for d in "${overlays[@]}"; do
    i=$((i + 1))
    name=$(basename "$d")
    # Rendered with an error or a warning: already reported.
    if ! [ -s "$work/$i.yaml" ] || [ -s "$work/$i.kustomize.err" ]; then continue; fi
    namespaces_only "$work/$i.yaml" >"$work/$i.namespaces.yaml"
    without_namespaces "$work/$i.yaml" >"$work/$i.rest.yaml"
    local objects namespaces applied rc=0
    objects=$(kinds_of "$work/$i.yaml" | wc -l)
    namespaces=$(kinds_of "$work/$i.namespaces.yaml" | wc -l)
    # A production overlay creates no Namespace (the operator makes it first, with the secrets): make it as they would.
    if [ "$namespaces" -eq 0 ]; then
      local ns
      for ns in $(grep -E '^  namespace: ' "$work/$i.rest.yaml" | awk '{ print $2 }' | sort -u); do
        [ "$ns" = "$NO_NAMESPACE" ] && continue
        kubectl_ create namespace "$ns" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null ||
          die "could not create namespace $ns for $name"
      done
    fi
    if [ "$namespaces" -gt 0 ]; then
      apply_strict "$work/$i.namespaces.yaml" "$work/$i.namespaces.out" || rc=$?
      if [ "$rc" -ne 0 ]; then
        log "FAIL $name: its Namespace objects: $(refusal "$rc")"
        failed=1
        continue
      fi
    fi
    : >"$work/$i.rest.out"
    if [ "$objects" -gt "$namespaces" ]; then
      apply_strict "$work/$i.rest.yaml" "$work/$i.rest.out" || rc=$?
      if [ "$rc" -ne 0 ]; then
        grep -q "namespaces \"$NO_NAMESPACE\" not found" "$RUN_DIR/validate/apply.err" 2>/dev/null &&
          log "($NO_NAMESPACE: a namespaced object of $name has no metadata.namespace and would land in the kubeconfig's default namespace)"
        log "FAIL $name: $(refusal "$rc")"
        failed=1
        continue
      fi
    fi
    applied=$(cat "$work/$i.namespaces.out" "$work/$i.rest.out" 2>/dev/null | grep -c . || true)
    if [ "$applied" -ne "$objects" ]; then
      cat "$work/$i.namespaces.out" "$work/$i.rest.out" >&2 2>/dev/null || true
      log "FAIL $name: $objects objects rendered, but kubectl reported $applied applied"
      failed=1
      continue
    fi
    local dry
    if ! dry=$(controller_dry_run "$work/$i.yaml" "$work/$i"); then
      log "FAIL $name: what the Temporal worker controller would create from it (rendered in $work/$i.controller.yaml) was refused or warned about (above)"
      failed=1
      continue
    fi
    echo "overlay $name: $objects objects applied ($(kinds_of "$work/$i.yaml" | awk '{ print $2 }' | sort | uniq -c |
      awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $2, $1 }'))${dry:+; what the worker controller would create from them, dry-run: $dry}"
  done
  [ "${#overlays[@]}" -gt 0 ] || log "WARNING: $OVERLAYS_DIR does not exist: no overlay validated (only the self-check ran)"
  [ "$failed" -eq 0 ] || die "validation failed (took $((SECONDS - started))s)"
  log "validated ${#overlays[@]} overlay(s) in $((SECONDS - started))s"
}

case "${1:-}" in
  build) build ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  validate)
    shift
    validate "$@"
    ;;
  kubectl)
    shift
    kubectl_ "$@"
    ;;
  -h | --help | help | "") awk 'NR > 1 && /^set -euo/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}" ;;
  *) die "unknown command '$1' (build | start | validate [overlay-dir...] | stop | status | kubectl ...)" ;;
esac
