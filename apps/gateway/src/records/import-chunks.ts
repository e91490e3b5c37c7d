import { IMPORT_ROW_REASONS } from '@dcr/contracts';
import { FLOW_LIMITS } from '@dcr/domain';

/**
 * How an import's rows go to the decisions service: in chunks, each one message on the bus and one
 * transaction there. A chunk holds at most IMPORT_CHUNK_ROWS rows and at most IMPORT_CHUNK_BYTES of
 * their JSON, so that every message fits the bus whatever the rows look like: NATS refuses a
 * message over its `max_payload` (1 MiB unless the server raises it), and 500 rows of a flow with
 * many purposes are several megabytes. The reply must fit too: a refused row's reasons can name
 * every purpose of the flow, so a chunk also holds no more rows than the bound of their outcomes
 * (importReplyBound) allows, for the purposes the previous chunk's reply reported (the most a flow
 * can have before the first).
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

/**
 * Bytes of the reply a chunk may need: its rows' outcomes, with a refused row's reasons, which can
 * name every purpose of the flow and every entry of the row's decisions. Kept well under NATS's
 * default 1 MiB message, with the outcomes' envelope and a dry run's ledger.
 */
export const IMPORT_REPLY_BYTES = 896 * 1024;

/** A flow has at most this many purposes (FLOW_LIMITS.purposes), so a row needs no more decisions. */
export const MAX_IMPORT_ROW_DECISIONS = FLOW_LIMITS.purposes;

/**
 * The most a row's outcome can take in a chunk's reply, for a flow of `flowPurposes` purposes: the
 * reasons of a refusal (one a purpose of the flow missing or misstated and one an entry of the row's
 * decisions the flow does not have, each naming its key, which the row's own bytes bound), the
 * other fields' reasons and a dry run's ledger entry (the person and the key).
 */
export function importReplyBound(rowBytes: number, rowDecisions: number, flowPurposes: number): number {
  // A reason naming a purpose is about 150 bytes besides its key (at most 64 characters for the
  // flow's; a row's own keys, and any other name it makes a reason repeat, are within its bytes).
  // A refused row names at most IMPORT_ROW_REASONS of them.
  return 1_000 + Math.min(flowPurposes + rowDecisions, IMPORT_ROW_REASONS) * 210 + rowBytes;
}

/** How many entries each row's `decisions` has (0 for a row without an object there). */
export function importRowDecisionCounts(rows: readonly unknown[]): number[] {
  return rows.map((row) => {
    const decisions = (row as { decisions?: unknown } | null)?.decisions;
    return typeof decisions === 'object' && decisions !== null ? Object.keys(decisions).length : 0;
  });
}

/** The rows whose decisions have more entries than any flow has purposes, named by index. */
export function overfullImportRows(decisionCounts: readonly number[]): Array<{ field: string; reason: string }> {
  return decisionCounts.flatMap((count, i) =>
    count > MAX_IMPORT_ROW_DECISIONS ? [{ field: `records[${i}].decisions`, reason: `has ${count} entries; a flow has at most ${MAX_IMPORT_ROW_DECISIONS} purposes` }] : [],
  );
}

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

export interface ChunkLimits {
  rows: number;
  bytes: number;
  replyBytes: number;
}

export const IMPORT_CHUNK_LIMITS: ChunkLimits = { rows: IMPORT_CHUNK_ROWS, bytes: IMPORT_CHUNK_BYTES, replyBytes: IMPORT_REPLY_BYTES };

/**
 * Where the chunk that starts at `start` ends (exclusive): as many rows as fit every limit (rows,
 * their bytes, and the bound of their reply for a flow of `flowPurposes` purposes), and at least
 * one row (a row within MAX_IMPORT_ROW_BYTES and MAX_IMPORT_ROW_DECISIONS always fits alone).
 */
export function importChunkEnd(
  sizes: readonly number[],
  decisionCounts: readonly number[],
  start: number,
  flowPurposes: number,
  limits: ChunkLimits = IMPORT_CHUNK_LIMITS,
): number {
  let bytes = 0;
  let reply = 0;
  let end = start;
  while (end < sizes.length) {
    const rowReply = importReplyBound(sizes[end], decisionCounts[end], flowPurposes);
    if (end > start && (end - start >= limits.rows || bytes + sizes[end] > limits.bytes || reply + rowReply > limits.replyBytes)) break;
    bytes += sizes[end];
    reply += rowReply;
    end += 1;
  }
  return end;
}
