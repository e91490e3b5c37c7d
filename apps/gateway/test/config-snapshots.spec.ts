import 'reflect-metadata';
import { ApplicationSnapshot } from '@dcr/contracts';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { DataSource } from 'typeorm';
import { ConfigurationAuditRelay } from '../src/connect/configuration-audit';
import { ApiTokenRecord, ApplicationRecord } from '../src/connect/connect.entities';
import { ConnectRepository } from '../src/connect/connect.repository';
import { gatewayService } from '../src/gateway.service';

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

  const snapshot = (id: string, revision: number, tokens: string[]): ApplicationSnapshot => ({
    id,
    account_id: 'acc_test',
    name: 'Acme',
    environment: 'sandbox',
    region: 'us',
    authored_in: 'US',
    revision,
    created_at: '2026-11-23T10:00:00.000Z',
    updated_at: new Date(Date.parse('2026-11-23T10:00:00.000Z') + revision * 1000).toISOString(),
    api_tokens: tokens.map((token) => ({
      id: `api_token_${token}_${id}`,
      name: null,
      token_hash: `hash-${token}-${id}`,
      scopes: ['applications:read'],
      created_at: '2026-11-23T10:00:01.000Z',
      revoked_at: null,
    })),
    publishable_keys: [],
    allowed_origins: [],
  });

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

  it('stores a newer snapshot over an older one and ignores an older or equal one', async () => {
    const id = 'tp_us_ordered';
    expect(await repository.applySnapshot(snapshot(id, 3, ['a']))).toBe(true);
    expect(await repository.applySnapshot(snapshot(id, 2, ['a', 'b']))).toBe(false);
    expect(await repository.applySnapshot(snapshot(id, 3, ['a', 'b']))).toBe(false);
    expect(await stored(id)).toEqual({ revision: 3, tokens: ['api_token_a'] });
    expect(await repository.applySnapshot(snapshot(id, 4, ['a', 'b']))).toBe(true);
    expect(await stored(id)).toEqual({ revision: 4, tokens: ['api_token_a', 'api_token_b'] });
  });
});
