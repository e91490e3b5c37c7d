/**
 * How deep a request's JSON may nest objects and arrays. No body of the API nests more than about
 * ten levels (a Typeform form definition, the deepest, about seven); what reads a body afterwards
 * (the transport's encoding, the validators, digests) recurses, and thousands of levels overflow its
 * stack. A body over the limit is refused before anything reads it.
 */
export const MAX_BODY_NESTING = 64;

/**
 * The top-level field of a JSON value (`[i]` for a list's member) under which objects or arrays nest
 * more than `limit` levels below the value, or `null` when nothing does. Walked without recursion, so
 * any depth is measured without overflowing.
 */
export function fieldNestedDeeperThan(value: unknown, limit: number = MAX_BODY_NESTING): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const items: unknown[] = [];
  const depths: number[] = [];
  const fields: string[] = [];
  const top = Array.isArray(value) ? value.map((item, index) => [`[${index}]`, item] as const) : Object.entries(value);
  for (const [field, item] of top) {
    items.push(item);
    depths.push(1);
    fields.push(field);
  }
  while (items.length > 0) {
    const item = items.pop();
    const depth = depths.pop()!;
    const field = fields.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limit) return field;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      items.push(child);
      depths.push(depth + 1);
      fields.push(field);
    }
  }
  return null;
}
