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
 * The problems of a parsed JSON request body that no field rule sees: a string, or a field name,
 * that could not be stored as sent. Each is named by its dotted path (`subject.external_id`,
 * `records.0.idempotency_key`), as the field rules name theirs. Caught at the edge, such a value
 * is a 422 before anything is written; further in, the database refuses it half-way through a
 * request (a person's directory entry kept, the person not).
 */
export function unstorableInputIssues(body: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  // Iterative (a body nested thousands of levels deep must not exhaust the stack here), in the
  // body's order: children are stacked last first.
  const pending: Array<{ value: unknown; path: string; name?: string }> = [{ value: body, path: '' }];
  const stack = (children: Array<{ value: unknown; path: string; name?: string }>) => {
    for (let index = children.length - 1; index >= 0; index--) pending.push(children[index]);
  };
  const at = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
  while (pending.length > 0) {
    const { value, path, name } = pending.pop()!;
    const nameReason = name === undefined ? undefined : unstorableReason(name);
    if (nameReason) {
      issues.push({ field: path, reason: `its name ${nameReason}` });
    } else if (typeof value === 'string') {
      const reason = unstorableReason(value);
      if (reason) issues.push({ field: path, reason });
    } else if (Array.isArray(value)) {
      stack(value.map((item, index) => ({ value: item, path: at(path, String(index)) })));
    } else if (typeof value === 'object' && value !== null) {
      stack(Object.entries(value).map(([key, item]) => ({ value: item, path: at(path, key), name: key })));
    }
  }
  return issues;
}
