import { RecentTokenHashes } from '../src/auth/recent-token-hashes';

describe('RecentTokenHashes', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('gives back the hash of a token it was told, and nothing for any other', () => {
    const memo = new RecentTokenHashes(4, 60_000, now);
    expect(memo.get('tok_a')).toBeUndefined();
    memo.remember('tok_a', 'hash-a');
    expect(memo.get('tok_a')).toBe('hash-a');
    expect(memo.get('tok_b')).toBeUndefined();
  });

  it('forgets everything once the oldest entry is max-age old', () => {
    const memo = new RecentTokenHashes(4, 60_000, now);
    memo.remember('tok_a', 'hash-a');
    clock += 30_000;
    memo.remember('tok_b', 'hash-b');
    clock += 29_999;
    expect(memo.get('tok_b')).toBe('hash-b');
    clock += 1; // 60 s after tok_a: tok_b goes too (it is at most that old)
    expect(memo.get('tok_b')).toBeUndefined();
    expect(memo.get('tok_a')).toBeUndefined();
    expect(memo.size).toBe(0);
    memo.remember('tok_c', 'hash-c'); // the age counts again from here
    clock += 59_999;
    expect(memo.get('tok_c')).toBe('hash-c');
  });

  it('never holds more than its capacity', () => {
    const memo = new RecentTokenHashes(3, 60_000, now);
    for (const token of ['t1', 't2', 't3']) memo.remember(token, `h-${token}`);
    expect(memo.size).toBe(3);
    memo.remember('t4', 'h-t4');
    expect(memo.size).toBe(1);
    expect(memo.get('t1')).toBeUndefined();
    expect(memo.get('t4')).toBe('h-t4');
  });

  it('drops one token on request', () => {
    const memo = new RecentTokenHashes(4, 60_000, now);
    memo.remember('tok_a', 'hash-a');
    memo.remember('tok_b', 'hash-b');
    memo.drop('tok_a');
    expect(memo.get('tok_a')).toBeUndefined();
    expect(memo.get('tok_b')).toBe('hash-b');
  });
});
