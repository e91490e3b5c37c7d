#!/bin/sh
# Starts one service of the image: SERVICE names it (default gateway). Arguments are passed on,
# so `migrate` runs only that service's migrations and exits.
set -eu
SERVICE="${SERVICE:-gateway}"
case "$SERVICE" in
  gateway|decisions|receipts|audit-chain|residency-router|webhooks|oidc|mcp-gateway) ;;
  *)
    echo "SERVICE must be one of gateway, decisions, receipts, audit-chain, residency-router, webhooks, oidc, mcp-gateway (got '$SERVICE')" >&2
    exit 64
    ;;
esac
# The memory flags (MEMORY_NODE_FLAGS, libs/service-kit/src/idle-memory.ts): a quiet service gives
# start-up's and bursts' garbage back (reclaimMemoryWhenIdle) without losing the maps of its
# optimised code, which V8's own idle collections would drop.
MEMORY_FLAGS="--expose-gc --retain-maps-for-n-gc=10000 --no-memory-reducer"
# The gateway takes every request: a larger young generation means fewer scavenges under load, and it
# asks for no collections (GATEWAY_MEMORY_NODE_FLAGS: no --expose-gc).
GATEWAY_MEMORY_FLAGS="--retain-maps-for-n-gc=10000 --no-memory-reducer"
if [ "$SERVICE" = gateway ]; then
  # shellcheck disable=SC2086
  exec node $GATEWAY_MEMORY_FLAGS --max-semi-space-size=64 "/app/apps/$SERVICE/dist/main.js" "$@"
fi
# shellcheck disable=SC2086
exec node $MEMORY_FLAGS "/app/apps/$SERVICE/dist/main.js" "$@"
