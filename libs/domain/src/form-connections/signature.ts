import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Typeform's webhook signature (https://www.typeform.com/developers/webhooks/secure-your-webhooks/):
 * header `Typeform-Signature: sha256=<base64 of HMAC-SHA256 over the raw body, keyed with the secret>`.
 * The raw body is the exact bytes received; a re-serialised JSON body would not match.
 */
export const TYPEFORM_SIGNATURE_HEADER = 'Typeform-Signature';

/** The limit "Previous secret after a rotation: honored for one day". */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

export function typeformSignature(secret: string, rawBody: Buffer | string): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new RangeError('the signing secret must be a non-empty string');
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  if (typeof rawBody === 'string') mac.update(rawBody, 'utf8');
  else mac.update(rawBody);
  return `sha256=${mac.digest('base64')}`;
}

export interface ConnectionSecrets {
  current: string;
  /** The secret before the last rotation and when it was replaced; honoured for PREVIOUS_SECRET_GRACE_MS after. */
  previous?: { secret: string; rotatedAt: Date } | null;
}

/** Which secret signed a delivery, or null when none did (or the previous one's day has passed). */
export type SignatureVerdict = 'current' | 'previous' | null;

/** Whether the previous secret is still honoured at `now`. */
export function previousSecretHonoured(rotatedAt: Date, now: Date): boolean {
  return now.getTime() - rotatedAt.getTime() < PREVIOUS_SECRET_GRACE_MS;
}

/** Constant-time comparison of two signature strings (their length, fixed for a scheme, is no secret). */
function sameSignature(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(received, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Checks a delivery's `Typeform-Signature` against the connection's current secret and, for one day
 * after a rotation, the previous one. Both comparisons are made whatever the first one gave, so the
 * time taken does not tell which secret matched.
 */
export function verifyTypeformSignature(header: unknown, rawBody: Buffer | string, secrets: ConnectionSecrets, now: Date): SignatureVerdict {
  if (typeof header !== 'string' || header.length === 0 || header.length > 200) return null;
  const received = header.trim();
  const current = sameSignature(typeformSignature(secrets.current, rawBody), received);
  const previous =
    secrets.previous !== undefined && secrets.previous !== null && previousSecretHonoured(secrets.previous.rotatedAt, now)
      ? sameSignature(typeformSignature(secrets.previous.secret, rawBody), received)
      : false;
  if (current) return 'current';
  return previous ? 'previous' : null;
}

/** `sha256=` and the base64 of a 32-byte HMAC: the form of every Typeform-Signature. */
const SIGNATURE_FORM = /^sha256=[A-Za-z0-9+/]{43}=$/;

/**
 * Whether a Typeform-Signature header has Typeform's form at all: one that has not can match no
 * secret, so it is refused where it arrives (typeformSignatureRefusal says why), before its body is
 * sent on or any connection is read.
 */
export function isTypeformSignatureForm(header: unknown): boolean {
  return typeof header === 'string' && header.length <= 200 && SIGNATURE_FORM.test(header.trim());
}

/**
 * Why a delivery's signature was refused, in words that tell its sender what to do: a missing header,
 * one not in Typeform's form (a hex digest, no `sha256=`), or a well-formed one made with another key
 * or over other bytes. Says nothing about which secret a connection has.
 */
export function typeformSignatureRefusal(header: unknown): string {
  const form = 'sha256=<base64 of the HMAC-SHA256 of the raw body, keyed with the connection\'s secret>';
  if (header === undefined || header === '') {
    return "The delivery carries no Typeform-Signature header: set the connection's secret on the Typeform webhook";
  }
  const received = typeof header === 'string' ? header.trim() : '';
  if (SIGNATURE_FORM.test(received)) {
    return "The Typeform-Signature does not match this connection's secret: sign the exact bytes sent (not a re-serialised body) with HMAC-SHA256, keyed with the whole secret (fcsec_…) the connection answered when created or last rotated";
  }
  if (/^sha256=[0-9a-f]{64}$/i.test(received)) return `The Typeform-Signature is a hex digest; Typeform's is base64: ${form}`;
  if (!received.startsWith('sha256=')) return `The Typeform-Signature must start with sha256=: ${form}`;
  return `The Typeform-Signature is not in Typeform's form: ${form}`;
}
