import { ListPart } from '@dcr/contracts';

/**
 * Every item of a list its service answers in parts (ListPart: as many as fit one message on the
 * bus, `next_after` while more follow), asked for `after` the last key until none is left; the
 * gateway then pages the whole list (pageOf) as it always did.
 */
export async function everyPart<T>(ask: (after?: string) => Promise<ListPart<T>>): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  do {
    const part = await ask(after);
    items.push(...part.items);
    after = part.next_after;
  } while (after !== undefined);
  return items;
}
