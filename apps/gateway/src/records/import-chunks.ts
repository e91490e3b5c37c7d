/**
 * How an import's rows go to the decisions service: in chunks, each one message on the bus and one
 * transaction there. A chunk holds at most IMPORT_CHUNK_ROWS rows and at most IMPORT_CHUNK_BYTES of
 * their JSON, so that every message fits the bus whatever the rows look like: NATS refuses a
 * message over its `max_payload` (1 MiB unless the server raises it), and 500 rows of a flow with
 * many purposes are several megabytes.
 */

/** Rows per chunk. */
export const IMPORT_CHUNK_ROWS = 500;

/**
 * Bytes of row JSON per chunk: a quarter of NATS's default `max_payload`, which leaves room for the
 * message's envelope, a dry run's ledger of what the chunks before it would have written, and the
 * reply (one outcome per row, with the reasons of a refused one).
 */
export const IMPORT_CHUNK_BYTES = 256 * 1024;

/**
 * Bytes of JSON a row may have. The largest row a flow can take (100 purposes with keys of 64
 * characters, a subject and an idempotency key) is about 15 KB; a row over this is refused by its
 * index before anything is written, as a row that is not an object is.
 */
export const MAX_IMPORT_ROW_BYTES = 64 * 1024;

/** Each row's size as the bus carries it: its JSON in UTF-8. */
export function importRowSizes(rows: readonly unknown[]): number[] {
  return rows.map((row) => Buffer.byteLength(JSON.stringify(row) ?? '', 'utf8'));
}

/** The rows over MAX_IMPORT_ROW_BYTES, each named by its index (a 422 lists them all). */
export function oversizedImportRows(sizes: readonly number[]): Array<{ field: string; reason: string }> {
  return sizes.flatMap((size, i) =>
    size > MAX_IMPORT_ROW_BYTES ? [{ field: `records[${i}]`, reason: `is ${size} bytes of JSON; a row is at most ${MAX_IMPORT_ROW_BYTES}` }] : [],
  );
}

/**
 * The chunks of rows of these sizes, in order, as `[start, end)` ranges: each as many rows as fit
 * both limits, and at least one row (a row within MAX_IMPORT_ROW_BYTES always fits).
 */
export function importChunks(sizes: readonly number[], maxRows = IMPORT_CHUNK_ROWS, maxBytes = IMPORT_CHUNK_BYTES): Array<{ start: number; end: number }> {
  const chunks: Array<{ start: number; end: number }> = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (i > start && (i - start >= maxRows || bytes + sizes[i] > maxBytes)) {
      chunks.push({ start, end: i });
      start = i;
      bytes = 0;
    }
    bytes += sizes[i];
  }
  if (sizes.length > start) chunks.push({ start, end: sizes.length });
  return chunks;
}
