import fc from 'fast-check';
import { captureRetry, recordRequestFingerprint } from './idempotency';
import { canonicalDigest } from '../flows/canonical-json';

const body = {
  flow_id: 'flw_123',
  subject: { email: 'ada@example.com' },
  decisions: { marketing: { decision: 'granted', default_checked: false, mandatory: false } },
  captured_at: '2025-01-01T00:00:00Z',
  idempotency_key: 'k-1',
};

describe('recordRequestFingerprint', () => {
  it('is lower-case hex sha256 that ignores the idempotency key and key order', () => {
    const fingerprint = recordRequestFingerprint(body);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(recordRequestFingerprint({ ...body, idempotency_key: 'k-2' })).toBe(fingerprint);
    const { idempotency_key: _key, ...withoutKey } = body;
    expect(recordRequestFingerprint(withoutKey)).toBe(fingerprint);
    expect(
      recordRequestFingerprint({
        idempotency_key: 'k-1',
        captured_at: '2025-01-01T00:00:00Z',
        decisions: { marketing: { mandatory: false, default_checked: false, decision: 'granted' } },
        subject: { email: 'ada@example.com' },
        flow_id: 'flw_123',
      }),
    ).toBe(fingerprint);
  });

  it('changes with the body', () => {
    const fingerprint = recordRequestFingerprint(body);
    expect(recordRequestFingerprint({ ...body, captured_at: '2025-01-01T00:00:01Z' })).not.toBe(fingerprint);
    expect(recordRequestFingerprint({ ...body, decisions: { marketing: { decision: 'granted' } } })).not.toBe(fingerprint);
    // Only the top-level key is ignored.
    expect(recordRequestFingerprint({ ...body, subject: { email: 'ada@example.com', idempotency_key: 'x' } })).not.toBe(fingerprint);
  });

  it('refuses values that are not JSON', () => {
    expect(() => recordRequestFingerprint({ ...body, captured_at: new Date() })).toThrow(TypeError);
    expect(() => recordRequestFingerprint(undefined)).toThrow(TypeError);
  });
});

const shuffled = <T>(items: T[], seed: number) =>
  items
    .map((item, index) => ({ item, order: (index * 7919 + seed) % 104729 }))
    .sort((a, b) => a.order - b.order)
    .map(({ item }) => item);

const decisionsArbitrary = fc.dictionary(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/),
  fc.record({ decision: fc.constantFrom('granted', 'declined'), default_checked: fc.boolean(), mandatory: fc.boolean() }),
  { minKeys: 1, maxKeys: 6 },
);

describe('recordRequestFingerprint properties', () => {
  it('is stable under key order and ignores idempotency_key', () => {
    fc.assert(
      fc.property(decisionsArbitrary, fc.string(), fc.string(), fc.nat(), (decisions, keyA, keyB, seed) => {
        const reordered = Object.fromEntries(
          shuffled(Object.entries(decisions), seed).map(([key, value]) => [key, Object.fromEntries(shuffled(Object.entries(value), seed))]),
        );
        expect(recordRequestFingerprint({ ...body, decisions, idempotency_key: keyA })).toBe(
          recordRequestFingerprint({ idempotency_key: keyB, decisions: reordered, flow_id: body.flow_id, subject: body.subject, captured_at: body.captured_at }),
        );
      }),
    );
  });

  it('differs when any decision differs', () => {
    fc.assert(
      fc.property(decisionsArbitrary, fc.nat(), fc.constantFrom('decision', 'default_checked', 'mandatory'), (decisions, pick, field) => {
        const keys = Object.keys(decisions);
        const key = keys[pick % keys.length];
        const entry = decisions[key];
        const changed = {
          ...entry,
          [field]: field === 'decision' ? (entry.decision === 'granted' ? 'declined' : 'granted') : !entry[field as 'mandatory'],
        };
        expect(recordRequestFingerprint({ ...body, decisions: { ...decisions, [key]: changed } })).not.toBe(
          recordRequestFingerprint({ ...body, decisions }),
        );
      }),
    );
  });
});

describe('captureRetry', () => {
  const capture = { flow_id: 'flw_dev_0123456789abcdef', channel: 'form_capture', decisions: { newsletter: { decision: 'granted' } }, subject: { email: 'ada@example.com' } };
  const SECRET = 'a server secret of the country';
  const retryOf = (scope: string, key: string, body: unknown, secret = SECRET) => captureRetry(scope, key, body, secret);

  it('names the key within its scope and the body apart, in key order or not, and keeps the secret apart from both', () => {
    const retry = retryOf('pk:abc', 'checkout-1', capture);
    expect(retry).toEqual({ key_digest: expect.stringMatching(/^[0-9a-f]{64}$/), request_digest: expect.stringMatching(/^[0-9a-f]{64}$/), secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(retryOf('pk:abc', 'checkout-1', { subject: capture.subject, decisions: capture.decisions, channel: capture.channel, flow_id: capture.flow_id })).toEqual(retry);
    expect(new Set([retry.key_digest, retry.secret, retry.request_digest]).size).toBe(3);
    // Another scope (credential) or key is another key; another body under the same key is the same key.
    expect(retryOf('pk:abd', 'checkout-1', capture).key_digest).not.toBe(retry.key_digest);
    expect(retryOf('pk:abc', 'checkout-2', capture).key_digest).not.toBe(retry.key_digest);
    const other = retryOf('pk:abc', 'checkout-1', { ...capture, channel: 'embedded_field' });
    expect([other.key_digest, other.secret, other.request_digest === retry.request_digest]).toEqual([retry.key_digest, retry.secret, false]);
    // No ambiguity where the scope ends and the key begins.
    expect(retryOf('pk:a', 'bc', capture).key_digest).not.toBe(retryOf('pk:ab', 'c', capture).key_digest);
  });

  it('keys both digests with the server secret: without it, trying candidate bodies (addresses) finds nothing', () => {
    const retry = retryOf('pk:abc', 'checkout-1', capture);
    // What a guess without the secret computes (the digests of before) matches neither.
    const unkeyed = [canonicalDigest(capture), canonicalDigest(['dcr capture retry request v2', 'pk:abc', 'checkout-1', capture]), canonicalDigest(['dcr capture retry key v2', 'pk:abc', 'checkout-1'])];
    for (const guess of unkeyed) expect([retry.request_digest, retry.key_digest]).not.toContain(guess);
    // Another secret, other digests; the same secret, the same (every replica and country answers a retry alike).
    const elsewhere = retryOf('pk:abc', 'checkout-1', capture, 'another secret');
    expect([elsewhere.request_digest === retry.request_digest, elsewhere.key_digest === retry.key_digest]).toEqual([false, false]);
    expect(retryOf('pk:abc', 'checkout-1', capture)).toEqual(retry);
  });
});
