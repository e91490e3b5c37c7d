import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The gateway's Prometheus metrics, in a registry of its own: in the embedded default two
 * countries' gateways share one process and must not share counters.
 */
@Injectable()
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

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

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  setCountry(country: string): void {
    this.registry.setDefaultLabels({ country });
  }
}
