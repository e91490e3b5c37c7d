import { ListPart, SnapshotPartReply } from '@dcr/contracts';

/*
 * What can outgrow one message on the bus (NATS's `max_payload`, 1 MiB by default) is answered in
 * parts: a snapshot a peer country asks for (every flow version, application or subscription held
 * here), an application's subscriptions or form connections, a person's records. A part holds the
 * items in a stable order by a key, those after the key the asker names (`after`), as many as fit
 * SNAPSHOT_PART_BYTES of JSON, and the key to ask after next (`next_after`) while any are left
 * (snapshotPart); the asker follows the parts (forEachPart, everyPart, ServiceClients.askPeers).
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

/**
 * The part of `items` after `after` in the order of `keyOf` (plain string order; keys unique), at
 * least one item when any is left, and the key of its last item while more follow. `descending`
 * orders by key from the greatest (a list newest first).
 */
export function snapshotPart<T>(items: readonly T[], keyOf: (item: T) => string, after?: string, maxBytes = SNAPSHOT_PART_BYTES, descending = false): ListPart<T> {
  const direction = descending ? -1 : 1;
  const ordered = items
    .map((item) => ({ item, key: keyOf(item) }))
    .filter(({ key }) => after === undefined || direction * (key < after ? -1 : key > after ? 1 : 0) > 0)
    .sort((a, b) => direction * (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const part = leadingWithin(
    ordered.map(({ item }) => item),
    maxBytes,
  );
  return { items: part, ...(part.length < ordered.length ? { next_after: ordered[part.length - 1].key } : {}) };
}

/** Asks for something answered in parts until no part names a next one, handing each part over as it comes. */
export async function forEachPart<P extends SnapshotPartReply>(ask: (after?: string) => Promise<P>, received: (part: P) => Promise<void> | void): Promise<void> {
  let after: string | undefined;
  do {
    const part = await ask(after);
    await received(part);
    after = part.next_after;
  } while (after !== undefined);
}

/** Every item of a list answered in parts (ListPart), in order. */
export async function everyPart<T>(ask: (after?: string) => Promise<ListPart<T>>): Promise<T[]> {
  const items: T[] = [];
  await forEachPart(ask, (part) => void items.push(...part.items));
  return items;
}
