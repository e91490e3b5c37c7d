import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateReceiptSigningKey, signReceipt, type ReceiptSigningKey, type SignedReceipt } from '../flavors/signed';
import fixture from '../flavors/__fixtures__/consent-receipt.json';
import { USAGE, main, type CliOutput } from './cli';
import { receiptJwks, receiptKeyHistoryEntry } from './published-keys';

function capture(): CliOutput & { out: string; err: string } {
  const sink = {
    out: '',
    err: '',
    stdout: (text: string) => {
      sink.out += text;
    },
    stderr: (text: string) => {
      sink.err += text;
    },
  };
  return sink;
}

describe('dcr-receipt-verify', () => {
  let dir: string;
  let key: ReceiptSigningKey;
  let retired: ReceiptSigningKey;
  let signed: SignedReceipt;
  let fetchSpy: jest.SpyInstance;
  const path = (name: string) => join(dir, name);
  const writeJson = (name: string, value: unknown) => writeFile(path(name), JSON.stringify(value, null, 2));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dcr-receipt-verify-'));
    key = await generateReceiptSigningKey('EdDSA');
    retired = await generateReceiptSigningKey('ES256');
    signed = await signReceipt(JSON.parse(JSON.stringify(fixture)) as Record<string, unknown>, key);
    await writeJson('signed.json', signed);
    await writeJson('jwks.json', receiptJwks([key]));
    const tampered = JSON.parse(JSON.stringify(signed)) as SignedReceipt;
    (tampered.payload.record as Record<string, unknown>).pii_principal_id = 'prn_someone_else';
    await writeJson('tampered.json', tampered);
    await writeJson('old.json', await signReceipt(JSON.parse(JSON.stringify(fixture)) as Record<string, unknown>, retired, { signedAt: new Date('2025-04-12T16:20:05Z') }));
    await writeJson('witness-configuration.json', {
      receipt_keys: [receiptKeyHistoryEntry(retired, '2025-01-01T00:00:00Z', '2025-06-01T00:00:00Z'), receiptKeyHistoryEntry(key, '2025-06-01T00:00:00Z')],
    });
    await writeFile(path('not-json.json'), '{"payload": ');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    fetchSpy = jest.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('the verifier must not fetch'));
  });
  afterEach(() => {
    expect(fetchSpy).not.toHaveBeenCalled();
    fetchSpy.mockRestore();
  });

  it('prints VALID with the kid and alg and exits 0', async () => {
    const io = capture();
    await expect(main([path('signed.json'), '--jwks', path('jwks.json')], io)).resolves.toBe(0);
    expect(io.out).toBe(`VALID (kid ${key.kid}, alg EdDSA)\n`);
    expect(io.err).toBe('');
  });

  it('prints INVALID with the reason and exits 1 for a tampered receipt', async () => {
    const io = capture();
    await expect(main([path('tampered.json'), `--jwks=${path('jwks.json')}`], io)).resolves.toBe(1);
    expect(io.out).toBe(`INVALID: the signature does not match the payload and protected header (kid ${key.kid}, EdDSA)\n`);
  });

  it('answers in JSON with --json', async () => {
    const valid = capture();
    await main(['--json', path('signed.json'), '--jwks', path('jwks.json')], valid);
    expect(JSON.parse(valid.out)).toEqual({ valid: true, kid: key.kid, alg: 'EdDSA' });
    const invalid = capture();
    await expect(main([path('tampered.json'), '--jwks', path('jwks.json'), '--json'], invalid)).resolves.toBe(1);
    expect(JSON.parse(invalid.out)).toMatchObject({ valid: false, code: 'bad_signature' });
  });

  it('verifies a receipt of a rotated key with the witness configuration', async () => {
    const withoutHistory = capture();
    await expect(main([path('old.json'), '--jwks', path('jwks.json')], withoutHistory)).resolves.toBe(1);
    expect(withoutHistory.out).toBe(`INVALID: no key with kid ${retired.kid} in the supplied JWKS or key history\n`);
    const withHistory = capture();
    await expect(main([path('old.json'), '--jwks', path('jwks.json'), '--keys', path('witness-configuration.json')], withHistory)).resolves.toBe(0);
    expect(withHistory.out).toBe(`VALID (kid ${retired.kid}, alg ES256)\n`);
    const historyOnly = capture();
    await expect(main([path('old.json'), '--keys', path('witness-configuration.json')], historyOnly)).resolves.toBe(0);
  });

  it('reports a receipt file that is not JSON as INVALID', async () => {
    const io = capture();
    await expect(main([path('not-json.json'), '--jwks', path('jwks.json'), '--json'], io)).resolves.toBe(1);
    expect(JSON.parse(io.out)).toMatchObject({ valid: false, code: 'malformed', reason: expect.stringContaining('is not JSON') });
  });

  it.each([
    ['no arguments', []],
    ['no keys', ['signed.json']],
    ['two receipts', ['signed.json', 'tampered.json', '--jwks', 'jwks.json']],
    ['an unknown option', ['signed.json', '--jwks', 'jwks.json', '--fetch']],
    ['--jwks without a path', ['signed.json', '--jwks']],
    ['--jwks twice', ['signed.json', '--jwks', 'jwks.json', '--jwks', 'jwks.json']],
  ])('exits 2 with the usage on %s', async (_case, args) => {
    const io = capture();
    await expect(main(args.map((arg) => (arg.endsWith('.json') ? path(arg) : arg)), io)).resolves.toBe(2);
    expect(io.out).toBe('');
    expect(io.err).toContain(USAGE);
  });

  it('exits 2 when a file cannot be read or a key file is not JSON', async () => {
    const missing = capture();
    await expect(main([path('absent.json'), '--jwks', path('jwks.json')], missing)).resolves.toBe(2);
    expect(missing.err).toBe(`dcr-receipt-verify: cannot read ${path('absent.json')}: ENOENT\n`);
    const badKeys = capture();
    await expect(main([path('signed.json'), '--jwks', path('not-json.json')], badKeys)).resolves.toBe(2);
    expect(badKeys.err).toMatch(/not-json\.json is not JSON/);
  });

  it('prints the usage and exits 0 on --help', async () => {
    const io = capture();
    await expect(main(['--help'], io)).resolves.toBe(0);
    expect(io.out).toBe(USAGE);
  });

  it('ships an executable bin that runs the built CLI', async () => {
    const bin = join(__dirname, '../../bin/dcr-receipt-verify.js');
    const text = await readFile(bin, 'utf8');
    expect(text.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(text).toContain("require('../dist/verify/cli.js').main(process.argv.slice(2))");
    expect((await stat(bin)).mode & 0o111).not.toBe(0);
  });
});
