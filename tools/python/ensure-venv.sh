#!/usr/bin/env bash
# Creates .cache/python-venv with test/python/requirements.txt installed, or reuses it when it already holds exactly
# those requirements; prints the venv's python. The Python caller tests (test/interop) run this themselves; CI runs
# it before `npm test` so its time is not spent inside a test's hook. Serialised with flock: test files run in
# parallel and would otherwise build the same venv twice at once.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
venv=".cache/python-venv"
requirements="test/python/requirements.txt"
stamp="$venv/.requirements.sha256"

mkdir -p .cache
exec 9>".cache/python-venv.lock"
flock 9

wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  echo "$venv/bin/python"
  exit 0
fi

if ! command -v python3 >/dev/null 2>&1; then
  echo "python3 is not installed: the Python caller tests need Python 3.10+ with venv and pip (Debian: apt-get install python3 python3-venv)" >&2
  exit 1
fi
if ! python3 -m venv --clear "$venv" >&2; then
  echo "python3 -m venv failed: install the venv module (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet -r "$requirements" >&2
echo "$wanted" >"$stamp"
echo "$venv/bin/python"
