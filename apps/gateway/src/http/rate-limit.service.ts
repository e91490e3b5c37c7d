import { Inject, Injectable } from '@nestjs/common';
import { GatewayEnvironment } from '@dcr/config';
import { DomainError, rateLimitField, rateLimitPolicyField, retryAfterField, TokenBucketLimiter } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { HeaderSink } from './direct-lane';

/** Per-application token bucket (RATE_LIMIT_RPS, RATE_LIMIT_BURST; RATE_LIMIT_RPS=0 turns it off). */
@Injectable()
export class RateLimitService {
  private readonly limiter: TokenBucketLimiter;
  private readonly policy: { ratePerSecond: number; burst: number };
  /** Constant for the policy, so made once (the header fields are those of `rateLimitHeaders`). */
  private readonly policyField: string;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext, private readonly metrics: GatewayMetrics) {
    const env = context.env as GatewayEnvironment;
    this.policy = { ratePerSecond: env.RATE_LIMIT_RPS, burst: env.RATE_LIMIT_BURST };
    this.limiter = new TokenBucketLimiter(this.policy);
    this.policyField = this.policy.ratePerSecond > 0 ? rateLimitPolicyField(this.policy) : '';
  }

  enforce(applicationId: string, reply: HeaderSink): void {
    if (this.policy.ratePerSecond === 0) return;
    const decision = this.limiter.take(applicationId);
    reply.header('ratelimit-policy', this.policyField).header('ratelimit', rateLimitField(decision));
    if (!decision.allowed) {
      reply.header('retry-after', retryAfterField(decision));
      this.metrics.rateLimited.inc();
      throw new DomainError(
        'rate_limited',
        `Rate limit of ${this.policy.ratePerSecond} requests/s (burst ${this.policy.burst}) exceeded; retry after ${decision.retryAfterSeconds}s`,
      );
    }
  }
}
