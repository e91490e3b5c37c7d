import type { JWK } from 'jose';
import {
  isReceiptSigningAlgorithm,
  publicKeyMembers,
  receiptAlgorithmOfJwk,
  type ReceiptPublicJwk,
  type ReceiptSigningAlgorithm,
  type ReceiptSigningKey,
} from '../flavors/signed';

/**
 * What the service publishes about its receipt signing keys:
 * - `/.well-known/jwks.json`: `{"keys": [...]}`, the keys a receipt may be signed with now;
 * - `/.well-known/witness-configuration`: carries `receipt_keys`, every key ever used with its
 *   validity window, so receipts signed before a rotation stay verifiable.
 */

export type ReceiptKeyStatus = 'current' | 'retired';

/** One row of `receipt_keys`: a key and the window in which it signed receipts. */
export interface ReceiptKeyHistoryEntry {
  kid: string;
  alg: ReceiptSigningAlgorithm;
  jwk: ReceiptPublicJwk;
  status: ReceiptKeyStatus;
  /** ISO 8601 UTC: first instant the key signed receipts. */
  valid_from: string;
  /** ISO 8601 UTC: the instant it stopped (rotation); null while current. */
  valid_until: string | null;
}

/** The key-history section of the witness-configuration document (other members may sit beside it). */
export interface ReceiptKeyHistory {
  receipt_keys: ReceiptKeyHistoryEntry[];
}

export interface ReceiptJwks {
  keys: ReceiptPublicJwk[];
}

/** A published history row for a key; a row with `validUntil` is a retired key. */
export function receiptKeyHistoryEntry(
  key: Pick<ReceiptSigningKey, 'kid' | 'alg' | 'publicJwk'>,
  validFrom: Date | string,
  validUntil?: Date | string | null,
): ReceiptKeyHistoryEntry {
  const from = isoInstant(validFrom, 'validFrom');
  const until = validUntil === undefined || validUntil === null ? null : isoInstant(validUntil, 'validUntil');
  if (until !== null && Date.parse(until) <= Date.parse(from)) {
    throw new RangeError(`A key's validity must end after it starts (${from} .. ${until})`);
  }
  return {
    kid: key.kid,
    alg: key.alg,
    jwk: publishedJwk(key.publicJwk, key.kid, key.alg),
    status: until === null ? 'current' : 'retired',
    valid_from: from,
    valid_until: until,
  };
}

/** jwks.json for the given keys: public members, kid, alg and use only (never a private member). */
export function receiptJwks(keys: ReadonlyArray<Pick<ReceiptSigningKey, 'kid' | 'alg' | 'publicJwk'>>): ReceiptJwks {
  return { keys: keys.map((key) => publishedJwk(key.publicJwk, key.kid, key.alg)) };
}

function publishedJwk(jwk: JWK, kid: string, alg: ReceiptSigningAlgorithm): ReceiptPublicJwk {
  return { ...publicKeyMembers(jwk), kid, alg, use: 'sig' };
}

function isoInstant(value: Date | string, name: string): string {
  const time = value instanceof Date ? value.getTime() : Date.parse(value);
  if (!Number.isFinite(time)) throw new RangeError(`${name} is not a valid instant: ${String(value)}`);
  return new Date(time).toISOString();
}

/** A key the verifier may use for one kid, with the window from the history when there is one. */
export interface CandidateKey {
  jwk: JWK;
  source: 'jwks' | 'witness configuration';
}

export interface KeyWindow {
  validFrom: number;
  validUntil: number | null;
}

export type KeyMaterial =
  | { ok: true; candidates: CandidateKey[]; windows: KeyWindow[] }
  | { ok: false; problem: string };

/**
 * Everything the supplied documents say about `kid`. Malformed documents are a problem; rows for
 * other kids are not looked at, so one bad row cannot block receipts signed with another key.
 */
export function keyMaterialFor(kid: string, jwks: unknown, witnessConfiguration: unknown): KeyMaterial {
  const candidates: CandidateKey[] = [];
  const windows: KeyWindow[] = [];
  if (jwks !== undefined) {
    if (!isObject(jwks) || !Array.isArray(jwks.keys)) return { ok: false, problem: 'the JWKS is not {"keys": [...]}' };
    for (const jwk of jwks.keys) {
      if (isObject(jwk) && jwk.kid === kid) candidates.push({ jwk: jwk as JWK, source: 'jwks' });
    }
  }
  if (witnessConfiguration !== undefined) {
    if (!isObject(witnessConfiguration) || !Array.isArray(witnessConfiguration.receipt_keys)) {
      return { ok: false, problem: 'the witness configuration has no receipt_keys array' };
    }
    for (const row of witnessConfiguration.receipt_keys) {
      if (!isObject(row) || row.kid !== kid) continue;
      const entry = historyRow(row);
      if (typeof entry === 'string') return { ok: false, problem: `the key history row for kid ${kid} ${entry}` };
      candidates.push({ jwk: entry.jwk, source: 'witness configuration' });
      windows.push(entry.window);
    }
  }
  return { ok: true, candidates, windows };
}

function historyRow(row: Record<string, unknown>): { jwk: JWK; window: KeyWindow } | string {
  if (!isObject(row.jwk)) return 'has no jwk';
  if (!isReceiptSigningAlgorithm(row.alg)) return `has alg ${String(row.alg)}, not ES256 or EdDSA`;
  if (receiptAlgorithmOfJwk(row.jwk) !== row.alg) return `has a jwk that is not an ${row.alg} key`;
  if (row.jwk.alg !== undefined && row.jwk.alg !== row.alg) {
    return `says alg ${row.alg} but its jwk says ${String(row.jwk.alg)}`;
  }
  const validFrom = typeof row.valid_from === 'string' ? Date.parse(row.valid_from) : NaN;
  if (!Number.isFinite(validFrom)) return 'has no valid_from instant';
  let validUntil: number | null = null;
  if (row.valid_until !== undefined && row.valid_until !== null) {
    validUntil = typeof row.valid_until === 'string' ? Date.parse(row.valid_until) : NaN;
    if (!Number.isFinite(validUntil)) return 'has a valid_until that is not an instant';
  }
  return { jwk: { ...(row.jwk as JWK), alg: row.alg }, window: { validFrom, validUntil } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
