import fc from 'fast-check';
import { formatCheckpoint, parseCheckpoint, type Checkpoint } from './checkpoint';
import { NoteError } from './errors';

// The c2sp.org/tlog-checkpoint example body.
const EXAMPLE = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
const HASH = 'CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NoteError);
    return (e as NoteError).code;
  }
  return 'no error';
}

describe('parseCheckpoint', () => {
  it('parses the spec example', () => {
    const c = parseCheckpoint(EXAMPLE);
    expect(c.origin).toBe('example.com/behind-the-sofa');
    expect(c.size).toBe(20852163);
    expect(c.rootHash.toString('base64')).toBe(HASH);
    expect(c.extensions).toEqual([]);
    expect(formatCheckpoint(c)).toBe(EXAMPLE);
  });

  it('keeps extension lines and an opaque origin', () => {
    const body = `origin with spaces+plus\n0\n${HASH}\next one\next two\n`;
    expect(parseCheckpoint(body)).toMatchObject({ origin: 'origin with spaces+plus', size: 0, extensions: ['ext one', 'ext two'] });
  });

  it.each([
    ['empty body', ''],
    ['no final newline', EXAMPLE.slice(0, -1)],
    ['only two lines', `o\n1\n`],
    ['empty origin', `\n1\n${HASH}\n`],
    ['empty size', `o\n\n${HASH}\n`],
    ['leading zero in size', `o\n01\n${HASH}\n`],
    ['"00" size', `o\n00\n${HASH}\n`],
    ['negative size', `o\n-1\n${HASH}\n`],
    ['plus sign in size', `o\n+1\n${HASH}\n`],
    ['space in size', `o\n 1\n${HASH}\n`],
    ['hex size', `o\n0x10\n${HASH}\n`],
    ['exponent size', `o\n1e3\n${HASH}\n`],
    ['size above 2^53-1', `o\n9007199254740992\n${HASH}\n`],
    ['31-byte hash', `o\n1\n${Buffer.alloc(31).toString('base64')}\n`],
    ['33-byte hash', `o\n1\n${Buffer.alloc(33).toString('base64')}\n`],
    ['hash without padding', `o\n1\n${HASH.slice(0, -1)}\n`],
    ['hash in base64url', `o\n1\n${Buffer.alloc(32, 0xff).toString('base64url')}=\n`],
    ['hash with trailing space', `o\n1\n${HASH} \n`],
    ['empty extension line', `o\n1\n${HASH}\n\next\n`],
    ['trailing blank line', `o\n1\n${HASH}\n\n`],
    ['carriage return', `o\r\n1\n${HASH}\n`],
    ['control character in origin', `o\u0000\n1\n${HASH}\n`],
  ])('refuses %s', (_name, body) => {
    expect(code(() => parseCheckpoint(body))).toBe('malformed');
  });
});

describe('formatCheckpoint', () => {
  const good: Checkpoint = { origin: 'o', size: 1, rootHash: Buffer.alloc(32), extensions: [] };
  it.each<[string, Partial<Checkpoint>]>([
    ['an empty origin', { origin: '' }],
    ['a newline in the origin', { origin: 'a\nb' }],
    ['a negative size', { size: -1 }],
    ['a fractional size', { size: 1.5 }],
    ['an unsafe size', { size: 2 ** 53 }],
    ['a short hash', { rootHash: Buffer.alloc(31) }],
    ['an empty extension', { extensions: [''] }],
    ['a newline in an extension', { extensions: ['a\nb'] }],
  ])('refuses %s', (_name, patch) => {
    expect(code(() => formatCheckpoint({ ...good, ...patch }))).toBe('malformed');
  });
});

describe('properties', () => {
  const line = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => !/[\u0000-\u001f]/.test(s));
  const checkpoint = fc.record({
    origin: line,
    size: fc.maxSafeNat(),
    rootHash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b)),
    extensions: fc.array(line, { maxLength: 3 }),
  });

  it('parseCheckpoint(formatCheckpoint(c)) equals c', () => {
    fc.assert(
      fc.property(checkpoint, (c) => {
        expect(parseCheckpoint(formatCheckpoint(c))).toEqual(c);
      }),
    );
  });

  it('formatCheckpoint(parseCheckpoint(body)) equals body for every body that parses', () => {
    const body = fc.array(fc.oneof(line, fc.constantFrom('0', '10', HASH, '')), { minLength: 3, maxLength: 5 }).map((ls) => ls.join('\n') + '\n');
    fc.assert(
      fc.property(body, (b) => {
        let c: Checkpoint;
        try {
          c = parseCheckpoint(b);
        } catch {
          return;
        }
        expect(formatCheckpoint(c)).toBe(b);
      }),
    );
  });
});
