import { decodeCursor, DomainError, encodeCursor, Page, parseLimit } from '@dcr/domain';

/**
 * One page of an already ordered list, with an opaque cursor naming the last item returned.
 * Suits the short per-application lists of the Connect surface.
 */
export function pageOf<T>(items: T[], keyOf: (item: T) => string, query: { limit?: unknown; cursor?: unknown }): Page<T> {
  const limit = parseLimit(query.limit);
  const cursor = decodeCursor<{ after: string }>(query.cursor);
  let start = 0;
  if (cursor) {
    const index = items.findIndex((item) => keyOf(item) === cursor.after);
    if (index < 0) throw new DomainError('invalid_request', 'The cursor does not belong to this list', [
      { field: 'cursor', reason: 'unknown position' },
    ]);
    start = index + 1;
  }
  const data = items.slice(start, start + limit);
  const more = start + limit < items.length;
  return { data, next_cursor: more ? encodeCursor({ after: keyOf(data[data.length - 1]) }) : null };
}
