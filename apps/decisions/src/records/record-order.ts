/**
 * Where a record stands in its person's chain of one flow, as SQL: in the order the decisions were
 * made (`captured_at`), then recorded (`recorded_at`), then by id. `next` and `record` are the
 * aliases of two rows of "decisions"."consent_records".
 */
export const madeAfter = (next: string, record: string): string =>
  `${next}."subject_id" = ${record}."subject_id" AND ${next}."flow_id" = ${record}."flow_id"
   AND (${next}."captured_at", ${next}."recorded_at", ${next}."record_id") > (${record}."captured_at", ${record}."recorded_at", ${record}."record_id")`;

/** The chain's order by the same key, for ORDER BY. */
export const madeOrder = (alias: string): string => `${alias}."captured_at", ${alias}."recorded_at", ${alias}."record_id"`;
