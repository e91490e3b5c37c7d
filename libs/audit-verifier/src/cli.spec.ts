import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from './cli';
import { buildAnchor, standardScene } from './testing/export-builder';
import { AuditExport, verifyAuditExport } from './verify-export';

describe('dcr-audit-verify', () => {
  let dir: string;
  let scene: Awaited<ReturnType<typeof standardScene>>;
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return path;
  };
  let good: string;
  let tampered: string;
  let unwitnessed: string;
  let keysXA: string;
  let keysXB: string;

  /** Runs main and returns its exit status and every line it printed. */
  function run(...args: string[]): { status: number; lines: string[] } {
    const lines: string[] = [];
    const status = main(args, (line) => lines.push(line));
    return { status, lines };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dcr-audit-verify-'));
    scene = await standardScene();
    good = file('export.json', scene.exported);
    const edited = JSON.parse(JSON.stringify(scene.exported)) as AuditExport;
    edited.entries[3].payload_digest = 'f'.repeat(64);
    tampered = file('tampered.json', edited);
    const bare = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: scene.tree.roots[12], logSigners: [scene.log.logSigner] });
    unwitnessed = file('unwitnessed.json', { ...scene.exported, anchor: bare });
    keysXA = file('keys-xa.json', scene.log.configuration);
    keysXB = file('keys-xb.json', scene.witness.configuration);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0 and prints a VALID line for a good export', () => {
    const { status, lines } = run(good, '--keys', keysXA, '--keys', keysXB);
    expect(status).toBe(0);
    expect(lines).toEqual([
      `VALID: 7 entries of app-a in XA, 7 proven in anchor ${scene.anchor.id}`,
      `anchor tree_size 12, signed by ${scene.log.origin}, witnesses: ${scene.witness.cosigner.name}`,
    ]);
  });

  it('exits 1 and names the first bad entry\'s seq for a tampered export', () => {
    const { status, lines } = run(tampered, '--keys', keysXA, '--keys', keysXB);
    expect(status).toBe(1);
    expect(lines[0]).toMatch(/^INVALID: 7 entries of app-a in XA/);
    expect(lines).toContain('first bad entry: seq 4 (aud_app-a_4): its hash does not match its content (the entry was edited)');
    expect(lines).toContain('untrusted from there on: 4 entries');
    const findings = lines.filter((line) => line.startsWith('  - ')).map((line) => JSON.parse(line.slice(4)));
    expect(findings).toEqual([expect.objectContaining({ area: 'chain', kind: 'hash_mismatch', seq: 4 })]);
  });

  it('exits 1 when the witness keys are not given (the anchor has no known witness)', () => {
    const { status, lines } = run(good, '--keys', keysXA);
    expect(status).toBe(1);
    expect(lines[1]).toMatch(/witnesses: none$/);
  });

  it('--json prints the report as one parseable document', () => {
    const { status, lines } = run(tampered, '--json', '--keys', keysXA, '--keys', keysXB);
    expect(status).toBe(1);
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]);
    expect(report).toMatchObject({ valid: false, first_bad_entry: { seq: 4, entry_id: 'aud_app-a_4' }, anchored_entries: 7 });
    const edited = JSON.parse(JSON.stringify(scene.exported)) as AuditExport;
    edited.entries[3].payload_digest = 'f'.repeat(64);
    expect(report).toEqual(JSON.parse(JSON.stringify(verifyAuditExport(edited, [scene.log.configuration, scene.witness.configuration]))));
    expect(JSON.parse(run('--json', good, '--keys', keysXA, '--keys', keysXB).lines[0]).valid).toBe(true);
  });

  it('--min-witnesses sets how many cosignatures the anchor needs', () => {
    expect(run(unwitnessed, '--keys', keysXA).status).toBe(1);
    expect(run(unwitnessed, '--keys', keysXA, '--min-witnesses', '0').status).toBe(0);
    expect(run(good, '--keys', keysXA, '--keys', keysXB, '--min-witnesses', '2').status).toBe(1);
  });

  it('--grace-minutes sets how long before the anchor an entry may have occurred unproven; without its proofs an old export is INVALID', () => {
    const unproven = file('unproven.json', { ...scene.exported, inclusion_proofs: [] });
    const refused = run(unproven, '--keys', keysXA, '--keys', keysXB);
    expect([refused.status, refused.lines[0]]).toEqual([1, `INVALID: 7 entries of app-a in XA, 0 proven in anchor ${scene.anchor.id}`]);
    expect(refused.lines).toContain('untrusted from there on: 7 entries');
    // The scene's entries occurred a day before its anchor: a grace of two days takes them as appended late.
    expect(run(unproven, '--keys', keysXA, '--keys', keysXB, '--grace-minutes', '2880').status).toBe(0);
    expect(run(unproven, '--keys', keysXA, '--grace-minutes', 'soon').status).toBe(2);
  });

  it('--anchors takes the page or its data array, and flags an export anchor that is not listed', () => {
    const page = file('anchors-page.json', { data: [scene.anchor], has_more: false });
    const array = file('anchors-array.json', [scene.anchor]);
    const other = buildAnchor({ id: 'anc_other', country: 'XA', origin: scene.log.origin, size: 6, root: scene.tree.roots[6], logSigners: [scene.log.logSigner], witnesses: [scene.witness.cosigner] });
    const unlisted = file('anchors-unlisted.json', { data: [other] });
    expect(run(good, '--keys', keysXA, '--keys', keysXB, '--anchors', page).status).toBe(0);
    expect(run(good, '--keys', keysXA, '--keys', keysXB, '--anchors', array).status).toBe(0);
    const { status, lines } = run(good, '--keys', keysXA, '--keys', keysXB, '--anchors', unlisted);
    expect(status).toBe(1);
    expect(lines.some((line) => line.includes('"kind":"not_listed"'))).toBe(true);
  });

  describe('usage errors exit 2', () => {
    it.each([
      ['no --keys', () => [good]],
      ['no export', () => ['--keys', keysXA]],
      ['an unknown flag', () => [good, '--keys', keysXA, '--frobnicate']],
      ['a second export', () => [good, good, '--keys', keysXA]],
      ['--keys without a value', () => [good, '--keys']],
      ['--anchors without a value', () => [good, '--keys', keysXA, '--anchors']],
      ['--min-witnesses without a value', () => [good, '--keys', keysXA, '--min-witnesses']],
      ['--min-witnesses not a number', () => [good, '--keys', keysXA, '--min-witnesses', 'two']],
      ['--min-witnesses negative', () => [good, '--keys', keysXA, '--min-witnesses', '-1']],
      ['--min-witnesses fractional', () => [good, '--keys', keysXA, '--min-witnesses', '1.5']],
    ])('%s', (_name, args) => {
      const { status, lines } = run(...args());
      expect(status).toBe(2);
      expect(lines.join('\n')).toContain('Usage: dcr-audit-verify');
    });

    it('names an unknown flag', () => {
      expect(run(good, '--keys', keysXA, '--frobnicate').lines[0]).toMatch(/^unknown argument --frobnicate/);
    });

    it('an unreadable export, keys or anchors file', () => {
      const missing = join(dir, 'does-not-exist.json');
      for (const args of [
        [missing, '--keys', keysXA],
        [good, '--keys', missing],
        [good, '--keys', keysXA, '--anchors', missing],
      ]) {
        const { status, lines } = run(...args);
        expect(status).toBe(2);
        expect(lines).toEqual([expect.stringMatching(/^cannot verify: .*ENOENT/)]);
      }
    });

    it('a file that is not JSON', () => {
      const broken = file('broken.json', '{"entries": [');
      const { status, lines } = run(broken, '--keys', keysXA);
      expect(status).toBe(2);
      expect(lines[0]).toMatch(/^cannot verify: /);
    });
  });

  it('--help prints the usage and exits 0', () => {
    const { status, lines } = run('--help');
    expect(status).toBe(0);
    expect(lines[0]).toMatch(/^Usage: dcr-audit-verify/);
  });
});
