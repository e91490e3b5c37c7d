/**
 * A snapshot a peer country asks for (every flow version, application or subscription held here)
 * outgrows one message on the bus (NATS's `max_payload`, 1 MiB by default) once a deployment has a
 * few hundred of them. It is therefore answered in parts: the items in a stable order by a key,
 * those after the key the asker names (`after`), as many as fit SNAPSHOT_PART_BYTES of JSON, and the
 * key to ask after next (`next_after`) while any are left. ServiceClients.askPeers follows the parts.
 */

/** Bytes of items' JSON in one part of anything answered in parts: well within NATS's default 1 MiB message. */
export const SNAPSHOT_PART_BYTES = 512 * 1024;

/**
 * The longest leading run of `items` whose JSON (UTF-8) fits `maxBytes`, and at least the first
 * item: what a page or a part of a list holds so that its answer is one message on the bus.
 */
export function leadingWithin<T>(items: readonly T[], maxBytes = SNAPSHOT_PART_BYTES): T[] {
  const part: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item) ?? '', 'utf8');
    if (part.length > 0 && bytes + size > maxBytes) break;
    part.push(item);
    bytes += size;
  }
  return part;
}

/** What a part answers besides its items. */
export interface SnapshotPartCursor {
  next_after?: string;
}

/**
 * The part of `items` after `after` in the order of `keyOf` (plain string order; keys unique), at
 * least one item when any is left, and the key of its last item while more follow.
 */
export function snapshotPart<T>(items: readonly T[], keyOf: (item: T) => string, after?: string, maxBytes = SNAPSHOT_PART_BYTES): { items: T[] } & SnapshotPartCursor {
  const ordered = items
    .map((item) => ({ item, key: keyOf(item) }))
    .filter(({ key }) => after === undefined || key > after)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const part = leadingWithin(
    ordered.map(({ item }) => item),
    maxBytes,
  );
  return { items: part, ...(part.length < ordered.length ? { next_after: ordered[part.length - 1].key } : {}) };
}
