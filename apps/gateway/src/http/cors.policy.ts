import { Injectable } from '@nestjs/common';
import { DomainError } from '@dcr/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ActivityRecorder } from '../activity/activity.recorder';
import { CredentialIndex } from '../connect/credential-index';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { errorBody } from './error-responder';

const PUBLIC_PREFIXES = ['/.well-known/', '/schemas/', '/sdk/', '/js/'];
const EXPOSED = 'Retry-After, RateLimit, RateLimit-Policy, X-Request-Id, Deprecation, Sunset, Link';
const ALLOWED_HEADERS = 'Content-Type, X-Publishable-Key, Idempotency-Key, X-Request-Id';

/**
 * CORS for browser calls. Public documents are readable from anywhere. The API answers browsers
 * only from origins some application registered: a preflight carries no credential, so it is
 * checked against every registered origin, and the publishable key's own application is checked
 * again on the real request (Authenticator). API tokens never belong in a browser, so `Authorization`
 * is not an allowed header. A denied preflight is recorded as `cors.preflight_denied`.
 */
@Injectable()
export class CorsPolicy {
  constructor(
    private readonly index: CredentialIndex,
    private readonly activity: ActivityRecorder,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** Returns true when it answered the request itself (a preflight). */
  apply(request: FastifyRequest, reply: FastifyReply): boolean {
    const origin = request.headers.origin;
    if (origin === undefined) return false;
    const path = request.url;
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;

    if (PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix))) {
      reply.header('access-control-allow-origin', '*');
      if (!preflight) return false;
      void reply.status(204).headers({ 'access-control-allow-methods': 'GET, HEAD', 'access-control-max-age': '600' }).send();
      return true;
    }
    if (!path.startsWith('/api/')) return false;

    if (this.index.originKnown(origin)) {
      reply.headers({ 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-expose-headers': EXPOSED });
      if (!preflight) return false;
      void reply
        .status(204)
        .headers({
          'access-control-allow-methods': 'GET, POST, PATCH, DELETE',
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': '600',
        })
        .send();
      return true;
    }
    if (!preflight) return false;
    this.metrics.corsPreflightDenied.inc();
    this.activity.record('cors.preflight_denied', {
      origin: origin.slice(0, 200),
      path: path.split('?')[0].slice(0, 200),
      requested_method: String(request.headers['access-control-request-method']).slice(0, 20),
      request_id: request.id,
    });
    const denied = new DomainError('origin_not_allowed', `The origin ${origin.slice(0, 200)} is not registered by any application`);
    void reply.status(403).type('application/json; charset=utf-8').send(errorBody(denied, request.id));
    return true;
  }
}
