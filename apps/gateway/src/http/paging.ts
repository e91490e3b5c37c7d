import { decodeCursor, DomainError, encodeCursor, Page, parseLimit } from '@dcr/domain';

/** Compares two positions element by element (plain string order, as JavaScript sorts). */
function comparePositions(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    if (a[i] === undefined) return -1;
    if (b[i] === undefined) return 1;
    return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

const foreignCursor = () => new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'a cursor of another list' }]);

/**
 * One page of a short list (the Connect surface's per-application lists), in the order of each
 * item's position (`positionOf`: for instance its creation time and id; oldest first), with an
 * opaque cursor
 * that names the list and the last position returned. The next page starts after that position, so
 * a cursor stays good when the item it names is deleted meanwhile (a client revoking keys while it
 * pages through them); a cursor of another list (or another application's) is refused, 400 on
 * `cursor`.
 */
export function pageOf<T>(
  items: T[],
  positionOf: (item: T) => string[],
  query: { limit?: unknown; cursor?: unknown },
  list: string,
): Page<T> {
  const limit = parseLimit(query.limit);
  const cursor = decodeCursor<{ list?: unknown; after?: unknown }>(query.cursor);
  const ordered = items.map((item) => ({ item, position: positionOf(item) })).sort((a, b) => comparePositions(a.position, b.position));
  let start = 0;
  if (cursor) {
    const after = cursor.after;
    if (cursor.list !== list || !Array.isArray(after) || after.length === 0 || !after.every((part) => typeof part === 'string')) throw foreignCursor();
    start = ordered.findIndex(({ position }) => comparePositions(position, after as string[]) > 0);
    if (start < 0) start = ordered.length;
  }
  const data = ordered.slice(start, start + limit);
  const more = start + limit < ordered.length;
  return { data: data.map(({ item }) => item), next_cursor: more ? encodeCursor({ list, after: data[data.length - 1].position }) : null };
}
