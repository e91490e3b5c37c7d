import { randomBytes } from 'node:crypto';
import { sealForBearer, unsealWithBearer } from './bearer-seal';

describe('sealForBearer / unsealWithBearer', () => {
  const token = `inb_${randomBytes(32).toString('base64url')}`;

  it('gives the value back to the credential and purpose it was sealed for, and to nothing else', () => {
    const sealed = sealForBearer(token, 'inbox-address', 'ada@example.com');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('ada');
    expect(unsealWithBearer(token, 'inbox-address', sealed)).toBe('ada@example.com');
    expect(unsealWithBearer(`inb_${randomBytes(32).toString('base64url')}`, 'inbox-address', sealed)).toBeUndefined();
    expect(unsealWithBearer(token, 'another-purpose', sealed)).toBeUndefined();
  });

  it('seals the same value differently each time, and refuses an altered or malformed seal', () => {
    const first = sealForBearer(token, 'inbox-address', 'ada@example.com');
    expect(sealForBearer(token, 'inbox-address', 'ada@example.com')).not.toBe(first);
    const body = Buffer.from(first.slice(3), 'base64url');
    body[body.length - 1] ^= 1;
    expect(unsealWithBearer(token, 'inbox-address', `v1.${body.toString('base64url')}`)).toBeUndefined();
    for (const malformed of ['', 'v1', 'v1.', 'v2.AAAA', `${first}.x`, 'v1.AAAA']) expect(unsealWithBearer(token, 'inbox-address', malformed)).toBeUndefined();
  });
});
