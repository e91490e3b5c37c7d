import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { AuditEventInput } from '@dcr/contracts';
import { auditLeafData } from '@dcr/domain';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { consistencyProof, inclusionProof, leafHash, rootOfLeaves, treeRootFromNodes, verifyConsistency, verifyInclusion } from '@dcr/transparency';
import { DataSource } from 'typeorm';
import { auditChainService } from '../src/audit-chain.service';
import { MerkleInnerNodesFromLevelFour1765100000000 } from '../src/migrations/1765100000000-merkle-inner-nodes-from-level-four';
import { AuditAppender } from '../src/trail/audit-appender';
import { STORED_FROM_LEVEL, TrailRepository } from '../src/trail/trail.repository';

/**
 * The Merkle tree keeps its leaf hashes and its complete subtrees from STORED_FROM_LEVEL up, and
 * computes the inner nodes below from the leaf hashes (real PostgreSQL): every root and every
 * inclusion and consistency proof of many sizes still verifies against the tree of the entries' leaf
 * hashes, an appender that starts on an existing tree continues it, and the migration's `down`
 * stores the inner levels below again.
 */
describe('the audit trail\'s Merkle tree, inner nodes stored from level 4', () => {
  const application = 'tp_dev_merklemerklemerk';
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let trail: TrailRepository;

  const events = (count: number): AuditEventInput[] =>
    Array.from({ length: count }, (_, n) => ({
      id: `evt_${randomBytes(10).toString('hex')}`,
      type: 'consent.granted',
      application_id: application,
      actor: { type: 'participant', id: `sub_${n}` },
      occurred_at: new Date(Date.UTC(2026, 10, 23, 12, 0, 0, n)).toISOString(),
      payload: { n },
    }));
  const append = (appender: AuditAppender, count: number) => appender.append({ source: 'test', events: events(count) });
  const leaves = async (): Promise<Buffer[]> =>
    (await dataSource.query(`SELECT "hash" FROM "audit_chain"."entries" ORDER BY "leaf_index"`)).map((row: { hash: string }) => leafHash(auditLeafData(row.hash)));
  const storedLevels = async (): Promise<Array<{ level: number; n: number }>> =>
    dataSource.query(`SELECT "level", count(*)::int AS "n" FROM "audit_chain"."merkle_nodes" GROUP BY "level" ORDER BY "level"`);
  const read = (ids: Parameters<TrailRepository['nodes']>[0]) => trail.nodes(ids);

  beforeAll(async () => {
    database = await migratedServiceDatabase(auditChainService, 'merkle_storage');
    dataSource = database.dataSource;
    trail = new TrailRepository(dataSource);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('stores the leaves and the subtrees from level 4, and every root and proof verifies', async () => {
    const first = new AuditAppender(dataSource, trail);
    await append(first, 21);
    await append(first, 3);
    // Another process starts on the existing tree: its right edge comes from stored and computed nodes.
    const second = new AuditAppender(dataSource, trail);
    await append(second, 46);
    const all = await leaves();
    expect(all).toHaveLength(70);

    expect(STORED_FROM_LEVEL).toBe(4);
    expect(await storedLevels()).toEqual([
      { level: 0, n: 70 },
      { level: 4, n: 4 },
      { level: 5, n: 2 },
      { level: 6, n: 1 },
    ]);
    // Every size up to 34, then sizes around the stored levels' edges; leaves at the subtrees' edges.
    const sizes = [...Array.from({ length: 34 }, (_, i) => i + 1), 47, 48, 49, 63, 64, 65, 69, 70];
    for (const size of sizes) {
      const root = rootOfLeaves(all.slice(0, size));
      expect((await treeRootFromNodes(size, read)).equals(root)).toBe(true);
      const sample = [0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, size - 3, size - 2, size - 1];
      for (const leaf of new Set(sample.filter((leaf) => leaf >= 0 && leaf < size))) {
        expect(verifyInclusion(leaf, size, all[leaf], await inclusionProof(leaf, size, read), root)).toBe(true);
      }
      for (const from of [1, 7, 16, 17, 33].filter((from) => from < size)) {
        expect(verifyConsistency(from, size, await consistencyProof(from, size, read), rootOfLeaves(all.slice(0, from)), root)).toBe(true);
      }
    }
  }, 60_000);

  it('migrates down by storing the inner levels below level 4 again, computed from the leaves, and up by deleting them', async () => {
    const size = (await leaves()).length;
    const expected = Array.from({ length: STORED_FROM_LEVEL }, (_, level) => ({ level, n: Math.floor(size / 2 ** level) }));
    const migration = new MerkleInnerNodesFromLevelFour1765100000000();
    const runner = dataSource.createQueryRunner();
    try {
      const idsBelow = expected.flatMap(({ level, n }) => Array.from({ length: n }, (_, index) => ({ level, index })));
      const computed = await trail.nodes(idsBelow);
      await migration.down(runner);
      expect((await storedLevels()).slice(0, STORED_FROM_LEVEL)).toEqual(expected);
      const stored: Array<{ level: number; idx: string; hash: Buffer }> = await dataSource.query(
        `SELECT "level", "idx", "hash" FROM "audit_chain"."merkle_nodes" WHERE "level" < $1 ORDER BY "level", "idx"`,
        [STORED_FROM_LEVEL],
      );
      expect(stored.map((row) => row.hash.toString('hex'))).toEqual(computed.map((hash) => hash.toString('hex')));
      await migration.up(runner);
      expect((await storedLevels()).map((row) => row.level)).toEqual([0, 4, 5, 6]);
    } finally {
      await runner.release();
    }
  });
});
