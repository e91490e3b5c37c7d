import fc from 'fast-check';
import { formatCheckpoint } from './checkpoint';
import { cosignerFromSeed, verifyCosignature } from './cosignature';
import { NoteError } from './errors';
import { noteSignerFromSeed, parseVerifierKey } from './keys';
import { openNote, signNote } from './signed-note';
import {
  TLOG_SIZE_CONTENT_TYPE,
  WitnessStatus,
  formatAddCheckpointRequest,
  formatCosignatureResponse,
  formatTreeSizeBody,
  parseAddCheckpointRequest,
  parseCosignatureResponse,
  parseTreeSizeBody,
  type AddCheckpointRequest,
} from './witness-protocol';

// c2sp.org/tlog-witness example bodies.
const CHECKPOINT_NOTE =
  'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n' +
  '\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n' +
  '\u2014 example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n';
const PROOF = [
  'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=',
  'jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=',
  '5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=',
  '/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=',
];
const REQUEST = `old 20852014\n${PROOF.map((p) => p + '\n').join('')}\n${CHECKPOINT_NOTE}`;
const RESPONSE =
  '\u2014 witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVjyQLrdk3DXDqI5G2HgLatVs0pWh6Up69HVOw==\n' +
  '\u2014 witness.example/w1 I7rEps0pvK2UqkS2gSpVUDhrhVtQV9lgF6pRrWAvjJHjyWpW7VcE3SiOlVlbQNt64vWhO+DlkL0+UfzuOBMh9ChdMkP1vi/lCAsmlw==\n' +
  '\u2014 witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYKA7nC3HNJhm/kWl7oJlqU3rXXvpysAdyP3wQ==\n';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NoteError);
    return (e as NoteError).code;
  }
  return 'no error';
}

describe('add-checkpoint request', () => {
  it('parses and re-formats the spec example', () => {
    const r = parseAddCheckpointRequest(REQUEST);
    expect(r.oldSize).toBe(20852014);
    expect(r.consistencyProof.map((h) => h.toString('base64'))).toEqual(PROOF);
    expect(r.checkpointNote).toBe(CHECKPOINT_NOTE);
    expect(formatAddCheckpointRequest(r)).toBe(REQUEST);
  });

  it('accepts old size 0 with an empty proof', () => {
    const body = `old 0\n\n${CHECKPOINT_NOTE}`;
    expect(parseAddCheckpointRequest(body)).toEqual({ oldSize: 0, consistencyProof: [], checkpointNote: CHECKPOINT_NOTE });
  });

  const proof = (n: number) => Array.from({ length: n }, () => PROOF[0] + '\n').join('');
  it('accepts 63 proof lines', () => {
    expect(parseAddCheckpointRequest(`old 1\n${proof(63)}\n${CHECKPOINT_NOTE}`).consistencyProof).toHaveLength(63);
  });

  it.each([
    ['empty body', ''],
    ['no blank line', `old 1\n${CHECKPOINT_NOTE}`],
    ['missing old line', `\n${CHECKPOINT_NOTE}`],
    ['"old" without size', `old\n\n${CHECKPOINT_NOTE}`],
    ['two spaces after old', `old  1\n\n${CHECKPOINT_NOTE}`],
    ['capitalised Old', `Old 1\n\n${CHECKPOINT_NOTE}`],
    ['leading zero in old size', `old 01\n\n${CHECKPOINT_NOTE}`],
    ['negative old size', `old -1\n\n${CHECKPOINT_NOTE}`],
    ['old size above checkpoint size', `old 20852164\n\n${CHECKPOINT_NOTE}`],
    ['proof with old size 0', `old 0\n${PROOF[0]}\n\n${CHECKPOINT_NOTE}`],
    ['64 proof lines', `old 1\n${proof(64)}\n${CHECKPOINT_NOTE}`],
    ['proof line not base64', `old 1\nnot base64!\n\n${CHECKPOINT_NOTE}`],
    ['proof hash of 31 bytes', `old 1\n${Buffer.alloc(31).toString('base64')}\n\n${CHECKPOINT_NOTE}`],
    ['CRLF line endings', `old 1\r\n\r\n${CHECKPOINT_NOTE}`],
    ['unsigned checkpoint', `old 1\n\nexample.com/x\n2\n${PROOF[0]}\n`],
    ['checkpoint with bad size', `old 1\n\n${CHECKPOINT_NOTE.replace('20852163', '020852163')}`],
    ['note text not a checkpoint', `old 0\n\nhello\n\n${CHECKPOINT_NOTE.split('\n\n')[1]}`],
  ])('refuses %s', (_name, body) => {
    expect(code(() => parseAddCheckpointRequest(body))).toBe('malformed');
  });

  it.each<[string, Partial<AddCheckpointRequest>]>([
    ['a fractional old size', { oldSize: 1.5 }],
    ['a proof from size 0', { oldSize: 0 }],
    ['a short proof hash', { consistencyProof: [Buffer.alloc(31)] }],
    ['an unsigned checkpoint', { checkpointNote: 'example.com/x\n2\n' + PROOF[0] + '\n' }],
  ])('formatAddCheckpointRequest refuses %s', (_name, patch) => {
    const good = parseAddCheckpointRequest(REQUEST);
    expect(code(() => formatAddCheckpointRequest({ ...good, ...patch }))).toBe('malformed');
  });

  it('round trips (property)', () => {
    const signer = noteSignerFromSeed('example.com/log', Buffer.alloc(32, 3));
    const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b));
    const request = fc
      .record({ size: fc.maxSafeNat(), old: fc.maxSafeNat(), root: hash, proof: fc.array(hash, { maxLength: 63 }) })
      .map(({ size, old, root, proof }): AddCheckpointRequest => {
        const oldSize = Math.min(old, size);
        const note = signNote(formatCheckpoint({ origin: 'example.com/log', size, rootHash: root, extensions: [] }), [signer]);
        return { oldSize, consistencyProof: oldSize === 0 ? [] : proof, checkpointNote: note };
      });
    fc.assert(
      fc.property(request, (r) => {
        expect(parseAddCheckpointRequest(formatAddCheckpointRequest(r))).toEqual(r);
      }),
      { numRuns: 50 },
    );
  });
});

describe('cosignature response', () => {
  it('parses and re-formats the spec example', () => {
    const sigs = parseCosignatureResponse(RESPONSE);
    expect(sigs.map((s) => s.name)).toEqual(['witness.example/w1', 'witness.example/w1', 'witness.example/w2']);
    expect(formatCosignatureResponse(sigs)).toBe(RESPONSE);
  });

  it.each([
    ['empty body', ''],
    ['no final newline', RESPONSE.slice(0, -1)],
    ['blank line', `${RESPONSE}\n`],
    ['line without em dash', `${RESPONSE}witness.example/w3 AAAAAAA=\n`],
    ['101 lines', RESPONSE.split('\n')[0].concat('\n').repeat(101)],
    ['control character', RESPONSE.replace('w2', 'w\u00012')],
  ])('refuses %s', (_name, body) => {
    expect(code(() => parseCosignatureResponse(body))).toBe('malformed');
  });

  it('refuses to format an empty response', () => {
    expect(code(() => formatCosignatureResponse([]))).toBe('malformed');
  });

  it('carries a witness cosignature a client can check, alone or appended to the note', () => {
    const log = noteSignerFromSeed('example.com/log', Buffer.alloc(32, 4));
    const witness = cosignerFromSeed('witness.example/w1', Buffer.alloc(32, 5));
    const body = formatCheckpoint({ origin: 'example.com/log', size: 10, rootHash: Buffer.alloc(32, 6), extensions: [] });
    const note = signNote(body, [log]);
    const response = formatCosignatureResponse([witness.cosign(body, 1700000000)]);
    const verifier = parseVerifierKey(witness.verifierKey);
    const [sig] = parseCosignatureResponse(response);
    expect(verifyCosignature(verifier, body, sig)).toEqual({ timestamp: 1700000000 });
    // The spec's suggestion: concatenate to the checkpoint and open with the witness keys.
    expect(openNote(note + response, [verifier]).verified.map((s) => s.name)).toEqual(['witness.example/w1']);
  });
});

describe('status codes and the 409 body', () => {
  it('names the protocol status codes', () => {
    expect(WitnessStatus).toEqual({ ok: 200, malformed: 400, unknownLogKey: 403, unknownOrigin: 404, conflict: 409, badProof: 422 });
    expect(TLOG_SIZE_CONTENT_TYPE).toBe('text/x.tlog.size');
  });

  it('formats and parses the tree size body strictly', () => {
    expect(formatTreeSizeBody(20852014)).toBe('20852014\n');
    expect(parseTreeSizeBody('0\n')).toBe(0);
    for (const bad of ['', '1', '01\n', '1\n\n', ' 1\n', '-1\n', '1\r\n']) expect(code(() => parseTreeSizeBody(bad))).toBe('malformed');
    fc.assert(fc.property(fc.maxSafeNat(), (n) => parseTreeSizeBody(formatTreeSizeBody(n)) === n));
  });
});
