import { hash } from 'node:crypto';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The canonical JSON text of a JSON value: object keys sorted (by UTF-16 code units) at every depth,
 * no whitespace, strings and numbers written as JSON.stringify writes them. For the values flows hold
 * (strings, finite numbers, booleans, null, arrays, plain objects) this is the RFC 8785 (JCS)
 * serialisation, so equal values always give byte-identical text whatever their key order.
 *
 * An object property whose value is `undefined` is left out (as JSON.stringify does). Everything that
 * is not JSON is refused with a TypeError/RangeError: non-finite numbers, bigint, functions, symbols,
 * `undefined` as an array element or as the value itself, objects that are not plain (Date, Map,
 * class instances) and cycles.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set<object>());
}

function write(value: unknown, ancestors: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError(`canonicalJson cannot encode the number ${value}`);
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson cannot encode a value of type ${typeof value}`);
  }
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError('canonicalJson cannot encode a cyclic structure');
  ancestors.add(object);
  try {
    // Built by concatenation: this runs for every audit entry and every payload digest.
    if (Array.isArray(object)) {
      let text = '[';
      for (let i = 0; i < object.length; i++) text += (i === 0 ? '' : ',') + write(object[i], ancestors);
      return text + ']';
    }
    if (!isPlainObject(object)) throw new TypeError('canonicalJson encodes only plain objects');
    const record = object as Record<string, unknown>;
    let text = '{';
    let first = true;
    for (const key of sortedKeys(record)) {
      const member = record[key];
      if (member === undefined) continue;
      text += (first ? '' : ',') + JSON.stringify(key) + ':' + write(member, ancestors);
      first = false;
    }
    return text + '}';
  } finally {
    ancestors.delete(object);
  }
}

/** Above this many keys, Array.prototype.sort; below, an insertion sort in place. */
const INSERTION_SORT_MAX = 32;

/**
 * An object's own enumerable keys in UTF-16 code-unit order (as `sort()` without a comparator and
 * `<` both compare). The objects of audit entries and payloads have a handful of keys, for which
 * sorting in place avoids the work array `sort()` allocates: about 3.6 KB per decision create, the
 * largest single allocation of the path (docs/performance.md, seventeenth session).
 */
function sortedKeys(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record);
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > key) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/** Lower-case hex SHA-256 of the UTF-8 bytes of canonicalJson(value). */
export function canonicalDigest(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex');
}
