import { Inject, Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { InjectRepository } from '@nestjs/typeorm';
import { GatewayEnvironment } from '@dcr/config';
import { canonicalJson, DomainError, hashCredential } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { LessThan, Repository } from 'typeorm';
import { CredentialIndex } from '../connect/credential-index';
import { IdempotencyKeyRecord } from './idempotency-key.entity';

/** How long an answer can be replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** A claim whose request never finished (a crash) can be taken over after this long. */
export const STALE_CLAIM_MS = 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The answer's encryption key: derived from the caller's Idempotency-Key, which is never stored. */
function answerKey(idempotencyKey: string, scope: string): Buffer {
  return Buffer.from(hkdfSync('sha256', idempotencyKey, scope, 'dcr idempotent answer v1', 32));
}

function seal(idempotencyKey: string, scope: string, body: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', answerKey(idempotencyKey, scope), iv);
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

function open(idempotencyKey: string, scope: string, stored: string): string {
  const raw = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', answerKey(idempotencyKey, scope), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

export type IdempotencyOutcome =
  | { kind: 'proceed'; scope: string; key: string }
  | { kind: 'replay'; status: number; body: string; contentType: string };

/**
 * `Idempotency-Key` on mutating POSTs (contract): the first request with a key is processed and its
 * answer kept; a repeat with the same key and the same request (method, path, canonical body) gets
 * that answer again, with `Idempotent-Replayed: true`; the same key with a different request is 409
 * `idempotency_conflict`, as is a repeat while the first is still being processed. Answers with a
 * 5xx status are not kept, so a retry runs again. Keys are scoped by the credential that sent them.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);

  private readonly adminTokenHash?: string;
  /** The server's half of a fingerprint's key (see begin). */
  private readonly fingerprintSecret: string;

  constructor(
    @InjectRepository(IdempotencyKeyRecord) private readonly records: Repository<IdempotencyKeyRecord>,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    const adminToken = (context.env as GatewayEnvironment).ADMIN_TOKEN;
    this.adminTokenHash = adminToken ? hashCredential(adminToken) : undefined;
    this.fingerprintSecret = (context.env as GatewayEnvironment).SUBJECT_REF_KEY;
  }

  /**
   * The scope of a request: the hash of a valid credential; for routes without one (the participant
   * API, authenticated by the token in its path) the path itself; undefined for an invalid credential,
   * which the Authenticator refuses (it runs before the claim in any case).
   */
  scopeOf(headers: Record<string, string | string[] | undefined>, path: string): string | undefined {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(headers.authorization ?? ''))?.[1];
    if (bearer) {
      const hash = hashCredential(bearer);
      const known = this.index.tokenByHash(hash) || hash === this.adminTokenHash || bearer.startsWith('inb_');
      return known ? `bearer:${hash}` : undefined;
    }
    const key = headers['x-publishable-key'];
    if (typeof key === 'string' && key) {
      const hash = hashCredential(key);
      return this.index.applicationByKeyHash(hash) ? `pk:${hash}` : undefined;
    }
    return `path:${path}`;
  }

  async begin(scope: string, rawKey: string, method: string, path: string, body: unknown): Promise<IdempotencyOutcome> {
    if (!KEY_PATTERN.test(rawKey)) {
      throw new DomainError('invalid_request', 'The Idempotency-Key header is not valid', [
        { field: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' },
      ]);
    }
    // Keyed by the server's secret and the key itself: a body names a person (an address), and a
    // request refused here for a person homed elsewhere leaves its fingerprint in this country for a
    // day; an unkeyed digest of it would give the address back to whoever tries candidate addresses.
    const fingerprint = createHmac('sha256', Buffer.from(hkdfSync('sha256', this.fingerprintSecret, `${scope}\n${rawKey}`, 'dcr idempotency fingerprint v2', 32)))
      .update(`${method}\n${path}\n${body === undefined ? '' : canonicalJson(body)}`)
      .digest('hex');
    const keyHash = hashCredential(rawKey);
    const now = new Date();
    // Claim the key, or take over a claim left behind by a request that never finished.
    const claimed: unknown[] = await this.records.query(
      `INSERT INTO "gateway"."idempotency_keys" ("scope", "key_hash", "fingerprint", "state", "claimed_at", "created_at")
       VALUES ($1, $2, $3, 'pending', $4, $4)
       ON CONFLICT ("scope", "key_hash") DO UPDATE SET "claimed_at" = EXCLUDED."claimed_at"
         WHERE "idempotency_keys"."state" = 'pending' AND "idempotency_keys"."fingerprint" = EXCLUDED."fingerprint"
           AND "idempotency_keys"."claimed_at" < $5
       RETURNING "key_hash"`,
      [scope, keyHash, fingerprint, now, new Date(now.getTime() - STALE_CLAIM_MS)],
    );
    if (claimed.length > 0) return { kind: 'proceed', scope, key: rawKey };
    const existing = await this.records.findOne({ where: { scope, keyHash } });
    if (!existing) return this.begin(scope, rawKey, method, path, body);
    if (existing.fingerprint !== fingerprint) {
      throw new DomainError('idempotency_conflict', 'This Idempotency-Key was used with a different request', [
        { field: 'Idempotency-Key', reason: 'already used with a different request' },
      ]);
    }
    if (existing.state !== 'done' || existing.responseStatus === null) {
      throw new DomainError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry shortly', [
        { field: 'Idempotency-Key', reason: 'a request with it is still being processed' },
      ]);
    }
    return {
      kind: 'replay',
      status: existing.responseStatus,
      body: existing.responseBody ? open(rawKey, scope, existing.responseBody) : '',
      contentType: existing.responseType ?? 'application/json; charset=utf-8',
    };
  }

  /** Keeps the answer (below 500), or releases the key so that a retry runs again. */
  async finish(scope: string, key: string, status: number, body: string, contentType: string): Promise<void> {
    try {
      const keyHash = hashCredential(key);
      if (status >= 500) {
        await this.records.delete({ scope, keyHash });
        return;
      }
      await this.records.update(
        { scope, keyHash },
        { state: 'done', responseStatus: status, responseBody: seal(key, scope, body), responseType: contentType },
      );
    } catch (error) {
      this.logger.warn(`could not keep the answer of an idempotent request: ${(error as Error).message}`);
    }
  }

  @Interval(3600_000)
  async expire(): Promise<void> {
    await this.records.delete({ createdAt: LessThan(new Date(Date.now() - IDEMPOTENCY_TTL_MS)) }).catch(() => undefined);
  }
}
