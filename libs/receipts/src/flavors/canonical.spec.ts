import fc from 'fast-check';
import { canonicalReceipt, canonicalReceiptBytes } from './canonical';
import fixture from './__fixtures__/consent-receipt.json';

/** The same JSON value with every object's keys in a different order. */
function reorderKeys(value: unknown, pick: (keys: string[]) => string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => reorderKeys(item, pick));
  if (typeof value !== 'object' || value === null) return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(pick(Object.keys(object)).map((key) => [key, reorderKeys(object[key], pick)]));
}

describe('canonicalReceipt', () => {
  it('writes RFC 8785 text: keys sorted at every depth, no whitespace', () => {
    const text = canonicalReceipt({ record: { record_id: 'rec_1', conforms_to: 'ISO/IEC TS 27560:2023' }, $schema: 'https://s/x.json', event: [{ b: 1, a: 0.5 }] });
    expect(text).toBe('{"$schema":"https://s/x.json","event":[{"a":0.5,"b":1}],"record":{"conforms_to":"ISO/IEC TS 27560:2023","record_id":"rec_1"}}');
  });

  it('gives the same text for the fixture whatever the key order', () => {
    const reversed = reorderKeys(fixture, (keys) => [...keys].reverse()) as Record<string, unknown>;
    expect(JSON.stringify(reversed)).not.toBe(JSON.stringify(fixture));
    expect(canonicalReceipt(reversed)).toBe(canonicalReceipt(fixture));
  });

  it('is stable under any key reordering and parses back to the same value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.infiniteStream(fc.nat()), (receipt, seeds) => {
        const iterator = seeds[Symbol.iterator]();
        const shuffle = (keys: string[]) =>
          keys
            .map((key) => ({ key, rank: iterator.next().value as number }))
            .sort((a, b) => a.rank - b.rank)
            .map(({ key }) => key);
        const shuffled = reorderKeys(receipt, shuffle) as Record<string, unknown>;
        const text = canonicalReceipt(receipt);
        expect(canonicalReceipt(shuffled)).toBe(text);
        expect(canonicalReceipt(JSON.parse(text) as Record<string, unknown>)).toBe(text);
      }),
    );
  });

  it('gives the UTF-8 bytes of that text', () => {
    const receipt = { party_name: 'Die Bundesbeauftragte für den Datenschutz' };
    expect(Buffer.from(canonicalReceiptBytes(receipt)).toString('utf8')).toBe(canonicalReceipt(receipt));
    expect(canonicalReceiptBytes(receipt).length).toBe(Buffer.byteLength(canonicalReceipt(receipt), 'utf8'));
  });

  it('refuses values that are not JSON', () => {
    expect(() => canonicalReceipt({ at: new Date(0) })).toThrow(TypeError);
    expect(() => canonicalReceipt({ seen: new Map() })).toThrow(TypeError);
    expect(() => canonicalReceipt({ n: Number.NaN })).toThrow(RangeError);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => canonicalReceipt(cyclic)).toThrow(TypeError);
  });

  it('accepts plain objects made in another realm (structuredClone under Jest)', () => {
    const clone = structuredClone(fixture) as Record<string, unknown>;
    expect(Object.getPrototypeOf(clone)).not.toBe(Object.prototype);
    expect(canonicalReceipt(clone)).toBe(canonicalReceipt(fixture));
  });
});
