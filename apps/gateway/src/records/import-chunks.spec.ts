import { IMPORT_CHUNK_BYTES, IMPORT_CHUNK_ROWS, importChunks, importRowSizes, MAX_IMPORT_ROW_BYTES, oversizedImportRows } from './import-chunks';

describe('import chunks', () => {
  it('cuts small rows by count: 500 a chunk, the last one what is left', () => {
    expect(importChunks(new Array(1201).fill(200))).toEqual([
      { start: 0, end: 500 },
      { start: 500, end: 1000 },
      { start: 1000, end: 1201 },
    ]);
  });

  it('cuts large rows by bytes, so no chunk carries more than the budget', () => {
    const sizes = new Array(100).fill(15_000);
    const chunks = importChunks(sizes);
    for (const { start, end } of chunks) {
      expect(sizes.slice(start, end).reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(IMPORT_CHUNK_BYTES);
      expect(end - start).toBeLessThanOrEqual(IMPORT_CHUNK_ROWS);
    }
    // Every row in exactly one chunk, in order.
    expect(chunks[0].start).toBe(0);
    expect(chunks.at(-1)!.end).toBe(100);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i].start).toBe(chunks[i - 1].end);
    expect(chunks).toHaveLength(Math.ceil(100 / Math.floor(IMPORT_CHUNK_BYTES / 15_000)));
  });

  it('fills a chunk up to the budget exactly and starts the next with the row that would pass it', () => {
    expect(importChunks([40, 60, 1, 99, 100], 10, 100)).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
      { start: 4, end: 5 },
    ]);
  });

  it('gives a row over the budget a chunk of its own rather than none', () => {
    expect(importChunks([10, 500, 10], 10, 100)).toEqual([
      { start: 0, end: 1 },
      { start: 1, end: 2 },
      { start: 2, end: 3 },
    ]);
    expect(importChunks([])).toEqual([]);
  });

  it('measures rows as UTF-8 JSON and names every row over the limit by its index', () => {
    expect(importRowSizes([{ a: 'é' }, 'x'])).toEqual([Buffer.byteLength('{"a":"é"}'), 3]);
    const big = { subject: { email: 'a@example.com' }, decisions: { x: 'y'.repeat(MAX_IMPORT_ROW_BYTES) } };
    const sizes = importRowSizes([{ subject: { email: 'b@example.com' } }, big, big]);
    expect(oversizedImportRows(sizes)).toEqual([
      { field: 'records[1]', reason: `is ${sizes[1]} bytes of JSON; a row is at most ${MAX_IMPORT_ROW_BYTES}` },
      { field: 'records[2]', reason: `is ${sizes[2]} bytes of JSON; a row is at most ${MAX_IMPORT_ROW_BYTES}` },
    ]);
    expect(oversizedImportRows([MAX_IMPORT_ROW_BYTES])).toEqual([]);
  });
});
