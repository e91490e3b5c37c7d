import { canonicalJson } from '@dcr/domain';

/**
 * `flavor=canonical`: the receipt serialised with RFC 8785 (JCS). The same text is what the signed
 * flavor's detached JWS covers, so a verifier can rebuild the signed bytes from any re-serialisation
 * of the payload.
 */
export function canonicalReceipt(receipt: Record<string, unknown>): string {
  return canonicalJson(withLocalPlainObjects(receipt, new Set()));
}

/** The UTF-8 bytes of canonicalReceipt(receipt): the JWS payload of the signed flavor. */
export function canonicalReceiptBytes(receipt: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(canonicalReceipt(receipt));
}

/**
 * canonicalJson accepts only objects whose prototype is this realm's Object.prototype. A plain object
 * made in another realm (structuredClone or a vm context, as under Jest) is still plain JSON, so it is
 * copied into this realm; anything else (Date, Map, class instances, cycles) is left for canonicalJson
 * to refuse.
 */
function withLocalPlainObjects(value: unknown, ancestors: Set<object>): unknown {
  if (typeof value !== 'object' || value === null || ancestors.has(value)) return value;
  if (Array.isArray(value)) {
    return descend(value, ancestors, () => value.map((item) => withLocalPlainObjects(item, ancestors)));
  }
  const proto: unknown = Object.getPrototypeOf(value);
  const plain = proto === Object.prototype || proto === null || isForeignObjectPrototype(proto);
  if (!plain) return value;
  return descend(value, ancestors, () =>
    Object.fromEntries(Object.entries(value).map(([key, member]) => [key, withLocalPlainObjects(member, ancestors)])),
  );
}

function descend<T>(value: object, ancestors: Set<object>, copy: () => T): T {
  ancestors.add(value);
  try {
    return copy();
  } finally {
    ancestors.delete(value);
  }
}

function isForeignObjectPrototype(proto: unknown): boolean {
  if (typeof proto !== 'object' || proto === null || Object.getPrototypeOf(proto) !== null) return false;
  const constructor = (proto as { constructor?: unknown }).constructor;
  return typeof constructor === 'function' && constructor.name === 'Object';
}
