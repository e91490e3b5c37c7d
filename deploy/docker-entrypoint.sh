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
# --expose-gc: a quiet service gives start-up's and bursts' garbage back (reclaimMemoryWhenIdle).
# The gateway takes every request: a larger young generation means fewer scavenges under load.
if [ "$SERVICE" = gateway ]; then
  exec node --expose-gc --max-semi-space-size=64 "/app/apps/$SERVICE/dist/main.js" "$@"
fi
exec node --expose-gc "/app/apps/$SERVICE/dist/main.js" "$@"
