#!/bin/sh
# One-shot: wait until the Temporal server serves, then create the namespace workers
# poll (DEFAULT_NAMESPACE, `default` unless TEMPORAL_NAMESPACE says otherwise). As in
# temporalio/samples-server compose/scripts/create-namespace.sh.
set -eu
ns="${DEFAULT_NAMESPACE:-default}"
address="${TEMPORAL_ADDRESS:-temporal:7233}"
tries=60
i=1
until temporal operator cluster health --address "$address" >/dev/null 2>&1; do
  [ "$i" -ge "$tries" ] && { echo "Temporal at $address is not healthy after $tries tries" >&2; exit 1; }
  i=$((i + 1)); sleep 2
done
temporal operator namespace describe -n "$ns" --address "$address" >/dev/null 2>&1 \
  || temporal operator namespace create -n "$ns" --address "$address"
echo "namespace $ns ready"
