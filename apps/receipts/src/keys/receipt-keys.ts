import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ReceiptsEnvironment } from '@dcr/config';
import { ReceiptKeysReply } from '@dcr/contracts';
import {
  generateReceiptSigningKey,
  receiptJwks,
  receiptKeyHistoryEntry,
  ReceiptPublicJwk,
  ReceiptSigningAlgorithm,
  ReceiptSigningKey,
  receiptSigningKeyFromJwk,
} from '@dcr/receipts';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource } from 'typeorm';

/**
 * The country's receipt signing key, from RECEIPT_SIGNING_KEY (production), or made at start when
 * none is configured (development launchers keep one under `.data/`, so it survives restarts). At
 * start the key is recorded as current and any other current key is retired, so receipts signed
 * before a rotation still verify against the published history.
 */
@Injectable()
export class ReceiptKeys implements OnModuleInit {
  private readonly logger = new Logger(ReceiptKeys.name);
  private key?: ReceiptSigningKey;

  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    private readonly dataSource: DataSource,
  ) {}

  async onModuleInit(): Promise<void> {
    const env = this.context.env as ReceiptsEnvironment;
    if (env.RECEIPT_SIGNING_KEY) {
      this.key = await receiptSigningKeyFromJwk(JSON.parse(env.RECEIPT_SIGNING_KEY));
    } else {
      this.logger.warn('no RECEIPT_SIGNING_KEY: receipts are signed with a key made at start (development and tests only)');
      this.key = await generateReceiptSigningKey('ES256');
    }
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('receipts.signing_keys'))`);
      await manager.query(
        `INSERT INTO "receipts"."signing_keys" ("kid", "alg", "public_jwk", "valid_from", "valid_until") VALUES ($1, $2, $3, now(), NULL)
         ON CONFLICT ("kid") DO UPDATE SET "valid_until" = NULL`,
        [this.key!.kid, this.key!.alg, JSON.stringify(this.key!.publicJwk)],
      );
      await manager.query(`UPDATE "receipts"."signing_keys" SET "valid_until" = now() WHERE "kid" <> $1 AND "valid_until" IS NULL`, [this.key!.kid]);
    });
  }

  current(): ReceiptSigningKey {
    if (!this.key) throw new Error('the receipt signing key is not loaded yet');
    return this.key;
  }

  async published(): Promise<ReceiptKeysReply> {
    const rows: Array<{ kid: string; alg: ReceiptSigningAlgorithm; public_jwk: ReceiptPublicJwk; valid_from: Date; valid_until: Date | null }> =
      await this.dataSource.query(`SELECT * FROM "receipts"."signing_keys" ORDER BY "valid_from" DESC`);
    const keys = rows.map((row) => ({ kid: row.kid, alg: row.alg, publicJwk: row.public_jwk }));
    return {
      jwks: receiptJwks(keys.filter((_, i) => rows[i].valid_until === null)) as unknown as ReceiptKeysReply['jwks'],
      receipt_keys: rows.map((row, i) => receiptKeyHistoryEntry(keys[i], row.valid_from, row.valid_until)) as unknown as ReceiptKeysReply['receipt_keys'],
    };
  }
}
