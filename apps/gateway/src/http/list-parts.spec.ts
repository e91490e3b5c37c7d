import { everyPart } from './list-parts';

describe('everyPart', () => {
  it('asks after the last key until no part names a next one, keeping every item in order', async () => {
    const parts: Record<string, { items: number[]; next_after?: string }> = { '': { items: [1, 2], next_after: 'k2' }, k2: { items: [3], next_after: 'k3' }, k3: { items: [] } };
    const asked: Array<string | undefined> = [];
    const items = await everyPart(async (after) => (asked.push(after), parts[after ?? '']));
    expect(items).toEqual([1, 2, 3]);
    expect(asked).toEqual([undefined, 'k2', 'k3']);
  });
});
