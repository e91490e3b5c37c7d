import {
  FlattenedSign,
  calculateJwkThumbprint,
  exportJWK,
  flattenedVerify,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';
import { canonicalReceipt } from './canonical';

/**
 * `flavor=signed`: `{"payload": <canonical receipt>, "signature": "<protected>..<signature>"}`, a
 * detached JWS (RFC 7515 appendix F) over the RFC 8785 bytes of `payload`. The protected header
 * carries `alg` (ES256 or EdDSA), `kid` (the RFC 7638 SHA-256 thumbprint of the public key), `typ`
 * and `iat` (when it was signed, so a verifier can hold the key's validity window against it).
 * `b64` keeps its default (true): the signing input is BASE64URL(header) '.' BASE64URL(JCS bytes).
 */

export type ReceiptSigningAlgorithm = 'ES256' | 'EdDSA';

export const RECEIPT_SIGNING_ALGORITHMS: readonly ReceiptSigningAlgorithm[] = ['ES256', 'EdDSA'];

/** The `typ` of the protected header of a signed receipt. */
export const RECEIPT_JWS_TYPE = 'receipt+jws';

/** The public half of a receipt signing key as published in jwks.json and in the key history. */
export interface ReceiptPublicJwk extends JWK {
  kty: 'EC' | 'OKP';
  crv: 'P-256' | 'Ed25519';
  x: string;
  y?: string;
  kid: string;
  alg: ReceiptSigningAlgorithm;
  use: 'sig';
}

export interface ReceiptSigningKey {
  /** RFC 7638 SHA-256 thumbprint of the public key, base64url. */
  kid: string;
  alg: ReceiptSigningAlgorithm;
  privateKey: CryptoKey;
  publicJwk: ReceiptPublicJwk;
  /** The private JWK, for storing the key (present when the key was generated or loaded from a JWK). */
  privateJwk?: JWK;
}

export interface SignedReceipt {
  payload: Record<string, unknown>;
  /** Detached compact JWS: `<protected>..<signature>`. */
  signature: string;
}

export type ReceiptProtectedHeader = {
  alg: ReceiptSigningAlgorithm;
  kid: string;
  typ: typeof RECEIPT_JWS_TYPE;
  /** Signing time, seconds since the epoch. */
  iat: number;
};

export type ReceiptKeyErrorCode = 'unsupported_alg' | 'invalid_key';

/** A signing key that cannot be used; raised when keys are generated or loaded (fail fast at boot). */
export class ReceiptKeyError extends Error {
  constructor(
    readonly code: ReceiptKeyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ReceiptKeyError';
  }
}

const CURVE_OF_ALGORITHM: Readonly<Record<ReceiptSigningAlgorithm, { kty: 'EC' | 'OKP'; crv: 'P-256' | 'Ed25519' }>> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
};

export function isReceiptSigningAlgorithm(alg: unknown): alg is ReceiptSigningAlgorithm {
  return alg === 'ES256' || alg === 'EdDSA';
}

/** The algorithm a JWK's key type and curve imply, or undefined for any other key. */
export function receiptAlgorithmOfJwk(jwk: { kty?: unknown; crv?: unknown }): ReceiptSigningAlgorithm | undefined {
  return RECEIPT_SIGNING_ALGORITHMS.find(
    (alg) => CURVE_OF_ALGORITHM[alg].kty === jwk.kty && CURVE_OF_ALGORITHM[alg].crv === jwk.crv,
  );
}

/** Only the public members of an ES256 / EdDSA JWK (never `d`, never key_ops or other metadata). */
export function publicKeyMembers(jwk: JWK): Pick<ReceiptPublicJwk, 'kty' | 'crv' | 'x' | 'y'> {
  const members = { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as Pick<ReceiptPublicJwk, 'kty' | 'crv' | 'x' | 'y'>;
  if (jwk.kty === 'EC') members.y = jwk.y;
  return members;
}

export async function generateReceiptSigningKey(alg: ReceiptSigningAlgorithm): Promise<ReceiptSigningKey> {
  if (!isReceiptSigningAlgorithm(alg)) {
    throw new ReceiptKeyError('unsupported_alg', `Receipts are signed with ES256 or EdDSA, not ${String(alg)}`);
  }
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return receiptSigningKeyFromJwk(await exportJWK(privateKey));
}

/** Loads a stored private JWK (EC P-256 or OKP Ed25519), checking that its halves belong together. */
export async function receiptSigningKeyFromJwk(privateJwk: JWK): Promise<ReceiptSigningKey> {
  if (typeof privateJwk !== 'object' || privateJwk === null) {
    throw new ReceiptKeyError('invalid_key', 'The receipt signing key must be a JWK object');
  }
  const alg = receiptAlgorithmOfJwk(privateJwk);
  if (!alg) {
    throw new ReceiptKeyError(
      'unsupported_alg',
      'The receipt signing key must be an EC P-256 (ES256) or OKP Ed25519 (EdDSA) key, ' +
        `not kty ${String(privateJwk.kty)} crv ${String(privateJwk.crv)}`,
    );
  }
  if (privateJwk.alg !== undefined && privateJwk.alg !== alg) {
    throw new ReceiptKeyError(
      'invalid_key',
      `The JWK says alg ${privateJwk.alg}, but a ${String(privateJwk.crv)} key signs with ${alg}`,
    );
  }
  if (privateJwk.use !== undefined && privateJwk.use !== 'sig') {
    throw new ReceiptKeyError('invalid_key', `The JWK is for use "${privateJwk.use}", not "sig"`);
  }
  const complete =
    typeof privateJwk.d === 'string' && typeof privateJwk.x === 'string' && (alg !== 'ES256' || typeof privateJwk.y === 'string');
  if (!complete) {
    throw new ReceiptKeyError('invalid_key', 'The receipt signing key must be a complete private JWK (x, y for EC, and d)');
  }
  const publicMembers = publicKeyMembers(privateJwk);
  const kid = await calculateJwkThumbprint(publicMembers, 'sha256');
  if (privateJwk.kid !== undefined && privateJwk.kid !== kid) {
    throw new ReceiptKeyError('invalid_key', `The JWK's kid ${privateJwk.kid} is not its RFC 7638 thumbprint ${kid}`);
  }

  let privateKey: CryptoKey;
  let publicKey: CryptoKey;
  try {
    privateKey = (await importJWK({ ...publicMembers, d: privateJwk.d }, alg)) as CryptoKey;
    publicKey = (await importJWK(publicMembers, alg)) as CryptoKey;
  } catch (error) {
    throw new ReceiptKeyError('invalid_key', `The receipt signing key cannot be imported: ${(error as Error).message}`);
  }
  await assertHalvesMatch(privateKey, publicKey, alg);

  const publicJwk: ReceiptPublicJwk = { ...publicMembers, kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk, privateJwk: { ...publicMembers, d: privateJwk.d, kid, alg, use: 'sig' } };
}

/** A private key whose `d` does not belong to its `x`/`y` would sign receipts nobody can verify. */
async function assertHalvesMatch(privateKey: CryptoKey, publicKey: CryptoKey, alg: ReceiptSigningAlgorithm): Promise<void> {
  const probe = await new FlattenedSign(new TextEncoder().encode('receipt-key-check'))
    .setProtectedHeader({ alg })
    .sign(privateKey);
  try {
    await flattenedVerify(probe, publicKey, { algorithms: [alg] });
  } catch {
    throw new ReceiptKeyError('invalid_key', 'The private part of the receipt signing key does not match its public part');
  }
}

/**
 * Signs a receipt: detached JWS over its RFC 8785 bytes. `payload` is the canonical receipt (a
 * key-sorted copy), so later changes to the caller's object cannot drift from what was signed.
 */
export async function signReceipt(
  receipt: Record<string, unknown>,
  key: ReceiptSigningKey,
  options: { signedAt?: Date } = {},
): Promise<SignedReceipt> {
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) {
    throw new TypeError('signReceipt signs a receipt object');
  }
  const canonical = canonicalReceipt(receipt);
  const signedAt = options.signedAt ?? new Date();
  const header: ReceiptProtectedHeader = {
    alg: key.alg,
    kid: key.kid,
    typ: RECEIPT_JWS_TYPE,
    iat: Math.floor(signedAt.getTime() / 1000),
  };
  const jws = await new FlattenedSign(new TextEncoder().encode(canonical)).setProtectedHeader(header).sign(key.privateKey);
  return { payload: JSON.parse(canonical) as Record<string, unknown>, signature: `${jws.protected}..${jws.signature}` };
}
