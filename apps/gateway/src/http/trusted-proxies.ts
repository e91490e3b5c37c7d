import type { GatewayEnvironment } from '@dcr/config';

/**
 * Fastify's `trustProxy` from `TRUST_PROXY`: which peers' forwarding headers are believed. Never
 * every peer by default: behind no proxy, `X-Forwarded-For` is whatever the client wrote, and the
 * address it gives keys the form-builder hook's per-address rate limit.
 */
export function trustedProxies(env: Pick<GatewayEnvironment, 'TRUST_PROXY'>): boolean | string[] {
  const setting = env.TRUST_PROXY.trim();
  if (setting === 'true') return true;
  if (setting === 'false') return false;
  return setting.split(',').map((entry) => entry.trim());
}
