import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { newWebhookSecret, openWebhookSecret, sealWebhookSecret } from './secrets';

const key = randomBytes(32);

describe('newWebhookSecret', () => {
  it('is whsec_ plus 32 random bytes in base64url, different every time', () => {
    const secrets = Array.from({ length: 50 }, newWebhookSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret.slice(6), 'base64url')).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });
});

describe('sealWebhookSecret / openWebhookSecret', () => {
  it('round-trips any secret, with a fresh IV each time', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), (secret) => {
        const a = sealWebhookSecret(secret, key);
        const b = sealWebhookSecret(secret, key);
        expect(a).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
        expect(a).not.toBe(b);
        expect(openWebhookSecret(a, key)).toBe(secret);
        expect(openWebhookSecret(b, key)).toBe(secret);
      }),
      { numRuns: 50 },
    );
  });

  it('never contains the secret in clear', () => {
    const secret = newWebhookSecret();
    expect(sealWebhookSecret(secret, key)).not.toContain(secret.slice(6, 20));
  });

  it('refuses a wrong key', () => {
    const sealed = sealWebhookSecret(newWebhookSecret(), key);
    expect(() => openWebhookSecret(sealed, randomBytes(32))).toThrow(/wrong key or altered value/);
  });

  it('refuses any single-character change of the sealed value', () => {
    const sealed = sealWebhookSecret(newWebhookSecret(), key);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    fc.assert(
      fc.property(fc.nat({ max: sealed.length - 1 }), fc.constantFrom(...alphabet), (i, c) => {
        fc.pre(sealed[i] !== c);
        const edited = sealed.slice(0, i) + c + sealed.slice(i + 1);
        expect(() => openWebhookSecret(edited, key)).toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('binds the value to its associated data when given', () => {
    const sealed = sealWebhookSecret('whsec_abc', key, 'wh_1');
    expect(openWebhookSecret(sealed, key, 'wh_1')).toBe('whsec_abc');
    expect(() => openWebhookSecret(sealed, key, 'wh_2')).toThrow();
    expect(() => openWebhookSecret(sealed, key)).toThrow();
  });

  it.each(['', 'v1', 'v2.a.b.c', 'v1.a.b', 'v1.a.b.c.d', 'v1..b.c', 'v1.a+b.c.d', 'v1.AAAA.AAAA.AAAA'])(
    'refuses the malformed value %j',
    (sealed) => expect(() => openWebhookSecret(sealed, key)).toThrow(/malformed/),
  );

  it.each([0, 16, 31, 33])('refuses a %i-byte key', (length) => {
    expect(() => sealWebhookSecret('whsec_abc', Buffer.alloc(length))).toThrow(RangeError);
    expect(() => openWebhookSecret('v1.a.b.c', Buffer.alloc(length))).toThrow(RangeError);
  });
});
