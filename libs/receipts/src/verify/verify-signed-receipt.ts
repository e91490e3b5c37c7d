import { base64url, errors, flattenedVerify, importJWK, type CryptoKey, type JWK } from 'jose';
import { canonicalReceipt } from '../flavors/canonical';
import {
  RECEIPT_JWS_TYPE,
  isReceiptSigningAlgorithm,
  publicKeyMembers,
  receiptAlgorithmOfJwk,
  type ReceiptSigningAlgorithm,
} from '../flavors/signed';
import { keyMaterialFor, type CandidateKey, type KeyWindow } from './published-keys';

export type ReceiptVerificationFailureCode =
  | 'malformed'
  | 'unknown_key'
  | 'bad_signature'
  | 'unsupported_alg'
  | 'key_not_valid_at_signing';

export type ReceiptVerification =
  | { valid: true; kid: string; alg: ReceiptSigningAlgorithm }
  | { valid: false; reason: string; code: ReceiptVerificationFailureCode };

export interface ReceiptVerificationKeys {
  /** The published `/.well-known/jwks.json`. */
  jwks?: { keys: JWK[] };
  /** The published `/.well-known/witness-configuration` (its `receipt_keys`, see ReceiptKeyHistory). */
  witnessConfiguration?: unknown;
}

type Failure = Extract<ReceiptVerification, { valid: false }>;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** How far ahead of the verifier's clock a signature's `iat` may be (clocks differ a little). */
const IAT_FUTURE_LEEWAY_MS = 5 * 60_000;

/**
 * Verifies a signed receipt offline: rebuilds the RFC 8785 bytes of `payload`, re-attaches them to
 * the detached JWS and checks the signature with the key whose `kid` the protected header names,
 * taken only from the documents passed in. Nothing is fetched; `jku`, `x5u` and embedded keys in the
 * header are never used. Keys with a published history must have been valid when the receipt was
 * signed (`iat`), and a receipt cannot record events after its key was retired.
 */
export async function verifySignedReceipt(signed: unknown, keys: ReceiptVerificationKeys): Promise<ReceiptVerification> {
  if (!isObject(signed)) return fail('malformed', 'a signed receipt is a JSON object {"payload": ..., "signature": ...}');
  if (signed.payload === undefined) return fail('malformed', 'the payload is missing');
  if (!isObject(signed.payload)) return fail('malformed', 'the payload is not a receipt object');
  if (signed.signature === undefined) return fail('malformed', 'the signature is missing');
  if (typeof signed.signature !== 'string') return fail('malformed', 'the signature is not a string');

  const parts = signed.signature.split('.');
  if (parts.length !== 3) return fail('malformed', 'the signature is not a detached compact JWS "<protected>..<signature>"');
  const [encodedHeader, attachedPayload, encodedSignature] = parts;
  if (attachedPayload !== '') {
    return fail(
      'malformed',
      'the signature carries its own payload; a receipt signature is detached ("<protected>..<signature>")',
    );
  }
  if (!BASE64URL.test(encodedHeader)) return fail('malformed', 'the protected header is missing or not base64url');
  const header = decodeProtectedHeader(encodedHeader);
  if (!header) return fail('malformed', 'the protected header is not a base64url-encoded JSON object');
  // The header before the signature value, so `alg: none` (empty signature) is refused as such.
  const headerProblem = protectedHeaderProblem(header);
  if (headerProblem) return headerProblem;
  if (!BASE64URL.test(encodedSignature)) return fail('malformed', 'the signature value is missing or not base64url');
  const alg = header.alg as ReceiptSigningAlgorithm;
  const kid = header.kid as string;

  let payload: string;
  try {
    payload = base64url.encode(canonicalReceipt(signed.payload));
  } catch (error) {
    return fail('malformed', `the payload is not JSON: ${(error as Error).message}`);
  }

  if (keys.jwks === undefined && keys.witnessConfiguration === undefined) {
    return fail('unknown_key', 'no keys were supplied: pass the JWKS and/or the witness configuration');
  }
  const material = keyMaterialFor(kid, keys.jwks, keys.witnessConfiguration);
  if (!material.ok) return fail('malformed', material.problem);
  if (material.candidates.length === 0) {
    return fail('unknown_key', `no key with kid ${kid} in the supplied JWKS or key history`);
  }

  let failure: Failure | undefined;
  let verified = false;
  for (const candidate of material.candidates) {
    const unfit = unfitForAlgorithm(candidate, kid, alg);
    if (unfit) {
      failure ??= unfit;
      continue;
    }
    const jws = { protected: encodedHeader, payload, signature: encodedSignature };
    const attempt = await verifyWith(candidate, kid, alg, jws);
    if (attempt === true) {
      verified = true;
      break;
    }
    // A key that fits but does not verify says more than a key of the wrong type.
    failure = attempt;
  }
  if (!verified) return failure ?? fail('unknown_key', `no usable key with kid ${kid}`);

  const windowProblem = signingTimeProblem(kid, material.windows, header.iat as number | undefined, signed.payload);
  if (windowProblem) return fail('key_not_valid_at_signing', windowProblem);
  return { valid: true, kid, alg };
}

function protectedHeaderProblem(header: Record<string, unknown>): Failure | undefined {
  const { alg, kid, typ, iat } = header;
  if (alg === undefined) return fail('malformed', 'the protected header has no alg');
  if (!isReceiptSigningAlgorithm(alg)) {
    return fail('unsupported_alg', `alg ${JSON.stringify(alg)} is refused: receipts are signed with ES256 or EdDSA`);
  }
  if (typeof kid !== 'string' || kid === '') return fail('malformed', 'the protected header has no kid');
  // Every receipt signature names its type and when it was made (signReceipt): one without is not ours.
  if (typ !== RECEIPT_JWS_TYPE) {
    return fail('malformed', typ === undefined ? `the protected header has no typ (${RECEIPT_JWS_TYPE})` : `the protected header's typ ${JSON.stringify(typ)} is not ${RECEIPT_JWS_TYPE}`);
  }
  if ('crit' in header || 'b64' in header) {
    return fail('malformed', 'the protected header uses crit/b64 extensions, which receipt signatures never do');
  }
  if (iat === undefined) return fail('malformed', 'the protected header has no iat (when the receipt was signed)');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) {
    return fail('malformed', "the protected header's iat is not a NumericDate");
  }
  if (iat * 1000 > Date.now() + IAT_FUTURE_LEEWAY_MS) {
    return fail('malformed', `the protected header's iat (${new Date(iat * 1000).toISOString()}) lies in the future: no receipt is signed ahead of time`);
  }
  return undefined;
}

function unfitForAlgorithm(candidate: CandidateKey, kid: string, alg: ReceiptSigningAlgorithm): Failure | undefined {
  const { jwk, source } = candidate;
  if (jwk.use !== undefined && jwk.use !== 'sig') {
    return fail('unknown_key', `key ${kid} in the ${source} is for use "${jwk.use}", not signatures`);
  }
  const keyAlg = receiptAlgorithmOfJwk(jwk);
  if (keyAlg !== alg) {
    const what = keyAlg ? `an ${keyAlg} key` : `a kty ${String(jwk.kty)} key`;
    return fail('unsupported_alg', `the header says ${alg}, but key ${kid} in the ${source} is ${what}`);
  }
  if (jwk.alg !== undefined && jwk.alg !== alg) {
    return fail('unsupported_alg', `the header says ${alg}, but key ${kid} in the ${source} is for ${String(jwk.alg)}`);
  }
  return undefined;
}

async function verifyWith(
  candidate: CandidateKey,
  kid: string,
  alg: ReceiptSigningAlgorithm,
  jws: { protected: string; payload: string; signature: string },
): Promise<true | Failure> {
  let key: CryptoKey;
  try {
    // Public members only: a private or decorated JWK in a key document must not change the outcome.
    key = (await importJWK(publicKeyMembers(candidate.jwk), alg)) as CryptoKey;
  } catch (error) {
    return fail('unknown_key', `key ${kid} in the ${candidate.source} cannot be imported: ${(error as Error).message}`);
  }
  try {
    await flattenedVerify(jws, key, { algorithms: [alg] });
    return true;
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return fail('bad_signature', `the signature does not match the payload and protected header (kid ${kid}, ${alg})`);
    }
    if (error instanceof errors.JOSEAlgNotAllowed) return fail('unsupported_alg', (error as Error).message);
    if (error instanceof errors.JWSInvalid) return fail('malformed', `the JWS is invalid: ${(error as Error).message}`);
    return fail('bad_signature', `the signature cannot be checked: ${(error as Error).message}`);
  }
}

/** Whether some published window of the key covers the signing time and every recorded event. */
function signingTimeProblem(
  kid: string,
  windows: KeyWindow[],
  iat: number | undefined,
  payload: Record<string, unknown>,
): string | undefined {
  if (windows.length === 0) return undefined;
  const latestEvent = latestEventTime(payload);
  let problem: string | undefined;
  for (const { validFrom, validUntil } of windows) {
    const span = `${iso(validFrom)} .. ${validUntil === null ? 'now' : iso(validUntil)}`;
    if (iat !== undefined) {
      const signedAt = iat * 1000;
      // iat has second precision: a key that started mid-second may sign in that same second.
      if (signedAt + 1000 <= validFrom || (validUntil !== null && signedAt >= validUntil)) {
        problem ??= `key ${kid} signed receipts ${span}; this receipt was signed at ${iso(signedAt)}`;
        continue;
      }
    }
    if (validUntil !== null && latestEvent !== undefined && latestEvent >= validUntil) {
      problem ??= `key ${kid} signed receipts ${span}; this receipt records an event at ${iso(latestEvent)}`;
      continue;
    }
    return undefined;
  }
  return problem;
}

function latestEventTime(payload: Record<string, unknown>): number | undefined {
  if (!Array.isArray(payload.event)) return undefined;
  let latest: number | undefined;
  for (const row of payload.event) {
    const time = isObject(row) && typeof row.event_time === 'string' ? Date.parse(row.event_time) : NaN;
    if (Number.isFinite(time) && (latest === undefined || time > latest)) latest = time;
  }
  return latest;
}

function decodeProtectedHeader(encoded: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(encoded)));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function iso(time: number): string {
  return new Date(time).toISOString();
}

function fail(code: ReceiptVerificationFailureCode, reason: string): Failure {
  return { valid: false, code, reason };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
