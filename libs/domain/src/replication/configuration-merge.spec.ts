import fc from 'fast-check';
import { mergeCredentials, mergeOrigins, OriginState, RevocableCredential } from './configuration-merge';

const time = fc.integer({ min: 0, max: 20 }).map((minute) => new Date(Date.UTC(2026, 10, 28, 10, minute)));
const credentials = fc.uniqueArray(fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd', 'e'), revokedAt: fc.option(time, { nil: null }) }), { selector: (c) => c.id });
const origins = fc.uniqueArray(fc.record({ origin: fc.constantFrom('https://a.example', 'https://b.example', 'https://c.example'), createdAt: time, removedAt: fc.option(time, { nil: null }) }), {
  selector: (o) => o.origin,
});

/** This side's credentials after taking the peer's merge. */
function applyCredentials(here: RevocableCredential[], there: RevocableCredential[]): RevocableCredential[] {
  const merge = mergeCredentials(here, there);
  const revoked = new Map(merge.revoked.map((r) => [r.id, r.revokedAt]));
  return [...here.map((c) => ({ id: c.id, revokedAt: revoked.get(c.id) ?? c.revokedAt })), ...there.filter((c) => merge.added.includes(c.id))].sort((x, y) => x.id.localeCompare(y.id));
}

function applyOrigins(here: OriginState[], there: OriginState[]): OriginState[] {
  const { take } = mergeOrigins(here, there);
  const taken = new Map(take.map((o) => [o.origin, o]));
  return [...here.filter((o) => !taken.has(o.origin)), ...take].sort((x, y) => x.origin.localeCompare(y.origin));
}

describe('merging two countries\' copies of an application', () => {
  it('loses no credential, keeps every revocation at its earliest time, and converges both ways', () => {
    fc.assert(
      fc.property(credentials, credentials, (us, de) => {
        const atUs = applyCredentials(us, de);
        const atDe = applyCredentials(de, us);
        expect(atUs).toEqual(atDe);
        for (const id of new Set([...us, ...de].map((c) => c.id))) {
          const revocations = [...us, ...de].filter((c) => c.id === id && c.revokedAt).map((c) => c.revokedAt!.getTime());
          const merged = atUs.find((c) => c.id === id)!;
          expect(merged.revokedAt?.getTime() ?? null).toBe(revocations.length > 0 ? Math.min(...revocations) : null);
        }
        // After converging, neither side holds anything the other lacks.
        expect(mergeCredentials(atUs, atDe).peerBehind).toBe(false);
      }),
    );
  });

  it('keeps each origin\'s later change (a removal at equal times), and converges both ways', () => {
    fc.assert(
      fc.property(origins, origins, (us, de) => {
        const atUs = applyOrigins(us, de);
        expect(atUs).toEqual(applyOrigins(de, us));
        expect(mergeOrigins(atUs, applyOrigins(de, us)).peerBehind).toBe(false);
      }),
    );
    const added = { origin: 'https://a.example', createdAt: new Date('2026-11-28T10:00:00Z'), removedAt: null };
    const removed = { ...added, removedAt: new Date('2026-11-28T10:05:00Z') };
    expect(mergeOrigins([added], [removed])).toEqual({ take: [removed], peerBehind: false });
    expect(mergeOrigins([removed], [added])).toEqual({ take: [], peerBehind: true });
    const readded = { ...added, createdAt: new Date('2026-11-28T10:09:00Z') };
    expect(mergeOrigins([removed], [readded])).toEqual({ take: [readded], peerBehind: false });
  });

  it('says the peer is behind when this side has a credential or a revocation it lacks', () => {
    expect(mergeCredentials([{ id: 'a', revokedAt: null }], []).peerBehind).toBe(true);
    expect(mergeCredentials([{ id: 'a', revokedAt: new Date(1) }], [{ id: 'a', revokedAt: null }])).toEqual({ added: [], revoked: [], peerBehind: true });
    expect(mergeCredentials([{ id: 'a', revokedAt: null }], [{ id: 'a', revokedAt: new Date(1) }, { id: 'b', revokedAt: null }])).toEqual({
      added: ['b'],
      revoked: [{ id: 'a', revokedAt: new Date(1) }],
      peerBehind: false,
    });
  });
});
