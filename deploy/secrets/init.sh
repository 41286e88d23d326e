#!/usr/bin/env sh
# Writes the secret files docker-compose.yml mounts (one secret per file, in SECRETS_DIR, default this directory).
#
#   deploy/secrets/init.sh             generated secrets (payload key, codec server token, callback secret); the
#                                      service credentials left empty, to be written in by hand
#   deploy/secrets/init.sh --sandbox   the same, with the sandbox's demo credentials (`--profile sandbox`)
#
# A file that exists is kept, never overwritten (rotating a payload key is adding a line: docs/encryption.md).
# The directory is 0700 (nobody else on the host reads it) and the files 0644, because compose binds them into the
# containers as they are, where the `node` user (uid 1000) must read them. An empty file counts as unset.
set -eu

sandbox=false
for arg in "$@"; do
  case "$arg" in
    --sandbox) sandbox=true ;;
    -h | --help)
      sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "unknown argument: $arg (--sandbox | --help)" >&2
      exit 2
      ;;
  esac
done

dir="${SECRETS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
mkdir -p "$dir"
chmod 700 "$dir"

# 32 random bytes, base64url without padding (43 characters).
random() {
  head -c 32 /dev/urandom | base64 | tr -d '\n=' | tr '+/' '-_'
}

# random() above, as standard base64: what a payload key is.
random_key() {
  head -c 32 /dev/urandom | base64 | tr -d '\n'
}

write() {
  if [ -e "$dir/$1" ]; then
    echo "kept   $dir/$1"
    return
  fi
  (umask 077 && printf '%s\n' "$2" >"$dir/$1")
  chmod 644 "$dir/$1"
  if [ -n "$2" ]; then echo "wrote  $dir/$1"; else echo "empty  $dir/$1"; fi
}

write payload-keys "$(date -u +%Y-%m):$(random_key)"
write codec-auth-token "$(random)"
write callback-secret "$(random)"
if [ "$sandbox" = true ]; then
  # The sandbox's published demo credentials (docs/sandbox.md): no secret anywhere else.
  write compliance-api-key cmp_sk_test_demo_org_wide_0001
  write accounting-api-key sk_development_demo_key_0000000000000001
else
  write compliance-api-key ''
  write accounting-api-key ''
fi
write accounting-client-secret ''
write accounting-webhook-secret ''
write purchases-webhook-secret ''

echo "codec server token (for --codec-auth \"Bearer …\" and the UI's sign-in): $dir/codec-auth-token"
