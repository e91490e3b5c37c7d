import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/** Codes live ten minutes, allow five attempts, and at most five are mailed per hour and purpose. */
export const ONE_TIME_CODE_TTL_MS = 10 * 60 * 1000;
export const ONE_TIME_CODE_MAX_ATTEMPTS = 5;
export const ONE_TIME_CODES_PER_HOUR = 5;

export function newOneTimeCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/**
 * Codes are short, so the hash is keyed and bound to what the code is for (the parts). Spaces in a
 * typed code are not part of it ("123 456", as a person groups the digits, is 123456).
 */
export function oneTimeCodeHash(key: string, code: string, ...parts: string[]): string {
  return createHmac('sha256', key).update([...parts, code.replace(/\s+/g, '')].join('\0')).digest('hex');
}

export function oneTimeCodeMatches(key: string, stored: string, code: string, ...parts: string[]): boolean {
  return timingSafeEqual(Buffer.from(oneTimeCodeHash(key, code, ...parts), 'hex'), Buffer.from(stored, 'hex'));
}
