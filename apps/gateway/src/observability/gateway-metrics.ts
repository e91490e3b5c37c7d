import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { RequestMetrics } from './request-metrics';

/**
 * The gateway's Prometheus metrics, in a registry of its own: in the embedded default two
 * countries' gateways share one process and must not share counters.
 */
@Injectable()
export class GatewayMetrics {
  readonly registry = new Registry();

  /** `http_requests_total` and `http_request_duration_seconds`, in this registry. */
  private readonly requests = new RequestMetrics(this.registry);

  readonly corsPreflightDenied = new Counter({
    name: 'cors_preflight_denied_total',
    help: 'Preflight requests from origins no application registered',
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'rate_limited_total',
    help: 'Requests refused with 429 by the per-application rate limit',
    registers: [this.registry],
  });

  /** The embedded frame's postMessage protocol: messages dropped because no target origin was set. */
  readonly postMessageDropped = new Counter({
    name: 'trust_surface_postmessage_dropped_total',
    help: 'postMessage messages the decision frame dropped instead of posting (never to a wildcard origin)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Records answered requests of one route, or of no route (`unmatched`): see RequestMetrics.forRoute. */
  forRoute(route: string): (method: string, status: number, elapsedMs: number) => void {
    return this.requests.forRoute(route);
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  setCountry(country: string): void {
    this.registry.setDefaultLabels({ country });
  }
}
