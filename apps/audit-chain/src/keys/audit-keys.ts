import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AuditChainEnvironment, parseDurationSetting } from '@dcr/config';
import { PublishedKeyMessage } from '@dcr/contracts';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { Cosigner, cosignerFromKey, cosignerFromSeed, NoteSigner, noteSignerFromKey, noteSignerFromSeed } from '@dcr/transparency';
import { hkdfSync } from 'node:crypto';
import { DataSource } from 'typeorm';

/**
 * The log's checkpoint key and the witness's cosigning key of this country. Production configures
 * both; elsewhere they are derived from SUBJECT_REF_KEY, so a development country keeps its keys
 * across restarts without a key file. Every public key used is recorded at boot (and the previous one
 * of the same purpose retired), so `/.well-known/witness-configuration` lists current and historical keys.
 */
@Injectable()
export class AuditKeys implements OnApplicationBootstrap {
  private readonly logger = new Logger(AuditKeys.name);
  readonly country: string;
  readonly origin: string;
  readonly checkpointSigner: NoteSigner;
  readonly cosigner: Cosigner;
  readonly anchorIntervalMs: number;
  readonly publicBaseUrl: string | null;
  readonly externalWitnesses: Array<{ url: string; verifierKey: string }>;

  constructor(
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
    private readonly dataSource: DataSource,
  ) {
    const env = context.env as AuditChainEnvironment;
    this.country = env.COUNTRY;
    const cc = env.COUNTRY.toLowerCase();
    const host = env.PUBLIC_BASE_URL ? new URL(env.PUBLIC_BASE_URL).host : 'dcr.invalid';
    this.origin = env.AUDIT_LOG_ORIGIN ?? `${host}/audit/${cc}`;
    this.publicBaseUrl = env.PUBLIC_BASE_URL ?? null;
    this.anchorIntervalMs = parseDurationSetting(env.ANCHOR_INTERVAL ?? '15m') ?? 15 * 60_000;
    const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', env.SUBJECT_REF_KEY, 'dcr-audit-keys', `${purpose}:${cc}`, 32));
    this.checkpointSigner = env.AUDIT_CHECKPOINT_KEY
      ? noteSignerFromKey(env.AUDIT_CHECKPOINT_KEY)
      : noteSignerFromSeed(this.origin, derive('checkpoint'));
    this.cosigner = env.AUDIT_WITNESS_KEY
      ? cosignerFromKey(env.AUDIT_WITNESS_KEY)
      : cosignerFromSeed(`${host}/witness/${cc}`, derive('witness'));
    if (!env.AUDIT_CHECKPOINT_KEY || !env.AUDIT_WITNESS_KEY) {
      this.logger.warn('audit keys derived from SUBJECT_REF_KEY (development only; production sets AUDIT_CHECKPOINT_KEY and AUDIT_WITNESS_KEY)');
    }
    this.externalWitnesses = (env.AUDIT_EXTERNAL_WITNESSES ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
      .map((item) => {
        const [url, verifierKey] = item.split(/\s+/);
        return { url, verifierKey };
      });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.publish('checkpoint', this.checkpointSigner.name, this.checkpointSigner.keyId, this.checkpointSigner.verifierKey);
    await this.publish('cosignature', this.cosigner.name, this.cosigner.keyId, this.cosigner.verifierKey);
  }

  /** Records a key as current for its purpose and retires any other current key of that purpose. */
  private async publish(purpose: string, name: string, keyId: Buffer, verifierKey: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('audit_chain.published_keys'))`);
      await manager.query(
        `INSERT INTO "audit_chain"."published_keys" ("verifier_key", "purpose", "name", "key_id", "first_used_at", "retired_at")
         VALUES ($1, $2, $3, $4, now(), NULL)
         ON CONFLICT ("verifier_key") DO UPDATE SET "retired_at" = NULL`,
        [verifierKey, purpose, name, keyId.toString('hex')],
      );
      await manager.query(
        `UPDATE "audit_chain"."published_keys" SET "retired_at" = now()
         WHERE "purpose" = $1 AND "verifier_key" <> $2 AND "retired_at" IS NULL`,
        [purpose, verifierKey],
      );
    });
  }

  async publishedKeys(purpose: 'checkpoint' | 'cosignature'): Promise<PublishedKeyMessage[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT "verifier_key", "name", "key_id", "first_used_at", "retired_at" FROM "audit_chain"."published_keys"
       WHERE "purpose" = $1 ORDER BY "retired_at" DESC NULLS FIRST, "first_used_at" DESC`,
      [purpose],
    );
    return rows.map((row) => ({
      verifier_key: row.verifier_key as string,
      name: row.name as string,
      key_id: row.key_id as string,
      algorithm: purpose === 'checkpoint' ? 'ed25519' : 'cosignature/v1',
      status: row.retired_at ? 'retired' : 'current',
      first_used_at: (row.first_used_at as Date).toISOString(),
      retired_at: row.retired_at ? (row.retired_at as Date).toISOString() : null,
    }));
  }
}
