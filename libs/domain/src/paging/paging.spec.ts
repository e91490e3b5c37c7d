import fc from 'fast-check';
import { DomainError } from '../errors';
import { decodeCursor, encodeCursor, Page, parseLimit } from './paging';

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('parseLimit', () => {
  it.each([undefined, null, ''])('defaults %j to 50', (raw) => expect(parseLimit(raw)).toBe(50));

  it('accepts every integer from 1 to 200, as a number or as digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), (n) => {
        expect(parseLimit(n)).toBe(n);
        expect(parseLimit(String(n))).toBe(n);
      }),
    );
    expect(parseLimit('007')).toBe(7);
  });

  it.each([0, -1, 201, 1000, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '0', '201', '1.5', '1e2', ' 5', '5 ', '+5', '-5', '0x10', 'ten', ['5'], {}, true, '99999999999999999999'])(
    'refuses %j with invalid_request naming limit',
    (raw) => {
      const error = refusal(() => parseLimit(raw));
      expect(error.code).toBe('invalid_request');
      expect(error.details).toEqual([{ field: 'limit', reason: 'limit must be an integer from 1 to 200' }]);
    },
  );

  it('never answers outside 1..200', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        let n: number | undefined;
        try {
          n = parseLimit(raw);
        } catch (error) {
          expect((error as DomainError).code).toBe('invalid_request');
          return;
        }
        expect(Number.isInteger(n) && n! >= 1 && n! <= 200).toBe(true);
      }),
    );
  });
});

describe('cursors', () => {
  it('round-trip any small JSON object', () => {
    const position = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6, size: 'small' });
    fc.assert(
      fc.property(position, (value) => {
        fc.pre(JSON.stringify(value).length <= 1500);
        const cursor = encodeCursor(value);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]*$/);
        expect(decodeCursor(cursor)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('refuses to encode a position too long to decode', () => {
    expect(() => encodeCursor({ pad: 'x'.repeat(1600) })).toThrow(RangeError);
    expect(decodeCursor(encodeCursor({ pad: 'x'.repeat(1500) }))).toEqual({ pad: 'x'.repeat(1500) });
  });

  it('is typed by the caller', () => {
    const cursor = encodeCursor({ created_at: '2025-01-01T00:00:00Z', id: 'tp_dev_0123456789abcdef' });
    const position = decodeCursor<{ created_at: string; id: string }>(cursor);
    expect(position?.id).toBe('tp_dev_0123456789abcdef');
  });

  it.each([undefined, null, ''])('decodes %j to no position', (raw) => expect(decodeCursor(raw)).toBeUndefined());

  it.each([
    ['not base64url', 'abc$'],
    ['padding', `${encodeCursor({ a: 1 })}=`],
    ['an impossible length', 'abcde'],
    ['non-canonical trailing bits', 'eyJhIjoxfR'.slice(0, -1) + 'f'],
    ['not JSON', Buffer.from('hello').toString('base64url')],
    ['JSON that is not an object', Buffer.from('42').toString('base64url')],
    ['JSON null', Buffer.from('null').toString('base64url')],
    ['a JSON string', Buffer.from('"x"').toString('base64url')],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')],
    ['too much length', Buffer.from(JSON.stringify({ pad: 'x'.repeat(3000) })).toString('base64url')],
    ['a non-string', 42],
    ['an array of strings', [encodeCursor({ a: 1 })]],
  ])('refuses a cursor with %s', (_, raw) => {
    const error = refusal(() => decodeCursor(raw));
    expect(error.code).toBe('invalid_request');
    expect(error.details).toEqual([{ field: 'cursor', reason: 'malformed cursor' }]);
  });

  it('never throws anything but invalid_request for arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String().map((s) => s.replace(/=+$/, '')), fc.anything()), (raw) => {
        try {
          const value = decodeCursor(raw);
          if (value !== undefined) expect(typeof value).toBe('object');
        } catch (error) {
          expect((error as DomainError).code).toBe('invalid_request');
        }
      }),
    );
  });

  it('describe pages in the contract shape', () => {
    const page: Page<{ id: string }> = { data: [{ id: 'a' }], next_cursor: null };
    expect(Object.keys(page)).toEqual(['data', 'next_cursor']);
  });
});
