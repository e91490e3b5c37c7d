import { Inject, Injectable } from '@nestjs/common';
import { GatewayEnvironment } from '@dcr/config';
import { DomainError, TokenBucketLimiter } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';

const HOUR_S = 3600;

/**
 * How many inbox sign-in codes one client address may ask for (SIGN_IN_CODES_PER_IP_PER_HOUR, a token
 * bucket per address refilled over the hour; 0: no limit). The public inbox sign-in mails a code to
 * whatever address it is given; each address gets at most 5 codes an hour (the decisions service),
 * and this keeps one client from mailing codes to address after address. Per gateway process, like
 * the per-application limit; the address is `request.ip`, read through TRUST_PROXY.
 */
@Injectable()
export class SignInCodeLimit {
  private readonly perHour: number;
  private readonly limiter?: TokenBucketLimiter;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    this.perHour = (context.env as GatewayEnvironment).SIGN_IN_CODES_PER_IP_PER_HOUR;
    if (this.perHour > 0) this.limiter = new TokenBucketLimiter({ ratePerSecond: this.perHour / HOUR_S, burst: this.perHour });
  }

  /** Takes one code's worth for `clientAddress`, or refuses: 429 `rate_limited` with `retry_after`. */
  take(clientAddress: string): void {
    if (!this.limiter) return;
    const decision = this.limiter.take(clientAddress);
    if (decision.allowed) return;
    throw new DomainError(
      'rate_limited',
      `Too many sign-in codes were asked for from this network address (at most ${this.perHour} an hour); retry after ${decision.retryAfterSeconds}s`,
      undefined,
      { retry_after: decision.retryAfterSeconds },
    );
  }
}
