import { fieldNestedDeeperThan, MAX_BODY_NESTING } from './nesting';

const nested = (levels: number, leaf: unknown = 1): unknown => {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
};

describe('fieldNestedDeeperThan', () => {
  it('names the top-level field under which the limit is passed, and nothing within it', () => {
    expect(fieldNestedDeeperThan({ a: 1, b: nested(MAX_BODY_NESTING) })).toBeNull();
    expect(fieldNestedDeeperThan({ a: 1, b: nested(MAX_BODY_NESTING + 1) })).toBe('b');
    expect(fieldNestedDeeperThan([{}, nested(MAX_BODY_NESTING + 1)])).toBe('[1]');
    expect(fieldNestedDeeperThan({ a: nested(3) }, 2)).toBe('a');
    expect(fieldNestedDeeperThan({ a: nested(2) }, 2)).toBeNull();
  });

  it('measures any depth without recursion, and takes scalars and null as they are', () => {
    expect(fieldNestedDeeperThan(JSON.parse(`{"deep":${'['.repeat(100000)}${']'.repeat(100000)}}`))).toBe('deep');
    for (const value of [null, 1, 'text', true]) expect(fieldNestedDeeperThan(value)).toBeNull();
    expect(fieldNestedDeeperThan({})).toBeNull();
  });
});
