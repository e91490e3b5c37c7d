import { retriedOnDeadlock } from './deadlock';

describe('retriedOnDeadlock', () => {
  const failing = (codes: string[]) => {
    let calls = 0;
    const work = async () => {
      const code = codes[calls++];
      if (code) throw Object.assign(new Error(`failed with ${code}`), { code });
      return calls;
    };
    return { work, calls: () => calls };
  };

  it('runs the work again after a deadlock, and answers the try that went through', async () => {
    const { work, calls } = failing(['40P01', '40P01']);
    await expect(retriedOnDeadlock(work)).resolves.toBe(3);
    expect(calls()).toBe(3);
  });

  it('throws the last deadlock after the tries given', async () => {
    const { work, calls } = failing(['40P01', '40P01', '40P01']);
    await expect(retriedOnDeadlock(work, 2)).rejects.toThrow('failed with 40P01');
    expect(calls()).toBe(2);
  });

  it('throws any other error at once', async () => {
    const { work, calls } = failing(['23505']);
    await expect(retriedOnDeadlock(work)).rejects.toThrow('failed with 23505');
    expect(calls()).toBe(1);
  });
});
