#!/usr/bin/env bash
# Deprecated path, kept so existing runbooks keep working: the script lives in tools/ with the other dev tools.
exec "$(dirname "${BASH_SOURCE[0]}")/../tools/temporal-postgres.sh" "$@"
