import { nodeHash } from '@dcr/transparency';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** The level the tree's stored inner nodes start at from this migration on (TrailRepository.STORED_FROM_LEVEL). */
const FROM_LEVEL = 4;
/** Leaves read at a time by `down`: a multiple of 2^(FROM_LEVEL - 1), so no rebuilt node spans two reads. */
const CHUNK = 4096;

/**
 * The Merkle tree keeps its leaf hashes and its complete subtrees from level 4 up; the inner nodes of
 * levels 1 to 3 are computed from the leaf hashes when a root or proof needs them
 * (TrailRepository.nodes). `up` deletes the stored nodes of levels 1 to 3; `down` computes them again
 * from the stored leaf hashes and stores them.
 */
export class MerkleInnerNodesFromLevelFour1765100000000 implements MigrationInterface {
  name = 'MerkleInnerNodesFromLevelFour1765100000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "audit_chain"."merkle_nodes" WHERE "level" BETWEEN 1 AND ${FROM_LEVEL - 1}`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const [{ size }] = await runner.query(`SELECT COALESCE(MAX("idx") + 1, 0)::bigint AS "size" FROM "audit_chain"."merkle_nodes" WHERE "level" = 0`);
    for (let start = 0; start < Number(size); start += CHUNK) {
      const rows: Array<{ hash: Buffer }> = await runner.query(
        `SELECT "hash" FROM "audit_chain"."merkle_nodes" WHERE "level" = 0 AND "idx" >= $1 AND "idx" < $2 ORDER BY "idx"`,
        [start, start + CHUNK],
      );
      const levels: number[] = [];
      const indexes: number[] = [];
      const hashes: Buffer[] = [];
      let level = rows.map((row) => row.hash);
      for (let l = 1; l < FROM_LEVEL; l++) {
        const parents: Buffer[] = [];
        for (let i = 0; i + 1 < level.length; i += 2) parents.push(nodeHash(level[i], level[i + 1]));
        parents.forEach((hash, i) => {
          levels.push(l);
          indexes.push(start / 2 ** l + i);
          hashes.push(hash);
        });
        level = parents;
      }
      await runner.query(
        `INSERT INTO "audit_chain"."merkle_nodes" ("level", "idx", "hash") SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[]) ON CONFLICT DO NOTHING`,
        [levels, indexes, hashes],
      );
    }
  }
}
