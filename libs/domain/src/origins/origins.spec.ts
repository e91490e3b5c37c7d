import fc from 'fast-check';
import { DomainError } from '../errors';
import { originMatches, parseOrigin, validateAllowedOrigin } from './origins';

// Not an `xn--` label: that names a punycode-encoded one, which URL parsing decodes and refuses when
// it is not valid punycode (fast-check found `xn--a`), and which these properties do not make.
const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/).filter((l) => !l.startsWith('xn--'));
const hostname = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => [...labels, 'example'].join('.'));
const port = fc.integer({ min: 1, max: 65535 });
const scheme = fc.constantFrom('http', 'https');
const origin = fc
  .record({ scheme, host: hostname, port: fc.option(port, { nil: undefined }) })
  .map(({ scheme: s, host, port: p }) => `${s}://${host}${p === undefined ? '' : `:${p}`}`);
const randomCase = (s: string, flips: boolean[]) =>
  [...s].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join('');

function refusalReason(input: string, environment: 'sandbox' | 'production'): string {
  try {
    validateAllowedOrigin(input, environment);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    expect((error as DomainError).details).toHaveLength(1);
    expect((error as DomainError).details?.[0].field).toBe('allowed_origin.origin');
    return (error as DomainError).details![0].reason;
  }
  throw new Error(`${input} was accepted for ${environment}`);
}

describe('parseOrigin', () => {
  it.each([
    ['https://example.com', 'https://example.com'],
    ['HTTPS://Example.COM', 'https://example.com'],
    ['http://example.com:80', 'http://example.com'],
    ['https://example.com:443', 'https://example.com'],
    ['http://example.com:443', 'http://example.com:443'],
    ['https://example.com:80', 'https://example.com:80'],
    ['https://example.com:08443', 'https://example.com:8443'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://127.0.0.1:5173', 'http://127.0.0.1:5173'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://[2001:DB8::1]', 'https://[2001:db8::1]'],
    ['https://bücher.de', 'https://xn--bcher-kva.de'],
    ['https://BÜCHER.de', 'https://xn--bcher-kva.de'],
    ['https://xn--bcher-kva.de', 'https://xn--bcher-kva.de'],
  ])('normalises %s to %s', (input, expected) => {
    expect(parseOrigin(input)).toEqual({ ok: true, origin: expected });
  });

  it.each([
    ['https://example.com/', 'origin must not end with a slash'],
    ['https://example.com:8443/', 'origin must not end with a slash'],
    ['https://example.com/app', 'origin must not contain a path'],
    ['https://example.com//', 'origin must not contain a path'],
    ['https://example.com\\app', 'origin must not contain a path'],
    ['https://example.com?x=1', 'origin must not contain a query'],
    ['https://example.com#top', 'origin must not contain a fragment'],
    ['https://user:pw@example.com', 'origin must not contain user information'],
    ['https://user@example.com', 'origin must not contain user information'],
    ['ftp://example.com', 'scheme must be http or https'],
    ['wss://example.com', 'scheme must be http or https'],
    ['example.com', 'origin must have the form scheme://host[:port]'],
    ['//example.com', 'origin must have the form scheme://host[:port]'],
    ['https:example.com', 'origin must have the form scheme://host[:port]'],
    ['null', 'origin must have the form scheme://host[:port]'],
    ['', 'origin must not be empty'],
    [' https://example.com', 'origin must not contain whitespace or control characters'],
    ['https://example.com\n', 'origin must not contain whitespace or control characters'],
    ['https://exa mple.com', 'origin must not contain whitespace or control characters'],
    ['https://example.com\u00a0', 'origin must not contain whitespace or control characters'],
    ['https://', 'host is not valid'],
    ['https://:443', 'host is not valid'],
    ['https://*.example.com', 'host is not valid'],
    ['https://a..b', 'host is not valid'],
    ['https://example.com.', 'host is not valid'],
    ['https://-a.example.com', 'host is not valid'],
    ['https://a_b.example.com', 'host is not valid'],
    ['https://1.2.3.999', 'host is not valid'],
    ['https://[::1', 'host is not valid'],
    ['https://[zz::1]', 'host is not valid'],
    ['https://example.com:', 'port must be between 1 and 65535'],
    ['https://example.com:0', 'port must be between 1 and 65535'],
    ['https://example.com:65536', 'port must be between 1 and 65535'],
    ['https://example.com:-1', 'port must be between 1 and 65535'],
    ['https://example.com:8a', 'port must be between 1 and 65535'],
    ['https://example.com:1:2', 'host is not valid'],
  ])('refuses %j: %s', (input, reason) => {
    expect(parseOrigin(input)).toEqual({ ok: false, reason });
  });

  it('refuses a non-string without throwing', () => {
    expect(parseOrigin(undefined as never)).toEqual({ ok: false, reason: 'origin must be a string' });
  });

  it('normalises any case of a valid origin to its lower-case form, idempotently', () => {
    fc.assert(
      fc.property(origin, fc.array(fc.boolean(), { minLength: 1 }), (o, flips) => {
        const defaultPort = o.startsWith('https') ? ':443' : ':80';
        const expected = o.endsWith(defaultPort) ? o.slice(0, -defaultPort.length) : o;
        const parsed = parseOrigin(randomCase(o, flips));
        expect(parsed).toEqual({ ok: true, origin: expected });
        expect(parseOrigin(expected)).toEqual({ ok: true, origin: expected });
      }),
    );
  });

  it('refuses any valid origin with a path, query, fragment or trailing slash appended', () => {
    fc.assert(
      fc.property(origin, fc.constantFrom('/', '?', '#'), fc.string({ maxLength: 10 }), (o, sep, tail) => {
        expect(parseOrigin(`${o}${sep}${tail}`).ok).toBe(false);
      }),
    );
  });

  it('never throws and always answers a reason or a parseable origin', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), origin.map((o) => o + '/x')), (input) => {
        const result = parseOrigin(input);
        if (result.ok) expect(parseOrigin(result.origin)).toEqual(result);
        else expect(result.reason.length).toBeGreaterThan(0);
      }),
    );
  });
});

describe('validateAllowedOrigin', () => {
  it('returns the normalised origin', () => {
    expect(validateAllowedOrigin('HTTPS://App.Example.com:443', 'production')).toBe('https://app.example.com');
    expect(validateAllowedOrigin('http://LOCALHOST:3000', 'sandbox')).toBe('http://localhost:3000');
    expect(validateAllowedOrigin('http://127.0.0.1', 'sandbox')).toBe('http://127.0.0.1');
    expect(validateAllowedOrigin('https://app.example.com', 'sandbox')).toBe('https://app.example.com');
    expect(validateAllowedOrigin('https://localhost:8443', 'production')).toBe('https://localhost:8443');
  });

  it.each(['http://app.example.com', 'http://localhost', 'http://127.0.0.1:3000'])(
    'refuses plain http for a production application: %s',
    (input) => expect(refusalReason(input, 'production')).toBe('production applications require https origins'),
  );

  it.each(['http://app.example.com', 'http://[::1]', 'http://127.0.0.2', 'http://localhost.example.com'])(
    'refuses plain http off localhost for a sandbox application: %s',
    (input) =>
      expect(refusalReason(input, 'sandbox')).toBe('sandbox applications accept http only for localhost and 127.0.0.1'),
  );

  it('reports the parse failure as the reason', () => {
    expect(refusalReason('https://example.com/', 'sandbox')).toBe('origin must not end with a slash');
    expect(refusalReason('null', 'production')).toBe('origin must have the form scheme://host[:port]');
  });

  it('accepts exactly the https origins in production', () => {
    fc.assert(
      fc.property(origin, (o) => {
        const normalised = (parseOrigin(o) as { origin: string }).origin;
        if (o.startsWith('https://')) expect(validateAllowedOrigin(o, 'production')).toBe(normalised);
        else expect(() => validateAllowedOrigin(o, 'production')).toThrow(DomainError);
      }),
    );
  });
});

describe('originMatches', () => {
  const registered = ['https://app.example.com', 'http://localhost', 'http://127.0.0.1', 'http://localhost:4000'];

  it('matches a registered origin after normalisation', () => {
    expect(originMatches('https://APP.example.com:443', ['https://app.example.com'], 'production')).toBe(true);
    expect(originMatches('https://app.example.com', ['HTTPS://App.Example.com'], 'production')).toBe(true);
    expect(originMatches('https://app.example.com:8443', ['https://app.example.com'], 'production')).toBe(false);
    expect(originMatches('https://other.example.com', ['https://app.example.com'], 'production')).toBe(false);
    expect(originMatches('http://app.example.com', ['https://app.example.com'], 'sandbox')).toBe(false);
  });

  it('lets a sandbox application use localhost and 127.0.0.1 on any port', () => {
    fc.assert(
      fc.property(port, fc.constantFrom('localhost', '127.0.0.1'), (p, host) => {
        expect(originMatches(`http://${host}:${p}`, registered, 'sandbox')).toBe(true);
      }),
    );
    expect(originMatches('http://localhost', registered, 'sandbox')).toBe(true);
  });

  it('does not widen a registration that carries a port, another host, https, or a production application', () => {
    expect(originMatches('http://localhost:5000', ['http://localhost:4000'], 'sandbox')).toBe(false);
    expect(originMatches('http://127.0.0.1:5000', ['http://localhost'], 'sandbox')).toBe(false);
    expect(originMatches('https://localhost:5000', ['https://localhost'], 'sandbox')).toBe(false);
    expect(originMatches('http://localhost:5000', ['http://localhost'], 'production')).toBe(false);
    expect(originMatches('http://[::1]:5000', ['http://[::1]'], 'sandbox')).toBe(false);
  });

  it('never matches plain http for a production application, even if registered', () => {
    expect(originMatches('http://app.example.com', ['http://app.example.com'], 'production')).toBe(false);
    expect(originMatches('http://app.example.com', ['http://app.example.com'], 'sandbox')).toBe(true);
  });

  it.each(['null', '', 'https://app.example.com/', 'https://app.example.com/path', 'file://', '*'])(
    'never matches the malformed request origin %j',
    (request) => {
      expect(originMatches(request, [...registered, request], 'sandbox')).toBe(false);
      expect(originMatches(request, [...registered, request], 'production')).toBe(false);
    },
  );

  it('skips malformed registrations', () => {
    expect(originMatches('https://app.example.com', ['not an origin', 'https://app.example.com'], 'production')).toBe(true);
    expect(originMatches('https://app.example.com', ['not an origin'], 'production')).toBe(false);
    expect(originMatches('https://app.example.com', [], 'production')).toBe(false);
  });

  it('matches exactly when the normalised origins are equal (outside the localhost rule)', () => {
    fc.assert(
      fc.property(origin, origin, fc.constantFrom<'sandbox' | 'production'>('sandbox', 'production'), (a, b, env) => {
        const na = (parseOrigin(a) as { origin: string }).origin;
        const nb = (parseOrigin(b) as { origin: string }).origin;
        const httpsOrSandbox = env === 'sandbox' || na.startsWith('https://');
        expect(originMatches(a, [b], env)).toBe(na === nb && httpsOrSandbox);
        expect(originMatches(a, [a.toUpperCase()], env)).toBe(httpsOrSandbox);
      }),
    );
  });
});
