import { Inject, Injectable, Logger } from '@nestjs/common';
import { parseDurationSetting, WebhooksEnvironment } from '@dcr/config';
import { parseRetryWaits } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { hkdfSync } from 'node:crypto';

/** The webhooks service's configuration, parsed once. */
@Injectable()
export class WebhooksSettings {
  readonly secretKey: Buffer;
  /**
   * Seals subscription secrets on their way to the peer countries (SubscriptionReplicator): derived
   * from SUBJECT_REF_KEY, which every country shares, so each peer opens it and seals the secret again
   * under its own WEBHOOK_SECRET_KEY.
   */
  readonly peerKey: Buffer;
  readonly retryWaits: number[];
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly leaseMs: number;
  readonly concurrency: number;
  /**
   * The service runs on a developer's machine (NODE_ENV development or test): sandbox applications
   * may deliver to its loopback and private addresses. In production every delivery goes to public
   * addresses only (docs/webhooks.md).
   */
  readonly localTargets: boolean;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    const env = context.env as WebhooksEnvironment;
    if (env.WEBHOOK_SECRET_KEY) {
      this.secretKey = Buffer.from(env.WEBHOOK_SECRET_KEY, 'base64');
    } else {
      new Logger(WebhooksSettings.name).warn('WEBHOOK_SECRET_KEY derived from SUBJECT_REF_KEY (development only; production sets it)');
      this.secretKey = Buffer.from(hkdfSync('sha256', env.SUBJECT_REF_KEY, 'dcr-webhooks', `secret-key:${env.COUNTRY.toLowerCase()}`, 32));
    }
    this.peerKey = Buffer.from(hkdfSync('sha256', env.SUBJECT_REF_KEY, 'dcr-webhooks', 'subscriptions-between-countries', 32));
    this.retryWaits = parseRetryWaits(env.WEBHOOK_RETRY_WAITS ?? '30s,2m,15m,1h');
    this.connectTimeoutMs = parseDurationSetting(env.WEBHOOK_CONNECT_TIMEOUT ?? '10s') ?? 10_000;
    this.readTimeoutMs = parseDurationSetting(env.WEBHOOK_READ_TIMEOUT ?? '15s') ?? 15_000;
    this.leaseMs = parseDurationSetting(env.WEBHOOK_CLAIM_LEASE ?? '60s') ?? 60_000;
    this.concurrency = env.WEBHOOK_CONCURRENCY ?? 128;
    this.localTargets = env.NODE_ENV !== 'production';
  }
}
