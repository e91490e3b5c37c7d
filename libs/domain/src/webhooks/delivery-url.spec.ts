import fc from 'fast-check';
import { DomainError } from '../errors';
import { validateWebhookUrl } from './delivery-url';

const production = { environment: 'production' } as const;
/** A sandbox application where the service runs on the developer's machine. */
const sandbox = { environment: 'sandbox', localTargets: true } as const;
/** A sandbox application of a production deployment. */
const sandboxInProduction = { environment: 'sandbox', localTargets: false } as const;

function refusalReason(input: string, policy: { environment: 'sandbox' | 'production'; localTargets?: boolean }): string {
  try {
    validateWebhookUrl(input, policy);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    expect((error as DomainError).details).toHaveLength(1);
    expect((error as DomainError).details![0].field).toBe('url');
    return (error as DomainError).details![0].reason;
  }
  throw new Error(`${input} was accepted for ${policy.environment}`);
}

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);
const publicHost = fc.array(label, { minLength: 1, maxLength: 3 }).map((labels) => [...labels, 'example', 'com'].join('.'));
const path = fc.array(fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/), { maxLength: 3 }).map((p) => `/${p.join('/')}`);
const query = fc.option(fc.stringMatching(/^[a-z]{1,5}=[a-z0-9]{0,5}$/), { nil: undefined }).map((q) => (q ? `?${q}` : ''));
const httpsUrl = fc
  .record({ host: publicHost, port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }), path, query })
  .map(({ host, port, path: p, query: q }) => `https://${host}${port === undefined ? '' : `:${port}`}${p}${q}`);

describe('validateWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/dcr', 'https://hooks.example.com/dcr'],
    ['HTTPS://Hooks.Example.COM:443/Path?A=1', 'https://hooks.example.com/Path?A=1'],
    ['https://hooks.example.com', 'https://hooks.example.com/'],
    ['https://hooks.example.com:8443/x', 'https://hooks.example.com:8443/x'],
    ['https://bücher.example/hook', 'https://xn--bcher-kva.example/hook'],
    ['https://hooks.example.com/a b'.replace(' ', '%20'), 'https://hooks.example.com/a%20b'],
    ['https://8.8.8.8/hook', 'https://8.8.8.8/hook'],
    ['https://[2606:4700:4700::1111]/hook', 'https://[2606:4700:4700::1111]/hook'],
    ['https://my_host.example.com/', 'https://my_host.example.com/'],
  ])('accepts %s for production as %s', (input, expected) => {
    expect(validateWebhookUrl(input, production)).toBe(expected);
    expect(validateWebhookUrl(input, sandbox)).toBe(expected);
  });

  it.each([
    ['http://127.0.0.1:3000/hook', 'http://127.0.0.1:3000/hook'],
    ['http://localhost/hook', 'http://localhost/hook'],
    ['http://LOCALHOST:8080', 'http://localhost:8080/'],
    ['http://[::1]:9000/hook', 'http://[::1]:9000/hook'],
    ['https://localhost:8443/hook', 'https://localhost:8443/hook'],
    ['https://10.0.0.5/hook', 'https://10.0.0.5/hook'],
    ['https://intranet/hook', 'https://intranet/hook'],
  ])('accepts %s for sandbox as %s', (input, expected) => {
    expect(validateWebhookUrl(input, sandbox)).toBe(expected);
  });

  it.each([
    ['', 'url must not be empty'],
    ['hooks.example.com/x', 'url must be absolute, starting with https:// or http://'],
    ['//hooks.example.com/x', 'url must be absolute, starting with https:// or http://'],
    ['https:hooks.example.com', 'url must be absolute, starting with https:// or http://'],
    ['/relative/path', 'url must be absolute, starting with https:// or http://'],
    ['ftp://hooks.example.com/', 'url scheme must be https or http'],
    ['javascript://alert(1)', 'url scheme must be https or http'],
    ['https://user:pw@hooks.example.com/', 'url must not contain credentials'],
    ['https://user@hooks.example.com/', 'url must not contain credentials'],
    ['https://@hooks.example.com/', 'url must not contain credentials'],
    ['https://hooks.example.com/#x', 'url must not contain a fragment'],
    ['https://hooks.example.com/#', 'url must not contain a fragment'],
    ['https://hooks.example.com\\@evil.example/', 'url must not contain backslashes'],
    [' https://hooks.example.com/', 'url must not contain whitespace or control characters'],
    ['https://hooks.example.com/a b', 'url must not contain whitespace or control characters'],
    ['https://hooks.example.com/\n', 'url must not contain whitespace or control characters'],
    ['https://hooks.example.com:99999/', 'url is not a valid URL'],
    ['https://hooks.example.com:0/', 'url port must be between 1 and 65535'],
    ['https://*.example.com/', 'url host is not valid'],
    ['https://hooks.example.com./', 'url host is not valid'],
    ['https://-a.example.com/', 'url host is not valid'],
    ['https://a..b/', 'url host is not valid'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'url must be at most 2048 characters'],
  ])('refuses %j in every environment: %s', (input, reason) => {
    expect(refusalReason(input, production)).toBe(reason);
    expect(refusalReason(input, sandbox)).toBe(reason);
  });

  it.each([
    ['http://hooks.example.com/', 'production webhooks require an https URL'],
    ['http://127.0.0.1/', 'production webhooks require an https URL'],
    ['https://localhost/', 'production webhooks cannot be delivered to localhost'],
    ['https://LocalHost:8443/', 'production webhooks cannot be delivered to localhost'],
    ['https://api.localhost/', 'production webhooks cannot be delivered to localhost'],
    ['https://127.0.0.1/', 'production webhooks cannot be delivered to loopback addresses'],
    ['https://0x7f.1/', 'production webhooks cannot be delivered to loopback addresses'],
    ['https://2130706433/', 'production webhooks cannot be delivered to loopback addresses'],
    ['https://0/', 'production webhooks cannot be delivered to unspecified ("this network") addresses'],
    ['https://10.0.0.1/', 'production webhooks cannot be delivered to private addresses'],
    ['https://172.20.1.1/', 'production webhooks cannot be delivered to private addresses'],
    ['https://192.168.0.10/', 'production webhooks cannot be delivered to private addresses'],
    ['https://100.100.1.1/', 'production webhooks cannot be delivered to shared address space (CGNAT) addresses'],
    ['https://169.254.169.254/latest/meta-data', 'production webhooks cannot be delivered to link-local addresses'],
    ['https://192.0.2.1/', 'production webhooks cannot be delivered to documentation addresses'],
    ['https://224.0.0.1/', 'production webhooks cannot be delivered to multicast addresses'],
    ['https://[::1]/', 'production webhooks cannot be delivered to unspecified, loopback or IPv4-compatible addresses'],
    ['https://[::ffff:127.0.0.1]/', 'production webhooks cannot be delivered to loopback (embedded IPv4) addresses'],
    ['https://[fd00::1]/', 'production webhooks cannot be delivered to unique-local addresses'],
    ['https://[fe80::1]/', 'production webhooks cannot be delivered to link-local addresses'],
    ['https://[ff02::1]/', 'production webhooks cannot be delivered to multicast addresses'],
    ['https://[2001:db8::1]/', 'production webhooks cannot be delivered to documentation addresses'],
    ['https://intranet/', 'production webhooks need a fully qualified host name'],
  ])('refuses %s for production: %s', (input, reason) => {
    expect(refusalReason(input, production)).toBe(reason);
  });

  it.each(['http://hooks.example.com/', 'http://127.0.0.2/', 'http://10.0.0.1/', 'http://api.localhost/', 'http://[::2]/'])(
    'refuses plain http off the developer machine for sandbox: %s',
    (input) => expect(refusalReason(input, sandbox)).toBe('sandbox webhooks accept http only for 127.0.0.1, [::1] and localhost'),
  );

  it('lets sandbox use plain http to 127.0.0.1, [::1] and localhost on any port and path', () => {
    fc.assert(
      fc.property(fc.constantFrom('127.0.0.1', '[::1]', 'localhost'), fc.integer({ min: 1, max: 65535 }), path, (host, port, p) => {
        expect(validateWebhookUrl(`http://${host}:${port}${p}`, sandbox)).toBe(new URL(`http://${host}:${port}${p}`).href);
        expect(() => validateWebhookUrl(`http://${host}:${port}${p}`, production)).toThrow(DomainError);
      }),
    );
  });

  it('accepts public https URLs in both environments, idempotently', () => {
    fc.assert(
      fc.property(httpsUrl, (input) => {
        const normalised = validateWebhookUrl(input, production);
        expect(validateWebhookUrl(input, sandbox)).toBe(normalised);
        expect(validateWebhookUrl(normalised, production)).toBe(normalised);
      }),
    );
  });

  it('refuses any public https URL with a fragment or credentials added', () => {
    fc.assert(
      fc.property(httpsUrl, fc.stringMatching(/^[a-z]{0,5}$/), (input, extra) => {
        expect(() => validateWebhookUrl(`${input}#${extra}`, production)).toThrow(DomainError);
        expect(() => validateWebhookUrl(input.replace('https://', `https://${extra}@`), production)).toThrow(DomainError);
      }),
    );
  });

  it('treats an unknown environment as production', () => {
    expect(() => validateWebhookUrl('http://localhost/', { environment: 'staging' as never })).toThrow(DomainError);
  });

  it('only ever throws DomainError and only ever answers http(s) URLs', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl({ withFragments: true, withQueryParameters: true })), fc.constantFrom(production, sandbox), (input, policy) => {
        try {
          expect(validateWebhookUrl(input, policy)).toMatch(/^https?:\/\//);
        } catch (error) {
          expect(error).toBeInstanceOf(DomainError);
        }
      }),
    );
  });

  it.each([
    ['http://127.0.0.1:4000/hooks', 'webhooks of a production deployment require an https URL'],
    ['https://169.254.169.254/latest/', 'webhooks of a production deployment cannot be delivered to link-local addresses'],
    ['https://10.0.0.1/', 'webhooks of a production deployment cannot be delivered to private addresses'],
    ['https://2130706433/', 'webhooks of a production deployment cannot be delivered to loopback addresses'],
    ['https://[fd00::1]/', 'webhooks of a production deployment cannot be delivered to unique-local addresses'],
    ['https://intranet/', 'webhooks of a production deployment need a fully qualified host name'],
    ['https://localhost:8443/', 'webhooks of a production deployment cannot be delivered to localhost'],
  ])('gives a sandbox application of a production deployment the production rule: %s', (input, reason) => {
    expect(refusalReason(input, sandboxInProduction)).toBe(reason);
    // On the developer's machine the same sandbox application may reach its own receivers.
    if (input.startsWith('http://127.0.0.1') || input.startsWith('https://10.')) expect(() => validateWebhookUrl(input, sandbox)).not.toThrow();
  });

  it('takes a public https URL from a sandbox application of a production deployment', () => {
    expect(validateWebhookUrl('https://hooks.example.com/in', sandboxInProduction)).toBe('https://hooks.example.com/in');
  });
});
