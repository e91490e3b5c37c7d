import {
  ChunkLimits,
  IMPORT_CHUNK_BYTES,
  IMPORT_CHUNK_ROWS,
  IMPORT_REPLY_BYTES,
  importChunkEnd,
  importReplyBound,
  importRowDecisionCounts,
  importRowSizes,
  MAX_IMPORT_ROW_BYTES,
  MAX_IMPORT_ROW_DECISIONS,
  overfullImportRows,
  oversizedImportRows,
} from './import-chunks';

/** Every chunk of an import, as the gateway cuts them (the flow's purposes known from the start). */
function chunks(sizes: number[], purposes: number, decisionCounts = sizes.map(() => 3), limits?: ChunkLimits): Array<{ start: number; end: number }> {
  const cut: Array<{ start: number; end: number }> = [];
  for (let start = 0; start < sizes.length; ) {
    const end = importChunkEnd(sizes, decisionCounts, start, purposes, limits);
    cut.push({ start, end });
    start = end;
  }
  return cut;
}

describe('import chunks', () => {
  it('cuts small rows of a one-purpose flow by count: 500 a chunk, the last one what is left', () => {
    expect(chunks(new Array(1201).fill(200), 1, new Array(1201).fill(1))).toEqual([
      { start: 0, end: 500 },
      { start: 500, end: 1000 },
      { start: 1000, end: 1201 },
    ]);
  });

  it('cuts large rows by bytes, so no chunk carries more than the budget, every row once and in order', () => {
    const sizes = new Array(100).fill(15_000);
    const cut = chunks(sizes, 100, sizes.map(() => 100));
    for (const { start, end } of cut) {
      expect(sizes.slice(start, end).reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(IMPORT_CHUNK_BYTES);
      expect(end - start).toBeLessThanOrEqual(IMPORT_CHUNK_ROWS);
    }
    expect(cut[0].start).toBe(0);
    expect(cut.at(-1)!.end).toBe(100);
    for (let i = 1; i < cut.length; i++) expect(cut[i].start).toBe(cut[i - 1].end);
  });

  it('cuts small rows of a large flow by the bound of their reply, whose reasons name at most 10 problems', () => {
    // 300 bytes a row; a refusal could break all 100 purposes, but names 10 of them (the rest counted).
    const bound = importReplyBound(300, 3, 100);
    expect(bound).toBe(importReplyBound(300, 0, 10));
    expect(importReplyBound(300, 0, 9)).toBeLessThan(bound);
    const cut = chunks(new Array(1000).fill(300), 100);
    expect(cut[0]).toEqual({ start: 0, end: Math.floor(IMPORT_REPLY_BYTES / bound) });
    for (const { start, end } of cut) expect((end - start) * bound).toBeLessThanOrEqual(IMPORT_REPLY_BYTES);
  });

  it('fills a chunk up to a budget exactly and starts the next with the row that would pass it', () => {
    const limits = { rows: 10, bytes: 100, replyBytes: 1e9 };
    expect(chunks([40, 60, 1, 99, 100], 0, [0, 0, 0, 0, 0], limits)).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
      { start: 4, end: 5 },
    ]);
  });

  it('gives a row over a budget a chunk of its own rather than none', () => {
    const limits = { rows: 10, bytes: 100, replyBytes: 1e9 };
    expect(chunks([10, 500, 10], 0, [0, 0, 0], limits)).toEqual([
      { start: 0, end: 1 },
      { start: 1, end: 2 },
      { start: 2, end: 3 },
    ]);
    expect(chunks([], 3)).toEqual([]);
  });

  it('keeps the largest row a flow can take alone within every budget', () => {
    expect(MAX_IMPORT_ROW_BYTES).toBeLessThanOrEqual(IMPORT_CHUNK_BYTES);
    expect(importReplyBound(MAX_IMPORT_ROW_BYTES, MAX_IMPORT_ROW_DECISIONS, MAX_IMPORT_ROW_DECISIONS)).toBeLessThanOrEqual(IMPORT_REPLY_BYTES);
  });

  it('measures rows as UTF-8 JSON and names every row over the limits by its index', () => {
    expect(importRowSizes([{ a: 'é' }, 'x'])).toEqual([Buffer.byteLength('{"a":"é"}'), 3]);
    const big = { subject: { email: 'a@example.com' }, decisions: { x: 'y'.repeat(MAX_IMPORT_ROW_BYTES) } };
    const sizes = importRowSizes([{ subject: { email: 'b@example.com' } }, big, big]);
    expect(oversizedImportRows(sizes)).toEqual([
      { field: 'records[1]', reason: `is ${sizes[1]} bytes of JSON; a row is at most ${MAX_IMPORT_ROW_BYTES}` },
      { field: 'records[2]', reason: `is ${sizes[2]} bytes of JSON; a row is at most ${MAX_IMPORT_ROW_BYTES}` },
    ]);
    expect(oversizedImportRows([MAX_IMPORT_ROW_BYTES])).toEqual([]);

    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, { decision: 'granted' }]));
    const counts = importRowDecisionCounts([{ decisions: many }, { decisions: { a: {} } }, { decisions: null }, null]);
    expect(counts).toEqual([101, 1, 0, 0]);
    expect(overfullImportRows(counts)).toEqual([{ field: 'records[0].decisions', reason: 'has 101 entries; a flow has at most 100 purposes' }]);
  });
});
