import type { FieldIssue } from '../errors';

/** The reason a prototype key in a request body is refused with. */
export const PROTOTYPE_KEY_REFUSED = 'is a prototype key (__proto__, or constructor holding prototype): not accepted';

/** How many prototype keys a refusal names: a body of thousands of them is refused by the first. */
export const MAX_PROTOTYPE_KEY_ISSUES = 20;

/** A key of an object, or (`index`) the position of an element of an array. */
type Node = { value: unknown; key?: string; index?: boolean; parent?: Node };

/** An object's key after a dot, an array's index in brackets (`records[0].constructor.prototype`). */
const pathOf = (node: Node): string => {
  const parts: string[] = [];
  for (let at: Node | undefined = node; at?.key !== undefined; at = at.parent) {
    const [head, parent] = [at.index ? `[${at.key}]` : at.key, at.parent];
    parts.push(parent?.key !== undefined && !at.index ? `.${head}` : head);
  }
  return parts.reverse().join('');
};

/**
 * The keys of a parsed JSON value that would replace an object's prototype once the value is copied
 * or merged: an own `__proto__` key, and a `constructor` key whose value is an object with its own
 * `prototype` key (the keys secure-json-parse, Fastify's JSON parser, refuses). Each is named by its
 * path (`subject.__proto__`, `records[0].constructor.prototype`), as unstorableInputIssues
 * names its issues; at most MAX_PROTOTYPE_KEY_ISSUES, depth first. Iterative, keeping a
 * link to the parent instead of a path per value, so that a value nested a million levels deep is
 * walked without running out of stack or building a path for every level.
 */
export function prototypeKeyIssues(value: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const pending: Node[] = [{ value }];
  while (pending.length > 0 && issues.length < MAX_PROTOTYPE_KEY_ISSUES) {
    const node = pending.pop()!;
    const current = node.value;
    if (typeof current !== 'object' || current === null) continue;
    const children: Node[] = [];
    const keys = Array.isArray(current) ? current.map((_item, index) => String(index)) : Object.keys(current);
    for (const key of keys) {
      const child = (current as Record<string, unknown>)[key];
      if (!Array.isArray(current) && key === '__proto__') {
        issues.push({ field: pathOf({ value: child, key, parent: node }), reason: PROTOTYPE_KEY_REFUSED });
        continue;
      }
      if (!Array.isArray(current) && key === 'constructor' && typeof child === 'object' && child !== null && Object.prototype.hasOwnProperty.call(child, 'prototype')) {
        issues.push({ field: pathOf({ value: undefined, key: 'prototype', parent: { value: child, key, parent: node } }), reason: PROTOTYPE_KEY_REFUSED });
        continue;
      }
      children.push({ value: child, key, index: Array.isArray(current), parent: node });
    }
    // Depth first, in the value's order: children are stacked last first.
    for (let index = children.length - 1; index >= 0; index--) pending.push(children[index]);
  }
  return issues.slice(0, MAX_PROTOTYPE_KEY_ISSUES);
}

/**
 * The names of a form's fields (`application/x-www-form-urlencoded`) that are prototype keys:
 * `__proto__`, and, read as the bracket or dot paths forms write nesting in (`subject[email]`,
 * `subject.email`), a name with a `__proto__` part or a `constructor` part followed by `prototype`
 * (`constructor[prototype]`), which a reader nesting the names would turn into the keys
 * prototypeKeyIssues refuses in a JSON body. Each is named as the form sent it (decoded); at most
 * MAX_PROTOTYPE_KEY_ISSUES.
 */
export function formFieldPrototypeKeyIssues(names: readonly string[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const name of names) {
    if (issues.length === MAX_PROTOTYPE_KEY_ISSUES) break;
    // Only a name holding one of the two words can be one: the others are not split.
    if (!name.includes('__proto__') && !name.includes('prototype')) continue;
    const parts = name.split(/[[\].]+/);
    const refused = parts.some((part, index) => part === '__proto__' || (part === 'constructor' && parts[index + 1] === 'prototype'));
    if (refused) issues.push({ field: name, reason: PROTOTYPE_KEY_REFUSED });
  }
  return issues;
}
