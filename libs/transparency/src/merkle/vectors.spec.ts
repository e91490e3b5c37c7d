import * as fs from 'node:fs';
import * as path from 'node:path';
import { verifyConsistency, verifyInclusion } from './verify';
import { verifySubtreeConsistency, verifySubtreeInclusion } from './subtree';

// transparency-dev/merkle's testdata (see README.md there): every JSON file is one case, happy or corrupted.
// The repository carries a copy (libs/transparency/testdata, Apache-2.0, LICENSE beside it) so the
// suite runs wherever it is checked out; where the workplace's shared copy exists, the two must match.
const TESTDATA = path.resolve(__dirname, '../../testdata/merkle');
const SHARED_TESTDATA = path.resolve(__dirname, '../../../../../shared/testdata/merkle');

type Vector = Record<string, unknown> & { wantErr: boolean };

function jsonFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return jsonFiles(full);
      return entry.name.endsWith('.json') ? [full] : [];
    })
    .sort();
}

function load(category: string): Array<[string, Vector]> {
  return jsonFiles(path.join(TESTDATA, category)).map((file) => [
    path.relative(TESTDATA, file),
    JSON.parse(fs.readFileSync(file, 'utf8')) as Vector,
  ]);
}

const b64 = (value: unknown): Buffer => Buffer.from(value as string, 'base64');
// A null proof in the Go vectors is an empty one.
const proofOf = (v: Vector): Buffer[] => ((v.proof as string[] | null) ?? []).map(b64);
// Sizes beyond 2^53 (e.g. a wrapped uint64 "leafIdx - 1") parse to unsafe numbers, which verifiers reject.
const num = (value: unknown): number => value as number;

const verifiers: Record<string, (v: Vector) => boolean> = {
  inclusion: (v) => verifyInclusion(num(v.leafIdx), num(v.treeSize), b64(v.leafHash), proofOf(v), b64(v.root)),
  consistency: (v) => verifyConsistency(num(v.size1), num(v.size2), proofOf(v), b64(v.root1), b64(v.root2)),
  subtreeinclusion: (v) =>
    verifySubtreeInclusion(num(v.leafIdx), num(v.start), num(v.end), b64(v.leafHash), proofOf(v), b64(v.root)),
  subtreeconsistency: (v) =>
    verifySubtreeConsistency(num(v.start), num(v.end), num(v.size), proofOf(v), b64(v.root1), b64(v.root2)),
};

const cases = Object.fromEntries(Object.keys(verifiers).map((category) => [category, load(category)]));

describe('transparency-dev/merkle test vectors', () => {
  it('finds every vector file, all in a known category', () => {
    const all = jsonFiles(TESTDATA);
    const categorised = Object.values(cases).reduce((sum, list) => sum + list.length, 0);
    expect(all.length).toBeGreaterThan(500);
    expect(categorised).toBe(all.length);
    for (const list of Object.values(cases)) {
      expect(list.filter(([, v]) => !v.wantErr).length).toBeGreaterThan(0);
      expect(list.filter(([, v]) => v.wantErr).length).toBeGreaterThan(0);
    }
  });

  const sharedCopy = fs.existsSync(SHARED_TESTDATA) ? it : it.skip;
  sharedCopy('is the same set as the shared testdata of this workplace', () => {
    const relative = (root: string) => jsonFiles(root).map((file) => path.relative(root, file));
    expect(relative(TESTDATA)).toEqual(relative(SHARED_TESTDATA));
    for (const file of relative(SHARED_TESTDATA)) {
      expect(fs.readFileSync(path.join(TESTDATA, file), 'utf8')).toBe(fs.readFileSync(path.join(SHARED_TESTDATA, file), 'utf8'));
    }
  });

  describe.each(Object.keys(verifiers))('%s', (category) => {
    it.each(cases[category])('%s', (_file, vector) => {
      expect(typeof vector.wantErr).toBe('boolean');
      expect(verifiers[category](vector)).toBe(!vector.wantErr);
    });
  });
});
