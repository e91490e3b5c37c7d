import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { ConfigurationAuditRelay } from '../src/connect/configuration-audit';
import { ConnectRepository } from '../src/connect/connect.repository';
import { gatewayService } from '../src/gateway.service';
import { peerSnapshot } from './peer-snapshot';

/**
 * Every gateway replica writes the last-use times of the API tokens it saw, every two seconds
 * (TokenUseRecorder), in the order it first saw each since its last write. Two replicas writing
 * some of the same tokens at once, in different orders, must wait for each other, not deadlock:
 * before, each statement locked the tokens in its list's order.
 */
describe('ConnectRepository.recordTokenUses: replicas writing the same tokens at once', () => {
  let database: MigratedServiceDatabase;
  let repository: ConnectRepository;
  const application = 'app_token_uses';
  const tokens = Array.from({ length: 400 }, (_, i) => `api_token_${String(i).padStart(4, '0')}_${(i * 7919) % 400}`);

  beforeAll(async () => {
    database = await migratedServiceDatabase(gatewayService, 'token_uses', 8);
    repository = new ConnectRepository(database.dataSource, undefined as unknown as ConfigurationAuditRelay);
    const snapshot = peerSnapshot(
      application,
      1,
      tokens.map((id, i) => ({ id, token_hash: i.toString(16).padStart(64, '0') })),
    );
    await repository.applySnapshot(snapshot);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('writes the uses of the same tokens, listed in opposite orders, from several replicas at once, each token keeping its latest use', async () => {
    const start = Date.parse('2026-11-29T10:00:00.000Z');
    for (let round = 0; round < 8; round++) {
      const at = (offset: number) => new Date(start + round * 10_000 + offset);
      const uses = (ids: string[], offset: number) => new Map(ids.map((id, i) => [id, at(offset + i)]));
      const shuffled = [...tokens].sort((a, b) => a.slice(-3).localeCompare(b.slice(-3)));
      const outcomes = await Promise.allSettled([
        repository.recordTokenUses(uses(tokens, 0)),
        repository.recordTokenUses(uses([...tokens].reverse(), 0)),
        repository.recordTokenUses(uses(shuffled, 0)),
        repository.recordTokenUses(uses([...shuffled].reverse().slice(0, 40), 5_000)),
      ]);
      const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
      expect([round, failures]).toEqual([round, []]);
      // Each token's latest use of the round is kept, whichever replica wrote it last.
      const latest = new Map<string, number>();
      const lists: Array<[string[], number]> = [
        [tokens, 0],
        [[...tokens].reverse(), 0],
        [shuffled, 0],
        [[...shuffled].reverse().slice(0, 40), 5_000],
      ];
      for (const [ids, offset] of lists) ids.forEach((id, i) => latest.set(id, Math.max(latest.get(id) ?? 0, at(offset + i).getTime())));
      const rows: Array<{ id: string; last_used_at: Date }> = await database.dataSource.query(`SELECT "id", "last_used_at" FROM "gateway"."api_tokens" WHERE "application_id" = $1`, [application]);
      const wrong = rows.filter((row) => row.last_used_at.getTime() !== latest.get(row.id));
      expect([round, wrong.length, rows.length]).toEqual([round, 0, tokens.length]);
    }
  });

  it("a peer's snapshot revoking tokens (listed in its order) while replicas write their uses: all complete, every token revoked", async () => {
    const start = Date.parse('2026-11-29T12:00:00.000Z');
    for (let round = 0; round < 6; round++) {
      const id = `app_revoked_${round}`;
      const ids = Array.from({ length: 300 }, (_, i) => `api_token_r${round}_${String(299 - ((i * 7919) % 300)).padStart(4, '0')}`);
      const snapshot = (revision: number, revokedAt: string | null) =>
        peerSnapshot(
          id,
          revision,
          ids.map((token, i) => ({ id: token, token_hash: `f${round}`.padStart(8, '0') + i.toString(16).padStart(56, '0'), revoked_at: revokedAt })),
        );
      await repository.applySnapshot(snapshot(1, null));
      const at = (offset: number) => new Date(start + round * 1_000_000 + offset);
      const sorted = [...ids].sort();
      // A replica writing uses over and over while the snapshot is stored (at most 500 writes).
      let stored = false;
      const replica = async () => {
        for (let write = 0; write < 500 && !stored; write++) await repository.recordTokenUses(new Map(sorted.map((token, i) => [token, at(write * 1000 + i)])));
      };
      const outcomes = await Promise.allSettled([replica(), repository.applySnapshot(snapshot(2, '2026-11-29T11:00:00.000Z')).finally(() => (stored = true))]);
      const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
      expect([round, failures]).toEqual([round, []]);
      const [{ revoked }] = await database.dataSource.query(`SELECT count(*)::int AS "revoked" FROM "gateway"."api_tokens" WHERE "application_id" = $1 AND "revoked_at" IS NOT NULL`, [id]);
      expect([round, revoked]).toEqual([round, ids.length]);
    }
  }, 60_000);
});
