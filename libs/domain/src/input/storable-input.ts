import type { FieldIssue } from '../errors';

/**
 * Text PostgreSQL cannot keep: U+0000 (a `text` or `jsonb` value may not hold it) and an unpaired
 * UTF-16 surrogate (JSON may spell one as `\ud800`, but it is no character, so it has no UTF-8 form).
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorableReason(text: string): string | undefined {
  const found = UNSTORABLE.exec(text);
  if (!found) return undefined;
  return found[0] === '\u0000' ? 'must not contain the character U+0000' : 'must be well-formed Unicode (an unpaired surrogate is no character)';
}

/**
 * How deep a request body may nest: the body is level 1, each object or array inside it one more.
 * The deepest body a route takes (an import row's decision) is level 5; far beyond, a body cannot
 * be carried on to the service that records it (JSON.stringify runs out of stack).
 */
export const MAX_BODY_DEPTH = 64;

/** The reason an object or array nested deeper than MAX_BODY_DEPTH is refused with. */
export const NESTED_TOO_DEEP = `nests deeper than ${MAX_BODY_DEPTH} levels`;

type Pending = { value: unknown; path: string; depth: number; name?: string };

/**
 * The problems of a parsed JSON request body that no field rule sees: a string, or a field name,
 * that could not be stored as sent, and an object or array nested deeper than MAX_BODY_DEPTH
 * (not looked into). Each is named by its path, an object's key after a dot and an array's index
 * in brackets (`subject.external_id`, `records[0].idempotency_key`), as the field rules name theirs
 * (`purposes[1]`, `data_fields[0].key`, `records[3]`). Caught at the edge, such a value
 * is a 422 before anything is written; further in, it failed half-way through a request (a
 * person's directory entry kept, the person not) or as a 500.
 */
export function unstorableInputIssues(body: unknown): FieldIssue[] {
  // Nearly every body is fine: that is found without building a path for every value.
  if (!hasUnstorableInput(body)) return [];
  const issues: FieldIssue[] = [];
  // Iterative, in the body's order: children are stacked last first.
  const pending: Pending[] = [{ value: body, path: '', depth: 0 }];
  const stack = (children: Pending[]) => {
    for (let index = children.length - 1; index >= 0; index--) pending.push(children[index]);
  };
  const at = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
  const atIndex = (path: string, index: number) => `${path}[${index}]`;
  while (pending.length > 0) {
    const { value, path, depth, name } = pending.pop()!;
    const nameReason = name === undefined ? undefined : unstorableReason(name);
    if (nameReason) {
      issues.push({ field: path, reason: `its name ${nameReason}` });
    } else if (typeof value === 'string') {
      const reason = unstorableReason(value);
      if (reason) issues.push({ field: path, reason });
    } else if (typeof value === 'object' && value !== null && depth >= MAX_BODY_DEPTH) {
      issues.push({ field: path, reason: NESTED_TOO_DEEP });
    } else if (Array.isArray(value)) {
      stack(value.map((item, index) => ({ value: item, path: atIndex(path, index), depth: depth + 1 })));
    } else if (typeof value === 'object' && value !== null) {
      stack(Object.entries(value).map(([key, item]) => ({ value: item, path: at(path, key), depth: depth + 1, name: key })));
    }
  }
  return issues;
}

/** Whether unstorableInputIssues would find anything: the same walk, keeping no paths. */
function hasUnstorableInput(body: unknown): boolean {
  const values: unknown[] = [body];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return true;
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_BODY_DEPTH) return true;
      if (Array.isArray(value)) {
        for (const item of value) {
          values.push(item);
          depths.push(depth + 1);
        }
      } else {
        for (const key of Object.keys(value)) {
          if (UNSTORABLE.test(key)) return true;
          values.push((value as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}
