import { GatewayEnvironment } from '@dcr/config';
import type { FastifyRequest } from 'fastify';

/** The country's public base URL: PUBLIC_BASE_URL when set, else what the request reached. */
export function publicBaseUrl(env: GatewayEnvironment, request: FastifyRequest): string {
  return env.PUBLIC_BASE_URL ?? `${request.protocol}://${request.host}`;
}
