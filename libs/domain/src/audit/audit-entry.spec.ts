import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  AuditEntry,
  auditEntryHash,
  auditLeafData,
  auditPayloadDigest,
  ChainCheck,
  checkAuditChain,
  GENESIS_PREV_HASH,
  sealAuditEntry,
  UnhashedAuditEntry,
} from './audit-entry';

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
const ids = (entries: readonly AuditEntry[]) => entries.map((entry) => entry.entry_id);

type Fields = Omit<UnhashedAuditEntry, 'prev_hash' | 'seq'>;

function sealChain(fields: readonly Fields[]): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (const item of fields) entries.push(sealAuditEntry(item, entries[entries.length - 1] ?? null));
  return entries;
}

function copy(entries: readonly AuditEntry[]): AuditEntry[] {
  return entries.map((entry) => ({ ...entry, actor: { ...entry.actor } }));
}

describe('auditEntryHash', () => {
  const entry: UnhashedAuditEntry = {
    seq: 3,
    entry_id: 'aud_01HZX3',
    event_type: 'decision.recorded',
    actor: { type: 'officer', id: 'agent-é/7' },
    occurred_at: '2025-03-01T12:00:00.000Z',
    payload_digest: 'a'.repeat(64),
    prev_hash: '0123456789abcdef'.repeat(4),
  };
  // Written by hand from RFC 8785: keys sorted at every depth, no whitespace, UTF-8.
  const canonical =
    '{"actor":{"id":"agent-é/7","type":"officer"},"entry_id":"aud_01HZX3","event_type":"decision.recorded",' +
    '"occurred_at":"2025-03-01T12:00:00.000Z","payload_digest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",' +
    '"prev_hash":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","seq":3}';

  it('is the SHA-256 of the hand-written canonical JSON of the seven fields', () => {
    expect(auditEntryHash(entry)).toBe(sha256(canonical));
    expect(auditEntryHash(entry)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores the key order of the object and its own hash field', () => {
    const shuffled = {
      prev_hash: entry.prev_hash,
      payload_digest: entry.payload_digest,
      actor: { id: 'agent-é/7', type: 'officer' },
      occurred_at: entry.occurred_at,
      event_type: entry.event_type,
      entry_id: entry.entry_id,
      seq: 3,
    };
    expect(auditEntryHash(shuffled)).toBe(sha256(canonical));
    expect(auditEntryHash({ ...entry, hash: 'f'.repeat(64) } as AuditEntry)).toBe(sha256(canonical));
  });

  it('leaves out an actor without an id (no "id" key at all)', () => {
    const system = { ...entry, actor: { type: 'system' } };
    const expected =
      '{"actor":{"type":"system"},"entry_id":"aud_01HZX3","event_type":"decision.recorded",' +
      '"occurred_at":"2025-03-01T12:00:00.000Z","payload_digest":"' + 'a'.repeat(64) + '",' +
      '"prev_hash":"' + '0123456789abcdef'.repeat(4) + '","seq":3}';
    expect(auditEntryHash(system)).toBe(sha256(expected));
    expect(auditEntryHash({ ...entry, actor: { type: 'system', id: undefined } })).toBe(sha256(expected));
  });

  it('payload digests are SHA-256 of the canonical payload', () => {
    expect(auditPayloadDigest({ b: [1, 'x'], a: { d: null, c: true } })).toBe(sha256('{"a":{"c":true,"d":null},"b":[1,"x"]}'));
  });

  it('leaf data is the 32 bytes of a lower-case hex hash, nothing else', () => {
    const hash = sha256(canonical);
    expect(auditLeafData(hash)).toEqual(Buffer.from(hash, 'hex'));
    expect(auditLeafData(hash)).toHaveLength(32);
    expect(() => auditLeafData(hash.toUpperCase())).toThrow(RangeError);
    expect(() => auditLeafData(hash.slice(2))).toThrow(RangeError);
  });
});

describe('sealAuditEntry', () => {
  const fields = (n: number): Fields => ({
    entry_id: `aud_${n}`,
    event_type: 'application.submitted',
    actor: { type: 'applicant', id: `user-${n}` },
    occurred_at: new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString(),
    payload_digest: auditPayloadDigest({ n }),
  });

  it('starts a chain at seq 1 with 64 zeros as prev_hash', () => {
    const first = sealAuditEntry(fields(1), null);
    expect(GENESIS_PREV_HASH).toBe('0'.repeat(64));
    expect(first.seq).toBe(1);
    expect(first.prev_hash).toBe('0'.repeat(64));
    const { hash, ...unhashed } = first;
    expect(hash).toBe(auditEntryHash(unhashed));
  });

  it('links each entry to its predecessor: seq + 1 and prev_hash = its hash', () => {
    const chain = sealChain([fields(1), fields(2), fields(3)]);
    expect(chain.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(chain[1].prev_hash).toBe(chain[0].hash);
    expect(chain[2].prev_hash).toBe(chain[1].hash);
    chain.forEach(({ hash, ...unhashed }) => expect(hash).toBe(auditEntryHash(unhashed)));
    expect(new Set(chain.map((entry) => entry.hash)).size).toBe(3);
  });

  it('keeps only type and id of the actor and drops an undefined id', () => {
    const extra = { type: 'officer', id: 'o-1', role: 'admin' } as Fields['actor'];
    expect(sealAuditEntry({ ...fields(1), actor: extra }, null).actor).toEqual({ type: 'officer', id: 'o-1' });
    const sealed = sealAuditEntry({ ...fields(1), actor: { type: 'system', id: undefined } }, null);
    expect(Object.keys(sealed.actor)).toEqual(['type']);
  });
});

// ---- checkAuditChain: fixed cases -----------------------------------------------------------------

describe('checkAuditChain', () => {
  const chain = sealChain(
    Array.from({ length: 5 }, (_, i) => ({
      entry_id: `aud_${i + 1}`,
      event_type: 'document.uploaded',
      actor: { type: 'officer', id: 'o-1' },
      occurred_at: `2025-01-0${i + 1}T00:00:00.000Z`,
      payload_digest: auditPayloadDigest({ i }),
    })),
  );

  it('accepts an intact chain and an empty one', () => {
    expect(checkAuditChain(chain)).toEqual({ valid: true, findings: [], first_bad_seq: null, untrusted_entry_ids: [] });
    expect(checkAuditChain([])).toEqual({ valid: true, findings: [], first_bad_seq: null, untrusted_entry_ids: [] });
  });

  it('an edited entry is a hash mismatch at its seq; it and every later entry are untrusted', () => {
    const tampered = copy(chain);
    tampered[2].event_type = 'decision.recorded';
    const check = checkAuditChain(tampered);
    expect(check.findings).toEqual([
      { kind: 'hash_mismatch', seq: 3, entry_id: 'aud_3', expected: auditEntryHash(tampered[2]), found: chain[2].hash },
    ]);
    expect(check.first_bad_seq).toBe(3);
    expect(check.untrusted_entry_ids).toEqual(['aud_3', 'aud_4', 'aud_5']);
  });

  it('an edited entry whose hash was recomputed: the link of the next one breaks, and the edited entry is the first bad one', () => {
    const tampered = copy(chain);
    tampered[2].payload_digest = auditPayloadDigest({ forged: true });
    tampered[2].hash = auditEntryHash(tampered[2]);
    const check = checkAuditChain(tampered);
    expect(check.findings).toEqual([
      { kind: 'broken_link', seq: 4, entry_id: 'aud_4', expected: tampered[2].hash, found: chain[2].hash },
    ]);
    // The finding is about entry 4's link, but entry 3 is what no longer has a successor vouching for it.
    expect(check.first_bad_seq).toBe(3);
    expect(check.untrusted_entry_ids).toEqual(['aud_3', 'aud_4', 'aud_5']);
  });

  it('a replaced successor (prev_hash rewritten and resealed) also makes the predecessor untrusted: the chain alone cannot tell which side changed', () => {
    const tampered = copy(chain);
    tampered[3].prev_hash = 'e'.repeat(64);
    tampered[3].hash = auditEntryHash(tampered[3]);
    const check = checkAuditChain(tampered);
    // Resealing entry 4 changed its hash too, so entry 5 no longer links to it either.
    expect(check.findings.map((finding) => [finding.kind, 'seq' in finding ? finding.seq : null])).toEqual([
      ['broken_link', 4],
      ['broken_link', 5],
    ]);
    expect(check.first_bad_seq).toBe(3);
    expect(check.untrusted_entry_ids).toEqual(['aud_3', 'aud_4', 'aud_5']);
  });

  it('a prev_hash edited without resealing is the entry\'s own fault (hash mismatch and broken link at its seq)', () => {
    const tampered = copy(chain);
    tampered[3].prev_hash = 'e'.repeat(64);
    const check = checkAuditChain(tampered);
    expect(check.findings.map((finding) => [finding.kind, 'seq' in finding ? finding.seq : null])).toEqual([
      ['hash_mismatch', 4],
      ['broken_link', 4],
    ]);
    expect(check.first_bad_seq).toBe(4);
    expect(check.untrusted_entry_ids).toEqual(['aud_4', 'aud_5']);
  });

  it('a removed entry is a gap; the first bad entry is the one right after it', () => {
    const check = checkAuditChain([chain[0], chain[1], chain[3], chain[4]]);
    expect(check.findings).toEqual([
      { kind: 'missing_entries', after_seq: 2, next_seq: 4 },
      { kind: 'broken_link', seq: 4, entry_id: 'aud_4', expected: chain[1].hash, found: chain[2].hash },
    ]);
    expect(check.first_bad_seq).toBe(4);
    expect(check.untrusted_entry_ids).toEqual(['aud_4', 'aud_5']);
  });

  it('a removed first entry is a bad first seq', () => {
    const check = checkAuditChain(chain.slice(1));
    expect(check.findings).toEqual([{ kind: 'bad_first_seq', seq: 2, entry_id: 'aud_2' }]);
    expect(check.first_bad_seq).toBe(2);
    expect(check.untrusted_entry_ids).toEqual(['aud_2', 'aud_3', 'aud_4', 'aud_5']);
  });

  it('a first entry that does not start from the genesis hash is a broken link at seq 1', () => {
    const forged = sealAuditEntry({ ...chain[0] }, { seq: 0, hash: 'b'.repeat(64) });
    expect(forged.seq).toBe(1);
    const check = checkAuditChain([forged]);
    expect(check.findings).toEqual([{ kind: 'broken_link', seq: 1, entry_id: 'aud_1', expected: GENESIS_PREV_HASH, found: 'b'.repeat(64) }]);
    expect(check.first_bad_seq).toBe(1);
  });

  it('two swapped entries: a gap where the later one comes early, seq going backwards where the earlier one follows', () => {
    const check = checkAuditChain([chain[0], chain[2], chain[1], chain[3], chain[4]]);
    expect(check.findings.map((finding) => finding.kind)).toEqual(['missing_entries', 'broken_link', 'out_of_order', 'broken_link', 'missing_entries', 'broken_link']);
    expect(check.findings).toContainEqual({ kind: 'out_of_order', seq: 2, entry_id: 'aud_2' });
    expect(check.first_bad_seq).toBe(3);
    expect(check.untrusted_entry_ids).toEqual(['aud_3', 'aud_2', 'aud_4', 'aud_5']);
  });

  it('a replayed (duplicated) entry is seq going backwards at the copy', () => {
    const check = checkAuditChain([chain[0], chain[1], chain[1], chain[2], chain[3], chain[4]]);
    expect(check.findings).toEqual([
      { kind: 'out_of_order', seq: 2, entry_id: 'aud_2' },
      { kind: 'broken_link', seq: 2, entry_id: 'aud_2', expected: chain[1].hash, found: chain[0].hash },
    ]);
    expect(check.first_bad_seq).toBe(2);
    expect(check.untrusted_entry_ids).toEqual(['aud_2', 'aud_3', 'aud_4', 'aud_5']);
  });

  it('cannot see a truncated tail (that needs the anchor)', () => {
    expect(checkAuditChain(chain.slice(0, 3)).valid).toBe(true);
  });
});

// ---- checkAuditChain: properties over random chains ------------------------------------------------

const hexArb = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex'));
const textArb = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
const actorArb = fc.oneof(
  fc.record({ type: fc.constantFrom('system', 'applicant', 'officer') }),
  fc.record({ type: fc.constantFrom('applicant', 'officer'), id: textArb }),
);
const fieldsArb = fc.record({
  event_type: fc.oneof(fc.constantFrom('application.submitted', 'decision.recorded', 'payment.received'), textArb),
  actor: actorArb,
  occurred_at: fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString()),
  payload_digest: hexArb,
});
const chainArb = (minLength = 1) =>
  fc.array(fieldsArb, { minLength, maxLength: 40 }).map((list) => sealChain(list.map((fields, i) => ({ ...fields, entry_id: `aud_${i + 1}` }))));

const FIELDS = ['seq', 'entry_id', 'event_type', 'actor', 'occurred_at', 'payload_digest', 'prev_hash', 'hash'] as const;
type Field = (typeof FIELDS)[number];

/** Changes one field of an entry to a different value. */
function change(entry: AuditEntry, field: Field, delta: number): void {
  const flipHex = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);
  switch (field) {
    case 'seq':
      entry.seq += delta;
      break;
    case 'entry_id':
      entry.entry_id += '~';
      break;
    case 'event_type':
      entry.event_type += '.edited';
      break;
    case 'actor':
      entry.actor = entry.actor.id === undefined ? { type: entry.actor.type, id: 'intruder' } : { type: entry.actor.type };
      break;
    case 'occurred_at':
      entry.occurred_at = new Date(Date.parse(entry.occurred_at) + 1000).toISOString();
      break;
    case 'payload_digest':
    case 'prev_hash':
    case 'hash':
      entry[field] = flipHex(entry[field]);
      break;
  }
}

function expectUntrustedFrom(check: ChainCheck, entries: readonly AuditEntry[], index: number): void {
  expect(check.valid).toBe(false);
  expect(check.first_bad_seq).toBe(entries[index].seq);
  expect(check.untrusted_entry_ids).toEqual(ids(entries.slice(index)));
}

describe('checkAuditChain properties', () => {
  it('an intact chain of 1..40 entries is valid', () => {
    fc.assert(
      fc.property(chainArb(), (chain) => {
        expect(checkAuditChain(chain)).toEqual({ valid: true, findings: [], first_bad_seq: null, untrusted_entry_ids: [] });
      }),
    );
  });

  it('changing any one field of any one entry without resealing is a hash mismatch at exactly that entry; it and every later entry are untrusted', () => {
    fc.assert(
      fc.property(
        chainArb(),
        fc.nat(),
        fc.constantFrom(...FIELDS),
        fc.integer({ min: -50, max: 50 }).filter((delta) => delta !== 0),
        (chain, pick, field, delta) => {
          const index = pick % chain.length;
          const tampered = copy(chain);
          change(tampered[index], field, delta);
          const check = checkAuditChain(tampered);
          const mismatches = check.findings.filter((finding) => finding.kind === 'hash_mismatch');
          expect(mismatches).toEqual([
            { kind: 'hash_mismatch', seq: tampered[index].seq, entry_id: tampered[index].entry_id, expected: auditEntryHash(tampered[index]), found: tampered[index].hash },
          ]);
          expectUntrustedFrom(check, tampered, index);
        },
      ),
    );
  });

  it('editing an entry and resealing it breaks the next link; the edited entry is the first bad one', () => {
    fc.assert(
      fc.property(
        chainArb(2),
        fc.nat(),
        fc.constantFrom<Field>('event_type', 'actor', 'occurred_at', 'payload_digest', 'entry_id'),
        (chain, pick, field) => {
          const index = pick % (chain.length - 1);
          const tampered = copy(chain);
          change(tampered[index], field, 1);
          tampered[index].hash = auditEntryHash(tampered[index]);
          const check = checkAuditChain(tampered);
          expect(check.findings).toEqual([
            { kind: 'broken_link', seq: index + 2, entry_id: chain[index + 1].entry_id, expected: tampered[index].hash, found: chain[index].hash },
          ]);
          expectUntrustedFrom(check, tampered, index);
        },
      ),
    );
  });

  it('an edited and resealed last entry goes unseen by the chain alone (only its inclusion proof catches it)', () => {
    fc.assert(
      fc.property(chainArb(), (chain) => {
        const tampered = copy(chain);
        const last = tampered[tampered.length - 1];
        change(last, 'payload_digest', 1);
        last.hash = auditEntryHash(last);
        expect(checkAuditChain(tampered).valid).toBe(true);
      }),
    );
  });

  it('removing any one entry but the last is a gap (or a bad first seq); the first bad entry is the one right after it', () => {
    fc.assert(
      fc.property(chainArb(2), fc.nat(), (chain, pick) => {
        const removed = pick % (chain.length - 1);
        const shortened = [...chain.slice(0, removed), ...chain.slice(removed + 1)];
        const check = checkAuditChain(shortened);
        const after = chain[removed + 1];
        if (removed === 0) {
          expect(check.findings).toEqual([{ kind: 'bad_first_seq', seq: 2, entry_id: after.entry_id }]);
        } else {
          expect(check.findings).toEqual([
            { kind: 'missing_entries', after_seq: removed, next_seq: removed + 2 },
            { kind: 'broken_link', seq: removed + 2, entry_id: after.entry_id, expected: chain[removed - 1].hash, found: chain[removed].hash },
          ]);
        }
        expect(check.first_bad_seq).toBe(after.seq);
        expect(check.untrusted_entry_ids).toEqual(ids(chain.slice(removed + 1)));
      }),
    );
  });

  it('swapping two entries is detected: seq goes backwards, and the first bad entry is the one moved forward', () => {
    fc.assert(
      fc.property(chainArb(2), fc.nat(), fc.nat(), (chain, p, q) => {
        const a = p % (chain.length - 1);
        const b = a + 1 + (q % (chain.length - 1 - a));
        const swapped = [...chain];
        [swapped[a], swapped[b]] = [swapped[b], swapped[a]];
        const check = checkAuditChain(swapped);
        expect(check.findings).toContainEqual({ kind: 'out_of_order', seq: chain[a].seq, entry_id: chain[a].entry_id });
        expect(check.findings).toContainEqual(a === 0 ? { kind: 'bad_first_seq', seq: chain[b].seq, entry_id: chain[b].entry_id } : { kind: 'missing_entries', after_seq: a, next_seq: b + 1 });
        expectUntrustedFrom(check, swapped, a);
      }),
    );
  });

  it('any reordering is detected, from the first position that differs', () => {
    fc.assert(
      fc.property(
        chainArb(2).chain((chain) => fc.tuple(fc.constant(chain), fc.shuffledSubarray(chain, { minLength: chain.length, maxLength: chain.length }))),
        ([chain, shuffled]) => {
          const first = shuffled.findIndex((entry, i) => entry !== chain[i]);
          fc.pre(first >= 0);
          expectUntrustedFrom(checkAuditChain(shuffled), shuffled, first);
        },
      ),
    );
  });
});
