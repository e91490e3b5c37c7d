import 'reflect-metadata';
import { AUDIT_APPEND, AuditAppendRequest } from '@dcr/contracts';
import { insertOutboxRows, outboxRow, ServiceClients } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient } from '@dcr/transport';
import { Observable, of, throwError } from 'rxjs';
import { DataSource } from 'typeorm';
import { ConfigurationAuditRelay } from '../src/connect/configuration-audit';
import { gatewayService } from '../src/gateway.service';

/**
 * The outbox relay (libs/service-kit) on the gateway's real outbox table: what it sends to the audit
 * trail, and that it deletes a row only in the transaction that saw its event onto the trail. The
 * audit-chain service's answer is played by `answer` (the database is real).
 */
describe('OutboxRelay on the gateway outbox', () => {
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let relay: ConfigurationAuditRelay;
  const appended: AuditAppendRequest[] = [];
  let answer: (request: AuditAppendRequest) => Observable<unknown> = () => of({ entries: [] });

  beforeAll(async () => {
    database = await migratedServiceDatabase(gatewayService, 'outbox_relay');
    dataSource = database.dataSource;
    const own = {
      send: (pattern: string, request: AuditAppendRequest) => {
        expect(pattern).toBe(AUDIT_APPEND);
        appended.push(request);
        return answer(request);
      },
    };
    relay = new ConfigurationAuditRelay(dataSource, new ServiceClients(own as unknown as CountryClient, new Map()));
  });

  afterAll(async () => {
    await relay?.onApplicationShutdown();
    await database?.close();
  });

  const rowsLeft = async () => (await dataSource.query(`SELECT "id" FROM "gateway"."outbox" ORDER BY "id"`)).map((row: { id: string }) => row.id);

  async function until(check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('not reached in 2 s');
  }

  async function writeEvents(count: number): Promise<string[]> {
    const at = Date.now();
    const rows = Array.from({ length: count }, (_, i) =>
      outboxRow({
        type: 'credential.api_token_created',
        applicationId: 'tp_us_relay',
        occurredAt: new Date(at + i),
        data: { api_token_id: `api_token_${i}`, actor: { type: 'operator' } },
      }),
    );
    // Written in reverse: the relay sends them in the order they were made (their ids, newEventId), not by insertion.
    await dataSource.transaction((manager) => insertOutboxRows(manager, [...rows].reverse()));
    return rows.map((row) => row.id);
  }

  it('sends the rows to the trail in the order they were made, then deletes them', async () => {
    appended.length = 0;
    answer = () => of({ entries: [] });
    const ids = await writeEvents(3);
    relay.kick();
    await until(async () => (await rowsLeft()).length === 0);
    expect(appended).toHaveLength(1);
    expect(appended[0].source).toBe('gateway');
    expect(appended[0].events.map((event) => event.id)).toEqual(ids);
    expect(appended[0].events[0]).toMatchObject({ type: 'credential.api_token_created', application_id: 'tp_us_relay', actor: { type: 'operator' }, payload: { api_token_id: 'api_token_0' } });
  });

  it('keeps every row of a batch the trail did not confirm, and sends them again', async () => {
    appended.length = 0;
    answer = () => throwError(() => new Error('audit trail unavailable'));
    const ids = await writeEvents(2);
    relay.kick();
    await until(async () => appended.length >= 1);
    // The failed batch's transaction has ended (the relay is idle again) and left both rows.
    await until(
      async () =>
        (await dataSource.query(`SELECT 1 FROM pg_locks l WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND l.relation = 'gateway.outbox'::regclass`))
          .length === 0,
    );
    expect(await rowsLeft()).toEqual(ids);

    answer = () => of({ entries: [] });
    relay.kick();
    await until(async () => (await rowsLeft()).length === 0);
    expect(appended.at(-1)!.events.map((event) => event.id)).toEqual(ids);
  });
});
