import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  classifyBearer,
  constantTimeEqualHex,
  generateApiToken,
  generatePublishableKey,
  hashCredential,
  publishableKeyEnvironment,
} from './tokens';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('generateApiToken', () => {
  it('is 32 random bytes as 43 unpadded base64url characters, without a prefix', () => {
    const token = generateApiToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(Buffer.from(token, 'base64url').toString('base64url')).toBe(token);
  });

  it('never repeats and is always routed as an API token', () => {
    const tokens = Array.from({ length: 2000 }, generateApiToken);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens) expect(classifyBearer(token)).toBe('api_token');
  });
});

describe('publishable keys', () => {
  it('carry the environment in their prefix and 24 random bytes after it', () => {
    const test = generatePublishableKey('sandbox');
    const live = generatePublishableKey('production');
    expect(test).toMatch(/^pk_test_[A-Za-z0-9_-]{32}$/);
    expect(live).toMatch(/^pk_live_[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(test.slice('pk_test_'.length), 'base64url')).toHaveLength(24);
    expect(publishableKeyEnvironment(test)).toBe('sandbox');
    expect(publishableKeyEnvironment(live)).toBe('production');
    expect(test).not.toBe(generatePublishableKey('sandbox'));
  });

  it('refuse an unknown environment instead of minting a key', () => {
    expect(() => generatePublishableKey('staging' as never)).toThrow(TypeError);
  });

  it.each([
    'pk_test_',
    'pk_test_abc',
    'pk_prod_' + 'a'.repeat(32),
    'PK_TEST_' + 'a'.repeat(32),
    'pk_test_' + 'a'.repeat(31) + '=',
    'pk_test_' + 'a'.repeat(33),
    ' pk_live_' + 'a'.repeat(32),
    generateApiToken(),
  ])('read no environment from %j', (key) => expect(publishableKeyEnvironment(key)).toBeUndefined());

  it('read no environment from non-strings', () => {
    expect(publishableKeyEnvironment(undefined)).toBeUndefined();
    expect(publishableKeyEnvironment(42)).toBeUndefined();
  });
});

describe('hashCredential', () => {
  it('is the lower-case hex SHA-256 of the UTF-8 value', () => {
    expect(hashCredential('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashCredential('é')).toBe(createHash('sha256').update(Buffer.from([0xc3, 0xa9])).digest('hex'));
    fc.assert(
      fc.property(fc.string(), (value) => {
        expect(hashCredential(value)).toMatch(/^[0-9a-f]{64}$/);
      }),
    );
  });

  it('differs for different values', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        expect(hashCredential(a)).not.toBe(hashCredential(b));
      }),
    );
  });
});

describe('constantTimeEqualHex', () => {
  it('agrees with string equality on equal-length hex digests, ignoring case', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), (x, y) => {
        const a = Buffer.from(x).toString('hex');
        const b = Buffer.from(y).toString('hex');
        expect(constantTimeEqualHex(a, b)).toBe(a === b);
        expect(constantTimeEqualHex(a, a.toUpperCase())).toBe(true);
      }),
    );
  });

  it('is false, never throwing, for malformed input', () => {
    const h = hashCredential('x');
    expect(constantTimeEqualHex(h, h.slice(0, -2))).toBe(false);
    expect(constantTimeEqualHex('', '')).toBe(false);
    expect(constantTimeEqualHex('abc', 'abc')).toBe(false); // odd length
    expect(constantTimeEqualHex('zz', 'zz')).toBe(false); // Buffer.from('zz','hex') would be empty
    expect(constantTimeEqualHex(h + 'zz', h + 'zz')).toBe(false);
    expect(constantTimeEqualHex(undefined as never, h)).toBe(false);
  });
});

describe('classifyBearer', () => {
  const jwt = `${b64url({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })}.${b64url({ sub: 'x' })}.c2lnbmF0dXJl`;

  it('routes ra_agent_ values to the agent verifier', () => {
    expect(classifyBearer('ra_agent_abc')).toBe('agent_token');
    expect(classifyBearer(`ra_agent_${jwt}`)).toBe('agent_token');
  });

  it('routes a JWT with an alg header to the OAuth verifier', () => {
    expect(classifyBearer(jwt)).toBe('oauth_access_token');
  });

  it.each([
    ['a header without alg', `${b64url({ typ: 'JWT' })}.${b64url({})}.c2ln`],
    ['a non-string alg', `${b64url({ alg: 1 })}.${b64url({})}.c2ln`],
    ['a header that is an array', `${b64url(['alg'])}.${b64url({})}.c2ln`],
    ['a header that is not JSON', `${Buffer.from('not json').toString('base64url')}.e30.c2ln`],
    ['two segments', `${b64url({ alg: 'ES256' })}.${b64url({})}`],
    ['four segments', `${b64url({ alg: 'ES256' })}.${b64url({})}.c2ln.c2ln`],
    ['an empty signature', `${b64url({ alg: 'none' })}.${b64url({})}.`],
    ['padding', `${b64url({ alg: 'ES256' })}=.${b64url({})}.c2ln`],
    ['an agent prefix in the middle', 'x_ra_agent_abc'],
    ['an empty value', ''],
  ])('treats a value with %s as an API token candidate', (_, token) => {
    expect(classifyBearer(token)).toBe('api_token');
  });

  it('classifies any value without the agent prefix and without dots as an API token', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        fc.pre(!s.startsWith('ra_agent_'));
        expect(classifyBearer(s.replace(/\./g, ''))).toBe('api_token');
      }),
    );
  });
});
