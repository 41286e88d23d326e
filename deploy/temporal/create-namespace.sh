#!/bin/sh
# Namespace job of docker-compose.yml (service temporal-create-namespace, image temporalio/admin-tools): creates
# the namespace and registers the project's search attributes. Safe to re-run.
# Keep SEARCH_ATTRIBUTES in sync with src/contracts/search-attributes.ts (.ci/run compares the two;
# tools/temporal-postgres.sh reads the TypeScript file directly).
set -eu

: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS is required}"
NAMESPACE="${DEFAULT_NAMESPACE:-default}"
RETENTION="${NAMESPACE_RETENTION:-72h}"
SEARCH_ATTRIBUTES="BusinessId=Keyword TraderInvoiceNumber=Keyword FiscalStatus=Keyword CuInvoiceNumber=Keyword FiscalDay=Keyword NeedsAttention=Bool AttentionReason=Keyword Application=Keyword"

echo "waiting for Temporal at $TEMPORAL_ADDRESS"
i=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -ge 120 ]; then
    echo "Temporal at $TEMPORAL_ADDRESS is not healthy after 120s" >&2
    exit 1
  fi
  sleep 1
done

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  echo "creating namespace $NAMESPACE (retention $RETENTION)"
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" --retention "$RETENTION"
fi

existing="$(temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" --output json)"
for pair in $SEARCH_ATTRIBUTES; do
  name="${pair%%=*}"
  type="${pair#*=}"
  if printf '%s' "$existing" | grep -q "\"$name\""; then
    echo "search attribute $name exists"
  else
    echo "registering search attribute $name ($type)"
    temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" --name "$name" --type "$type"
  fi
done
echo "namespace $NAMESPACE is ready"
