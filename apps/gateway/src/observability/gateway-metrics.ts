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

  /** The embedded frame's postMessage protocol: messages dropped because no target origin was set. */
  readonly postMessageDropped = new Counter({
    name: 'trust_surface_postmessage_dropped_total',
    help: 'postMessage messages the decision frame dropped instead of posting (never to a wildcard origin)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();

  /** Records one answered request; label children are cached so the hot path does no label hashing. */
  observe(method: string, route: string, status: number, elapsedMs: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.children.get(key);
    if (!child) {
      child = {
        count: this.requests.labels(method, route, String(status)),
        time: this.duration.labels(method, route),
      };
      this.children.set(key, child);
    }
    child.count.inc();
    child.time.observe(elapsedMs / 1000);
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  setCountry(country: string): void {
    this.registry.setDefaultLabels({ country });
  }
}
