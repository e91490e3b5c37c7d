/**
 * A deep copy of a JSON value made of plain objects of this realm. (structuredClone is avoided: under
 * a VM context, as in Jest, its objects carry another realm's Object.prototype, which canonicalJson
 * refuses as not plain.)
 */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
