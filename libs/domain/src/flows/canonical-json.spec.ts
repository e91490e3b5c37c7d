import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalDigest, canonicalJson } from './canonical-json';

/** A copy of `value` with every object's keys inserted in an order drawn from `random`. */
function reorder(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => reorder(item, random));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    Object.defineProperty(copy, key, {
      value: reorder((value as Record<string, unknown>)[key], random),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

describe('canonicalJson', () => {
  it('sorts keys recursively and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [{ d: true, c: null }, 'x'], 'é': { z: -0, y: 1.5e-7 } })).toBe(
      '{"a":[{"c":null,"d":true},"x"],"b":1,"é":{"y":1.5e-7,"z":0}}',
    );
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson('a"\n')).toBe('"a\\"\\n"');
  });

  it('sorts by UTF-16 code units, as RFC 8785 does', () => {
    expect(canonicalJson({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, '1': 4, a: 5, B: 6 })).toBe(
      '{"\\r":2,"1":4,"B":6,"a":5,"€":1,"😀":3}',
    );
  });

  it('orders the keys of small and large objects as sort() orders them', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.integer(), { maxKeys: 80 }), (record) => {
        const members = Object.keys(record)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${record[key]}`);
        expect(canonicalJson(record)).toBe(`{${members.join(',')}}`);
      }),
    );
  });

  it('leaves out undefined members and refuses what is not JSON', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, { n: -Infinity }]) expect(() => canonicalJson(bad)).toThrow(RangeError);
    for (const bad of [undefined, [undefined], 1n, () => 1, Symbol('s'), new Date(0), new Map(), { d: new Date(0) }]) {
      expect(() => canonicalJson(bad)).toThrow(TypeError);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('never changes when object keys are shuffled', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
        expect(canonicalJson(reorder(value, seeded(seed)))).toBe(canonicalJson(value));
      }),
    );
  });

  it('is valid JSON that re-encodes to itself', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(text).not.toMatch(/^\s|\s$/);
      }),
    );
  });

  it('digests as sha256 of the canonical text', () => {
    expect(canonicalDigest({ b: 2, a: 1 })).toBe(createHash('sha256').update('{"a":1,"b":2}').digest('hex'));
  });
});
