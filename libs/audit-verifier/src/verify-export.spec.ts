import { AuditEntry, auditEntryHash, auditLeafData, auditPayloadDigest, sealAuditEntry } from '@dcr/domain';
import { leafHash, noteSignerFromSeed, rootOfLeaves } from '@dcr/transparency';
import { buildAnchor, buildChain, buildExport, buildTree, interleave, standardScene, testCountry } from './testing/export-builder';
import { AuditExport, Finding, verifyAuditExport, VerifyOptions, WitnessConfiguration } from './verify-export';

type Scene = Awaited<ReturnType<typeof standardScene>>;

const ids = (entries: readonly AuditEntry[]) => entries.map((entry) => entry.entry_id);
const kinds = (findings: readonly Finding[]) => findings.map((finding) => `${finding.area}:${finding.kind}`);
// JSON, not structuredClone: under Jest the latter builds objects of another realm, which canonicalJson rejects as not plain.
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Flips one bit of the byte at `index` of a base64 string's bytes. */
function flipBase64(text: string, index: number): string {
  const bytes = Buffer.from(text, 'base64');
  bytes[index] ^= 0x01;
  return bytes.toString('base64');
}

/** Reseals a chain after an edit of entry `index`, as an editor rewriting history would (every later hash recomputed). */
function resealFrom(chain: readonly AuditEntry[], index: number, edit: (entry: AuditEntry) => void): AuditEntry[] {
  const result: AuditEntry[] = [];
  chain.forEach((entry, i) => {
    const fields = { ...entry, actor: { ...entry.actor } };
    if (i === index) edit(fields);
    result.push(i < index ? entry : sealAuditEntry(fields, result[i - 1] ?? null));
  });
  return result;
}

describe('verifyAuditExport', () => {
  let scene: Scene;
  let exported: AuditExport;
  let configurations: WitnessConfiguration[];
  const verify = (candidate: AuditExport, options?: VerifyOptions, keys: readonly WitnessConfiguration[] = configurations) => verifyAuditExport(candidate, keys, options);

  beforeAll(async () => {
    scene = await standardScene();
    exported = scene.exported;
    configurations = scene.configurations;
  });

  describe('the scene the tests build on', () => {
    it('interleaves two applications into one country tree, whose root the anchor signs', () => {
      const { tree, chainA, chainB, anchor } = scene;
      expect(tree.leaves).toHaveLength(chainA.length + chainB.length);
      expect(exported.inclusion_proofs.map((proof) => proof.leaf_index)).toEqual([0, 2, 4, 6, 8, 10, 11]);
      const independentRoot = rootOfLeaves(tree.leaves.map((entry) => leafHash(Buffer.from(entry.hash, 'hex'))));
      expect(tree.roots[tree.leaves.length]).toEqual(independentRoot);
      expect(anchor.merkle_root).toBe(independentRoot.toString('hex'));
      expect(anchor.tree_size).toBe(12);
      expect(anchor.checkpoint.startsWith(`${scene.log.origin}\n12\n${independentRoot.toString('base64')}\n\n`)).toBe(true);
      expect(anchor.checkpoint).toContain(`${anchor.witness_receipts[0].cosignature}\n`);
    });
  });

  describe('an intact export', () => {
    it('is valid, every entry anchored, signed by the log and cosigned by the witness', () => {
      const report = verify(exported);
      expect(report).toEqual({
        valid: true,
        application_id: 'app-a',
        country: 'XA',
        entries: 7,
        anchored_entries: 7,
        first_bad_entry: null,
        untrusted_entry_ids: [],
        anchor: { id: scene.anchor.id, tree_size: 12, merkle_root: scene.anchor.merkle_root, signed_by: scene.log.origin, witnesses: [scene.witness.cosigner.name] },
        findings: [],
      });
    });

    it('holds for the other application of the same tree too', async () => {
      const other = await buildExport('app-b', 'XA', scene.chainB, scene.tree, scene.anchor);
      const report = verify(other);
      expect(report.valid).toBe(true);
      expect(report.anchored_entries).toBe(5);
    });

    it('survives a JSON round trip (what the CLI reads)', () => {
      expect(verify(JSON.parse(JSON.stringify(exported))).valid).toBe(true);
    });
  });

  describe('tampered entries', () => {
    it('an edited entry is the first bad entry, with its seq, and every later entry is untrusted', () => {
      const tampered = clone(exported);
      tampered.entries[3].event_type = 'decision.recorded.forged';
      const report = verify(tampered);
      expect(report.valid).toBe(false);
      expect(kinds(report.findings)).toEqual(['chain:hash_mismatch']);
      expect(report.findings[0]).toMatchObject({ area: 'chain', kind: 'hash_mismatch', seq: 4, entry_id: 'aud_app-a_4' });
      expect(report.first_bad_entry).toEqual({ seq: 4, entry_id: 'aud_app-a_4', reason: expect.stringMatching(/hash does not match its content/) });
      expect(report.untrusted_entry_ids).toEqual(ids(exported.entries.slice(3)));
      // The hash itself is still the anchored one: the proofs hold, the content does not.
      expect(report.anchored_entries).toBe(7);
    });

    it('a removed entry: the entry after the gap is the first bad one', () => {
      const tampered = clone(exported);
      tampered.entries.splice(2, 1);
      tampered.inclusion_proofs.splice(2, 1);
      const report = verify(tampered);
      expect(report.valid).toBe(false);
      expect(report.findings).toContainEqual({ area: 'chain', kind: 'missing_entries', after_seq: 2, next_seq: 4 });
      expect(kinds(report.findings)).toEqual(['chain:missing_entries', 'chain:broken_link']);
      expect(report.first_bad_entry).toEqual({ seq: 4, entry_id: 'aud_app-a_4', reason: 'entries 3..3 are missing (removed)' });
      expect(report.untrusted_entry_ids).toEqual(ids(exported.entries.slice(3)));
      expect(report.anchored_entries).toBe(6);
    });

    it('a removed first entry is a bad first seq', () => {
      const tampered = clone(exported);
      tampered.entries.shift();
      const report = verify(tampered);
      expect(kinds(report.findings)).toEqual(['chain:bad_first_seq']);
      expect(report.first_bad_entry).toMatchObject({ seq: 2, entry_id: 'aud_app-a_2' });
      expect(report.untrusted_entry_ids).toEqual(ids(exported.entries.slice(1)));
    });

    it('an edited entry whose hash was recomputed: the next link breaks AND its inclusion proof fails; the edited entry is first bad', () => {
      const tampered = clone(exported);
      const edited = tampered.entries[3];
      edited.payload_digest = auditPayloadDigest({ forged: true });
      edited.hash = auditEntryHash(edited);
      const report = verify(tampered);
      expect(report.valid).toBe(false);
      expect(kinds(report.findings)).toEqual(['chain:broken_link', 'inclusion:proof_invalid']);
      expect(report.findings).toContainEqual(expect.objectContaining({ area: 'chain', kind: 'broken_link', seq: 5, entry_id: 'aud_app-a_5', expected: edited.hash, found: exported.entries[3].hash }));
      expect(report.findings).toContainEqual(expect.objectContaining({ area: 'inclusion', kind: 'proof_invalid', seq: 4, entry_id: 'aud_app-a_4' }));
      expect(report.first_bad_entry).toEqual({ seq: 4, entry_id: 'aud_app-a_4', reason: expect.stringMatching(/edited and its hash recomputed/) });
      expect(report.untrusted_entry_ids).toEqual(ids(exported.entries.slice(3)));
      expect(report.anchored_entries).toBe(6);
    });

    it('a whole history rewritten and resealed from an edit on: only the inclusion proofs see it', () => {
      const tampered = clone(exported);
      tampered.entries = resealFrom(exported.entries, 2, (entry) => (entry.actor = { type: 'officer', id: 'intruder' }));
      const report = verify(tampered);
      expect(report.findings.every((finding) => finding.area === 'inclusion' && finding.kind === 'proof_invalid')).toBe(true);
      expect(report.findings.map((finding) => (finding as { seq: number }).seq)).toEqual([3, 4, 5, 6, 7]);
      expect(report.first_bad_entry).toMatchObject({ seq: 3, reason: expect.stringMatching(/not in the anchored tree/) });
      expect(report.untrusted_entry_ids).toEqual(ids(exported.entries.slice(2)));
    });

    it('a replaced successor: the anchor proves the predecessor, so the replaced entry is the first bad one', () => {
      const tampered = clone(exported);
      const replaced = tampered.entries[4];
      replaced.prev_hash = 'e'.repeat(64);
      replaced.hash = auditEntryHash(replaced);
      const report = verify(tampered);
      expect(kinds(report.findings)).toEqual(['chain:broken_link', 'chain:broken_link', 'inclusion:proof_invalid']);
      expect(report.first_bad_entry).toMatchObject({ seq: 5, entry_id: 'aud_app-a_5' });
      expect(report.untrusted_entry_ids).toEqual(ids(exported.entries.slice(4)));
    });

    it('an inclusion proof with a changed hash fails for that entry only', () => {
      const tampered = clone(exported);
      const proof = tampered.inclusion_proofs[1].proof;
      proof[0] = (proof[0][0] === '0' ? '1' : '0') + proof[0].slice(1);
      const report = verify(tampered);
      expect(kinds(report.findings)).toEqual(['inclusion:proof_invalid']);
      expect(report.first_bad_entry).toEqual({ seq: 2, entry_id: 'aud_app-a_2', reason: expect.stringMatching(/^it is not in the anchored tree/) });
      expect(report.anchored_entries).toBe(6);
    });

    it('a withheld proof of an entry that precedes an anchored one is missing, not silently unanchored', () => {
      const tampered = clone(exported);
      tampered.inclusion_proofs.splice(2, 1);
      const report = verify(tampered);
      expect(report.findings).toEqual([
        { area: 'inclusion', kind: 'proof_missing', entry_id: 'aud_app-a_3', seq: 3, detail: expect.any(String) },
      ]);
      expect(report.first_bad_entry).toMatchObject({ seq: 3, reason: expect.stringMatching(/inclusion proof is missing/) });
    });
  });

  describe('the anchor', () => {
    it('a forged history re-anchored under a different key is unsigned, and proves nothing', async () => {
      const forgedA = resealFrom(scene.chainA, 2, (entry) => (entry.payload_digest = auditPayloadDigest({ forged: true })));
      const forgedTree = buildTree(interleave(forgedA, scene.chainB));
      const forger = noteSignerFromSeed(scene.log.origin, Buffer.alloc(32, 99));
      // Even with a witness fooled into cosigning it, the checkpoint has no published log signature.
      const anchor = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: forgedTree.roots[12], logSigners: [forger], witnesses: [scene.witness.cosigner] });
      const forged = await buildExport('app-a', 'XA', forgedA, forgedTree, anchor);
      const report = verify(forged);
      expect(report.valid).toBe(false);
      expect(report.findings).toContainEqual(expect.objectContaining({ area: 'anchor', kind: 'unsigned', anchor_id: anchor.id }));
      expect(kinds(report.findings)).toEqual(['anchor:unsigned']);
      expect(report.anchor?.signed_by).toBeNull();
      expect(report.anchored_entries).toBe(0);
      expect(report.findings.some((finding) => finding.area === 'chain')).toBe(false);
    });

    it('a checkpoint whose root was changed under the log signature is unsigned', () => {
      const tampered = clone(exported);
      const forgedRoot = Buffer.alloc(32, 7);
      tampered.anchor!.checkpoint = tampered.anchor!.checkpoint.replace(Buffer.from(scene.anchor.merkle_root, 'hex').toString('base64'), forgedRoot.toString('base64'));
      tampered.anchor!.merkle_root = forgedRoot.toString('hex');
      const report = verify(tampered);
      expect(kinds(report.findings)).toContain('anchor:unsigned');
      expect(report.anchored_entries).toBe(0);
      expect(report.valid).toBe(false);
    });

    it('another country\'s log key cannot sign this log\'s checkpoint', () => {
      const anchor = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: scene.tree.roots[12], logSigners: [scene.witness.logSigner], witnesses: [scene.witness.cosigner] });
      const report = verify({ ...clone(exported), anchor });
      expect(kinds(report.findings)).toEqual(['anchor:unsigned']);
      expect(report.anchor?.signed_by).toBeNull();
    });

    it('a merkle_root field that disagrees with the signed checkpoint is a mismatch', () => {
      const tampered = clone(exported);
      tampered.anchor!.merkle_root = 'ab'.repeat(32);
      const report = verify(tampered);
      expect(report.valid).toBe(false);
      expect(report.findings).toEqual([{ area: 'anchor', kind: 'mismatch', anchor_id: scene.anchor.id, detail: expect.stringMatching(/merkle_root/) }]);
      // The proofs are checked against the signed root, not the field.
      expect(report.anchored_entries).toBe(7);
      expect(report.first_bad_entry).toBeNull();
    });

    it('a tree_size or origin field that disagrees with the checkpoint is a mismatch', () => {
      const tampered = clone(exported);
      tampered.anchor!.origin = 'dcr.test/audit/elsewhere';
      expect(verify(tampered).findings).toEqual([expect.objectContaining({ area: 'anchor', kind: 'mismatch', detail: expect.stringMatching(/origin/) })]);
      const resized = clone(exported);
      resized.anchor!.tree_size = 11;
      const report = verify(resized);
      expect(report.findings[0]).toMatchObject({ area: 'anchor', kind: 'mismatch', detail: expect.stringMatching(/size 12 .* tree_size 11/) });
      // Every proof is for the signed size, not the one the field claims.
      expect(kinds(report.findings.slice(1))).toEqual(Array(7).fill('inclusion:proof_invalid'));
      expect(report.anchored_entries).toBe(0);
    });

    it('an anchor of another country is a mismatch', () => {
      const tampered = clone(exported);
      tampered.country = 'XB';
      expect(kinds(verify(tampered).findings)).toEqual(['anchor:mismatch']);
    });
  });

  describe('witnesses', () => {
    it('a tampered cosignature is invalid, and leaves too few witnesses', () => {
      const tampered = clone(exported);
      const receipt = tampered.anchor!.witness_receipts[0];
      receipt.signature = flipBase64(receipt.signature, 20);
      const report = verify(tampered);
      expect(report.valid).toBe(false);
      expect(kinds(report.findings)).toEqual(['witness:invalid_cosignature', 'witness:too_few_witnesses']);
      expect(report.anchor?.witnesses).toEqual([]);
      expect(report.anchor?.signed_by).toBe(scene.log.origin);
    });

    it('a cosignature with a changed timestamp is invalid', () => {
      const tampered = clone(exported);
      const receipt = tampered.anchor!.witness_receipts[0];
      receipt.signature = flipBase64(receipt.signature, 4 + 7);
      expect(kinds(verify(tampered).findings)).toEqual(['witness:invalid_cosignature', 'witness:too_few_witnesses']);
    });

    it('a witness whose key is not published is unknown', () => {
      const stranger = testCountry('XC', 3);
      const anchor = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: scene.tree.roots[12], logSigners: [scene.log.logSigner], witnesses: [stranger.cosigner] });
      const candidate = { ...clone(exported), anchor };
      const report = verify(candidate);
      expect(kinds(report.findings)).toEqual(['witness:unknown_witness', 'witness:too_few_witnesses']);
      expect(report.findings[0]).toMatchObject({ detail: expect.stringContaining(stranger.cosigner.name) });
      // Once its configuration is given, it counts.
      expect(verify(candidate, {}, [...configurations, stranger.configuration]).valid).toBe(true);
    });

    it('the log\'s own witness key is no independent witness', () => {
      const anchor = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: scene.tree.roots[12], logSigners: [scene.log.logSigner], witnesses: [scene.log.cosigner] });
      const report = verify({ ...clone(exported), anchor });
      expect(kinds(report.findings)).toEqual(['witness:unknown_witness', 'witness:too_few_witnesses']);
      expect(report.findings[0]).toMatchObject({ detail: expect.stringMatching(/own witness/) });
    });

    it('minWitnesses counts distinct valid witnesses', () => {
      const third = testCountry('XC', 3);
      const keys = [...configurations, third.configuration];
      const anchor = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: scene.tree.roots[12], logSigners: [scene.log.logSigner], witnesses: [scene.witness.cosigner, third.cosigner] });
      const candidate = { ...clone(exported), anchor };
      expect(verify(candidate, { minWitnesses: 2 }, keys).valid).toBe(true);
      expect(verify(candidate, { minWitnesses: 3 }, keys).findings).toEqual([expect.objectContaining({ kind: 'too_few_witnesses', detail: '2 valid witness cosignature(s), 3 required' })]);
      const duplicated = clone(candidate);
      duplicated.anchor!.witness_receipts = [anchor.witness_receipts[0], anchor.witness_receipts[0]];
      expect(kinds(verify(duplicated, { minWitnesses: 2 }, keys).findings)).toEqual(['witness:too_few_witnesses']);
    });

    it('minWitnesses 0 lets an anchor without receipts pass; the default of 1 does not', () => {
      const anchor = buildAnchor({ country: 'XA', origin: scene.log.origin, size: 12, root: scene.tree.roots[12], logSigners: [scene.log.logSigner] });
      const candidate = { ...clone(exported), anchor };
      expect(anchor.witness_receipts).toEqual([]);
      const lenient = verify(candidate, { minWitnesses: 0 });
      expect(lenient.valid).toBe(true);
      expect(lenient.anchored_entries).toBe(7);
      expect(kinds(verify(candidate).findings)).toEqual(['witness:too_few_witnesses']);
    });
  });

  describe('coverage and listing', () => {
    it('entries beyond the anchor\'s tree size are not anchored, and not errors', async () => {
      const partial = await standardScene({ anchorSize: 8 });
      const report = verifyAuditExport(partial.exported, partial.configurations);
      expect(partial.exported.inclusion_proofs.map((proof) => proof.entry_id)).toEqual(ids(partial.chainA.slice(0, 4)));
      expect(report.valid).toBe(true);
      expect(report.entries).toBe(7);
      expect(report.anchored_entries).toBe(4);
      expect(report.findings).toEqual([]);
    });

    it('an export against an older anchor leaves no entry unproven that a newer published anchor must hold', async () => {
      const partial = await standardScene({ anchorSize: 8 });
      const newer = buildAnchor({ id: 'anc_newer', country: partial.log.code, origin: partial.log.origin, size: 12, root: partial.tree.roots[12], logSigners: [partial.log.logSigner], witnesses: [partial.witness.cosigner] });
      expect(verifyAuditExport(partial.exported, partial.configurations, { anchors: [partial.anchor] }).valid).toBe(true);
      const report = verifyAuditExport(partial.exported, partial.configurations, { anchors: [partial.anchor, newer] });
      expect([report.valid, kinds(report.findings), report.first_bad_entry?.seq]).toEqual([false, ['inclusion:proof_missing', 'inclusion:proof_missing', 'inclusion:proof_missing'], 5]);
    });

    it('beyond the anchor the chain still catches an edited and resealed entry', async () => {
      const partial = await standardScene({ anchorSize: 8 });
      const tampered = clone(partial.exported);
      tampered.entries[5].occurred_at = '2030-01-01T00:00:00.000Z';
      tampered.entries[5].hash = auditEntryHash(tampered.entries[5]);
      const report = verifyAuditExport(tampered, partial.configurations);
      expect(kinds(report.findings)).toEqual(['chain:broken_link']);
      expect(report.first_bad_entry).toMatchObject({ seq: 6, reason: expect.stringMatching(/edited and its hash recomputed/) });
      expect(report.untrusted_entry_ids).toEqual(ids(partial.chainA.slice(5)));
    });

    it('a tail rewritten with its proofs left out is caught: an entry that occurred long before the anchor must be proven', () => {
      // The whole export's entries occurred a day before its anchor was made.
      const rewritten = clone(exported);
      rewritten.entries = resealFrom(exported.entries, 4, (entry) => {
        entry.event_type = 'decision.recorded';
      });
      const kept = new Set(ids(rewritten.entries.slice(0, 4)));
      rewritten.inclusion_proofs = rewritten.inclusion_proofs.filter((proof) => kept.has(proof.entry_id));
      const report = verify(rewritten);
      expect(report.valid).toBe(false);
      expect(kinds(report.findings)).toEqual(['inclusion:proof_missing', 'inclusion:proof_missing', 'inclusion:proof_missing']);
      expect(report.first_bad_entry).toMatchObject({ seq: 5, reason: expect.stringMatching(/inclusion proof is missing \(it occurred at .*, more than 60 minutes before the newest anchor was made/) });
      // Every proof left out: nothing proven, and every entry named.
      const stripped = verify({ ...clone(exported), inclusion_proofs: [] });
      expect([stripped.valid, stripped.anchored_entries, stripped.findings.length]).toEqual([false, 0, exported.entries.length]);
      // Entries of the last hour before the anchor may not be in its tree yet; the grace is an option.
      expect(verify({ ...clone(exported), inclusion_proofs: [] }, { unprovenGraceMs: 2 * 24 * 3_600_000 }).valid).toBe(true);
    });

    it('an export without an anchor checks the chain only, unless the published anchors were made long after its entries', () => {
      const report = verify({ ...clone(exported), anchor: null, inclusion_proofs: [] });
      expect(report).toMatchObject({ valid: true, anchored_entries: 0, anchor: null, findings: [] });
      const listed = verify({ ...clone(exported), anchor: null, inclusion_proofs: [] }, { anchors: [scene.anchor] });
      expect([listed.valid, new Set(kinds(listed.findings))]).toEqual([false, new Set(['inclusion:proof_missing'])]);
    });

    it('the anchors option: the export\'s anchor must be listed', () => {
      const older = buildAnchor({ id: 'anc_older', country: 'XA', origin: scene.log.origin, size: 6, root: scene.tree.roots[6], logSigners: [scene.log.logSigner], witnesses: [scene.witness.cosigner] });
      expect(verify(exported, { anchors: [older, scene.anchor] })).toMatchObject({ valid: true, findings: [] });
      const report = verify(exported, { anchors: [older] });
      expect(report.valid).toBe(false);
      expect(report.findings).toEqual([{ area: 'anchor', kind: 'not_listed', anchor_id: scene.anchor.id, detail: expect.any(String) }]);
      // Listed under the same id but with another root is not the same anchor.
      const impostor = { ...clone(scene.anchor), merkle_root: 'cd'.repeat(32) };
      expect(kinds(verify(exported, { anchors: [impostor] }).findings)).toContain('anchor:not_listed');
    });

    it('the anchors option: every listed anchor must be validly signed', () => {
      const forged = buildAnchor({ id: 'anc_forged', country: 'XA', origin: scene.log.origin, size: 6, root: scene.tree.roots[6], logSigners: [noteSignerFromSeed(scene.log.origin, Buffer.alloc(32, 42))], witnesses: [scene.witness.cosigner] });
      const report = verify(exported, { anchors: [forged, scene.anchor] });
      expect(report.findings).toEqual([expect.objectContaining({ area: 'anchor', kind: 'unsigned', anchor_id: 'anc_forged' })]);
    });
  });

  it('leaf data is the 32 bytes of the entry hash', () => {
    const entry = buildChain('app-z', 1)[0];
    expect(leafHash(auditLeafData(entry.hash))).toEqual(leafHash(Buffer.from(entry.hash, 'hex')));
  });
});
