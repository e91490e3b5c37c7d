import * as fc from 'fast-check';
import { JsonRecordset } from './json-recordset';

interface Row {
  id: string;
  count?: number | null;
  at: Date;
  data: unknown;
}

const recordset = new JsonRecordset<Row>([
  { key: 'id', read: (row) => row.id },
  { key: 'count', read: (row) => row.count, type: 'integer' },
  { key: 'occurred_at', read: (row) => row.at, type: 'timestamptz' },
  { key: 'data', read: (row) => row.data, type: 'jsonb' },
]);

/** What the document replaces: an object per row with every key, stringified. */
function expected(rows: Row[]): string {
  return JSON.stringify(rows.map((row) => ({ id: row.id, count: row.count ?? null, occurred_at: row.at, data: row.data ?? null })));
}

describe('JsonRecordset', () => {
  it('writes one object per row with every field, in field order, for any rows', () => {
    const row = fc.record({
      id: fc.string(),
      count: fc.option(fc.integer(), { nil: undefined }),
      at: fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }),
      data: fc.option(fc.jsonValue(), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 5 }), (rows) => {
        const text = recordset.document(rows);
        expect(text).toBe(expected(rows));
        expect(JSON.parse(text)).toHaveLength(rows.length);
      }),
    );
  });

  it('writes what JSON.stringify writes of such objects for any text, number, date or JSON value', () => {
    // Any UTF-16 code unit (lone surrogates too), numbers JSON has no form for, invalid dates.
    const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });
    const value = fc.oneof(
      text,
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.date({ noInvalidDate: false }),
      fc.constant(new Date(Number.NaN)),
      fc.jsonValue(),
      fc.dictionary(text, fc.oneof(text, fc.date({ noInvalidDate: false }), fc.integer())),
    );
    const loose = new JsonRecordset<{ a: unknown; b: unknown }>([
      { key: 'a', read: (row) => row.a },
      { key: 'b"\\', read: (row) => row.b },
    ]);
    fc.assert(
      fc.property(fc.array(fc.record({ a: value, b: value }), { maxLength: 4 }), (rows) => {
        expect(loose.document(rows)).toBe(JSON.stringify(rows.map((row) => ({ a: row.a ?? null, 'b"\\': row.b ?? null }))));
      }),
      { numRuns: 500 },
    );
  });

  it('writes null for a missing value and escapes text', () => {
    const text = recordset.document([{ id: 'a"\\\n', at: new Date('2026-11-23T08:00:00.000Z'), data: undefined }]);
    expect(JSON.parse(text)).toEqual([{ id: 'a"\\\n', count: null, occurred_at: '2026-11-23T08:00:00.000Z', data: null }]);
  });

  it('names each column with its type for jsonb_to_recordset', () => {
    expect(recordset.columns).toBe('"id" text, "count" integer, "occurred_at" timestamptz, "data" jsonb');
    expect(recordset.document([])).toBe('[]');
  });
});
