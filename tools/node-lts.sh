#!/usr/bin/env bash
# Prints the directory of a `node` binary of the project's Node line (.node-version), for what runs outside npm's
# scripts (those find it on their own PATH): the machine's own when it is of that major version, otherwise the one
# `npm ci` installed from the npm registry (package.json optionalDependencies). Use it, after `npm ci`, as
#   export PATH="$(tools/node-lts.sh):$PATH"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(tr -d '[:space:]' <"$ROOT/.node-version")"
major="${version%%.*}"

for node in "$(command -v node || true)" "$ROOT"/node_modules/node-*-*/bin/node; do
  if [ -x "$node" ] && [ "$("$node" -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
    dirname "$node"
    exit 0
  fi
done
echo "tools/node-lts.sh: no Node $major here: run npm ci, or where the npm registry has no node package of $version for" \
  "$(uname -s) $(uname -m), install Node $major" >&2
exit 1
