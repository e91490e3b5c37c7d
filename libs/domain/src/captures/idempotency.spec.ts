import fc from 'fast-check';
import { recordRequestFingerprint } from './idempotency';

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
