import 'reflect-metadata';
import { ApplicationSnapshot } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { IsNull } from 'typeorm';
import { ConfigurationAuditRelay } from '../src/connect/configuration-audit';
import { ApiTokenRecord } from '../src/connect/connect.entities';
import { ConnectRepository } from '../src/connect/connect.repository';
import { gatewayService } from '../src/gateway.service';
import { peerSnapshot } from './peer-snapshot';

/**
 * A change made here (ConnectRepository.change: a token revoked, then the application's revision
 * bumped) and a peer's snapshot of the same application (applySnapshot: the application locked,
 * then its credentials merged) touch the same rows. Both countries revoking the same token at the
 * same moment must not deadlock: the change locks the application first too, as the snapshot does,
 * and the two wait for each other.
 */
describe('ConnectRepository: a change here and a peer\'s snapshot of the same application at once', () => {
  let database: MigratedServiceDatabase;
  let repository: ConnectRepository;
  let relay: ConfigurationAuditRelay;

  beforeAll(async () => {
    database = await migratedServiceDatabase(gatewayService, 'config_lock_order', 8);
    // The relay is only kicked here; its drains, with no bus to append to, end with a warning.
    relay = new ConfigurationAuditRelay(database.dataSource, undefined as unknown as ServiceClients);
    repository = new ConnectRepository(database.dataSource, relay);
  });

  afterAll(async () => {
    await relay?.onApplicationShutdown();
    await database?.close();
  });

  const snapshot = (id: string, revision: number, revokedAt: string | null): ApplicationSnapshot =>
    peerSnapshot(id, revision, [{ id: `api_token_${id}`, token_hash: id.padStart(64, '0'), revoked_at: revokedAt }]);

  it('a token revoked here and by a peer\'s snapshot at the same moment: both complete, the token revoked', async () => {
    for (let round = 0; round < 6; round++) {
      const applications = Array.from({ length: 20 }, (_, i) => `${round}${String(i).padStart(3, '0')}`);
      for (const id of applications) await repository.applySnapshot(snapshot(id, 1, null));
      const outcomes = await Promise.allSettled(
        applications.flatMap((id) => [
          repository
            .change(
              id,
              async (manager) => {
                await manager.getRepository(ApiTokenRecord).update({ id: `api_token_${id}`, applicationId: id, revokedAt: IsNull() }, { revokedAt: new Date() });
              },
              { type: 'credential.api_token_revoked', actor: { type: 'application' }, detail: { token_id: `api_token_${id}` } },
            ),
          repository.applySnapshot(snapshot(id, 2, '2026-11-29T10:00:00.000Z')),
        ]),
      );
      const failures = [...new Set(outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : [])))];
      expect([round, failures]).toEqual([round, []]);
      const [{ revoked }] = await database.dataSource.query(`SELECT count(*)::int AS "revoked" FROM "gateway"."api_tokens" WHERE "application_id" = ANY($1) AND "revoked_at" IS NOT NULL`, [applications]);
      expect([round, revoked]).toEqual([round, applications.length]);
    }
  }, 60_000);
});
