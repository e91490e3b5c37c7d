import 'reflect-metadata';
import { ApplicationSnapshot } from '@dcr/contracts';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { DataSource } from 'typeorm';
import { ConfigurationAuditRelay } from '../src/connect/configuration-audit';
import { ApiTokenRecord, ApplicationRecord } from '../src/connect/connect.entities';
import { ConnectRepository } from '../src/connect/connect.repository';
import { gatewayService } from '../src/gateway.service';
import { peerSnapshot } from './peer-snapshot';

/**
 * Snapshots of an application's configuration arriving from the country that authored it, against
 * the real PostgreSQL. A change made right after an application is created (its first API token,
 * say) sends a second snapshot close behind the first; the receiving country may store them at the
 * same time, before it has any row of that application.
 */
describe('ConnectRepository.applySnapshot: snapshots arriving together', () => {
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let repository: ConnectRepository;

  beforeAll(async () => {
    database = await migratedServiceDatabase(gatewayService, 'config_snapshots', 4);
    dataSource = database.dataSource;
    // Applying a peer's snapshot records no configuration change of this country's own.
    repository = new ConnectRepository(dataSource, undefined as unknown as ConfigurationAuditRelay);
  });

  afterAll(async () => {
    await database?.close();
  });

  const snapshot = (id: string, revision: number, tokens: string[]): ApplicationSnapshot =>
    peerSnapshot(
      id,
      revision,
      tokens.map((token) => ({ id: `api_token_${token}_${id}`, token_hash: `hash-${token}-${id}` })),
    );

  async function stored(id: string) {
    const application = await dataSource.getRepository(ApplicationRecord).findOne({ where: { id } });
    const tokens = await dataSource.getRepository(ApiTokenRecord).find({ where: { applicationId: id } });
    return { revision: application?.revision, tokens: tokens.map((token) => token.id.replace(`_${id}`, '')).sort() };
  }

  it('keeps the newest of two snapshots of a new application that arrive together, in either order', async () => {
    for (let i = 0; i < 8; i++) {
      const id = `tp_us_together${i}`;
      const first = snapshot(id, 1, []);
      const second = snapshot(id, 2, ['one']);
      const results = await Promise.allSettled(i % 2 === 0 ? [repository.applySnapshot(first), repository.applySnapshot(second)] : [repository.applySnapshot(second), repository.applySnapshot(first)]);
      expect(results.map((result) => (result.status === 'rejected' ? String(result.reason) : result.status))).toEqual(['fulfilled', 'fulfilled']);
      expect(await stored(id)).toEqual({ revision: 2, tokens: ['api_token_one'] });
    }
  });

  it('takes the newest revision of the application, and every credential of any snapshot', async () => {
    const id = 'tp_us_ordered';
    expect(await repository.applySnapshot(snapshot(id, 3, ['a']))).toEqual({ changed: true, peerBehind: false });
    // Older: its name and origins are not taken, but a token in it is one this country lacks (made
    // while this country changed something else), and tokens are never deleted: it is kept.
    expect(await repository.applySnapshot({ ...snapshot(id, 2, ['a', 'b']), name: 'Old name' })).toEqual({ changed: true, peerBehind: false });
    expect(await stored(id)).toEqual({ revision: 3, tokens: ['api_token_a', 'api_token_b'] });
    expect((await dataSource.getRepository(ApplicationRecord).findOneOrFail({ where: { id } })).name).toBe('Acme');
    expect(await repository.applySnapshot(snapshot(id, 3, ['a', 'b']))).toEqual({ changed: false, peerBehind: false });
    expect(await repository.applySnapshot(snapshot(id, 4, ['a', 'b']))).toEqual({ changed: true, peerBehind: false });
    expect(await stored(id)).toEqual({ revision: 4, tokens: ['api_token_a', 'api_token_b'] });
  });

  it('loses no credential when two countries change one application at once, and converges', async () => {
    // Both at revision 1; here a token is created (revision 2 here), there an origin is added
    // (revision 2 there). Each receives the other's revision 2.
    const id = 'tp_us_concurrent';
    await repository.applySnapshot(snapshot(id, 1, []));
    await repository.applySnapshot(snapshot(id, 2, ['ours']));
    const theirs = { ...snapshot(id, 2, []), allowed_origins: [{ origin: 'https://shop.example', created_at: '2026-11-23T10:00:02.000Z' }] };
    // Equal revision: their origin is merged in, and this country holds a token they lack: the
    // revision moves past both, so this country's snapshot, pushed back, is newer there.
    expect(await repository.applySnapshot(theirs)).toEqual({ changed: true, peerBehind: true });
    expect(await stored(id)).toEqual({ revision: 3, tokens: ['api_token_ours'] });
    const pushed = (await repository.snapshot(id))!;
    expect(pushed.allowed_origins.map((o) => o.origin)).toEqual(['https://shop.example']);
    // There (another application id standing for the same one in the other country's database):
    // the push is newer, taken with its token, and the origin it already had; nothing left to send back.
    const otherId = 'tp_us_concurrent_there';
    await repository.applySnapshot({ ...theirs, id: otherId });
    const rename = <T extends { id: string; token_hash: string }>(token: T): T => ({ ...token, id: token.id.replace(id, otherId), token_hash: `there-${token.token_hash}`.slice(0, 64) });
    expect(await repository.applySnapshot({ ...pushed, id: otherId, api_tokens: pushed.api_tokens.map(rename) })).toEqual({ changed: true, peerBehind: false });
    expect(await stored(otherId)).toEqual({ revision: 3, tokens: ['api_token_ours'] });
  });

  it('merges allowed origins one by one: the later of an addition and a removal wins, in either order', async () => {
    const id = 'tp_us_origins';
    const withOrigins = (revision: number, origins: Array<{ origin: string; created_at: string; removed_at?: string }>) => ({ ...snapshot(id, revision, []), allowed_origins: origins });
    await repository.applySnapshot(withOrigins(1, [{ origin: 'https://a.example', created_at: '2026-11-23T10:00:00.000Z' }]));
    // A peer removed a.example and added b.example, in a snapshot no newer than ours: both are taken.
    const result = await repository.applySnapshot(
      withOrigins(1, [
        { origin: 'https://a.example', created_at: '2026-11-23T10:00:00.000Z', removed_at: '2026-11-23T10:05:00.000Z' },
        { origin: 'https://b.example', created_at: '2026-11-23T10:04:00.000Z' },
      ]),
    );
    expect(result.changed).toBe(true);
    expect((await repository.listOrigins(id)).map((o) => o.origin)).toEqual(['https://b.example']);
    // An older view of a.example (added, not yet removed) does not bring it back, and is answered with the removal.
    expect(await repository.applySnapshot(withOrigins(2, [{ origin: 'https://a.example', created_at: '2026-11-23T10:00:00.000Z' }, { origin: 'https://b.example', created_at: '2026-11-23T10:04:00.000Z' }]))).toMatchObject({ peerBehind: true });
    expect((await repository.listOrigins(id)).map((o) => o.origin)).toEqual(['https://b.example']);
    // Added again after the removal: the later addition wins.
    await repository.applySnapshot(withOrigins(4, [{ origin: 'https://a.example', created_at: '2026-11-23T10:09:00.000Z' }, { origin: 'https://b.example', created_at: '2026-11-23T10:04:00.000Z' }]));
    expect((await repository.listOrigins(id)).map((o) => o.origin).sort()).toEqual(['https://a.example', 'https://b.example']);
  });

  it('keeps a revocation made in either country, at the earlier time', async () => {
    const id = 'tp_us_revoked';
    await repository.applySnapshot(snapshot(id, 1, ['t']));
    const revoked = snapshot(id, 1, ['t']);
    revoked.api_tokens[0].revoked_at = '2026-11-23T11:00:00.000Z';
    // A peer revoked it in a snapshot no newer than this country's: the revocation still holds.
    expect((await repository.applySnapshot(revoked)).changed).toBe(true);
    const token = await dataSource.getRepository(ApiTokenRecord).findOneOrFail({ where: { applicationId: id } });
    expect(token.revokedAt?.toISOString()).toBe('2026-11-23T11:00:00.000Z');
    // A later snapshot that does not know of the revocation does not undo it, and is told of it.
    expect(await repository.applySnapshot(snapshot(id, 2, ['t']))).toEqual({ changed: true, peerBehind: true });
    expect((await dataSource.getRepository(ApiTokenRecord).findOneOrFail({ where: { applicationId: id } })).revokedAt?.toISOString()).toBe('2026-11-23T11:00:00.000Z');
  });
});
