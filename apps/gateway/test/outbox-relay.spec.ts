import 'reflect-metadata';
import { AUDIT_APPEND, AuditAppendRequest } from '@dcr/contracts';
import { DomainError } from '@dcr/domain';
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

  async function writeEvents(count: number, padding = 0): Promise<string[]> {
    const at = Date.now();
    const rows = Array.from({ length: count }, (_, i) =>
      outboxRow({
        type: 'credential.api_token_created',
        applicationId: 'tp_us_relay',
        occurredAt: new Date(at + i),
        data: { api_token_id: `api_token_${i}`, actor: { type: 'operator' }, ...(padding > 0 ? { padding: 'p'.repeat(padding) } : {}) },
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

  it('sets aside an event the trail refuses alone, relays the rest, and relays it once its time comes and the trail takes it', async () => {
    appended.length = 0;
    const ids = await writeEvents(4);
    const poison = ids[1];
    let takesPoison = false;
    answer = (request) =>
      !takesPoison && request.events.some((event) => event.id === poison)
        ? throwError(() => new DomainError('internal_error', 'The service failed to process the message'))
        : of({ entries: [] });
    let clock = Date.now();
    const now = jest.spyOn(relay as unknown as { now: () => number }, 'now').mockImplementation(() => clock);
    try {
      relay.kick();
      // The batch of four is refused; one at a time, the three others are relayed in order around it.
      await until(async () => (await rowsLeft()).length === 1);
      expect(await rowsLeft()).toEqual([poison]);
      expect(relay.parkedEvents().get(poison)).toBe(clock + 30_000);
      const relayedAlone = appended.filter((request) => request.events.length === 1).map((request) => request.events[0].id);
      expect(relayedAlone).toEqual(ids);

      // While it is set aside, new events pass it, and it is not sent again.
      const sentBefore = appended.length;
      const [later] = await writeEvents(1);
      relay.kick();
      await until(async () => !(await rowsLeft()).includes(later));
      expect(appended.slice(sentBefore).flatMap((request) => request.events.map((event) => event.id))).toEqual([later]);
      expect(await rowsLeft()).toEqual([poison]);

      // Refused again once its time came: set aside twice as long.
      clock += 30_001;
      relay.kick();
      await until(async () => relay.parkedEvents().get(poison) === clock + 60_000);
      expect(await rowsLeft()).toEqual([poison]);

      // Once the trail takes it and its time has come, it is relayed and forgotten.
      takesPoison = true;
      clock += 60_001;
      relay.kick();
      await until(async () => (await rowsLeft()).length === 0);
      expect(relay.parkedEvents().size).toBe(0);
    } finally {
      now.mockRestore();
    }
  });

  it('sets nothing aside when the trail does not answer: the whole batch waits for the next try', async () => {
    appended.length = 0;
    answer = () => throwError(() => new DomainError('upstream_timeout', 'No reply on audit-chain.append within 10000 ms'));
    const ids = await writeEvents(2);
    relay.kick();
    await until(async () => appended.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(appended.every((request) => request.events.length === 2)).toBe(true);
    expect(relay.parkedEvents().size).toBe(0);
    expect(await rowsLeft()).toEqual(ids);
    answer = () => of({ entries: [] });
    relay.kick();
    await until(async () => (await rowsLeft()).length === 0);
  });

  it('halves its batches while the bus refuses them as too large, instead of sending every event alone', async () => {
    appended.length = 0;
    // The bus of a NATS deployment: a message over its max_payload is refused before it is sent.
    const maxPayload = 100_000;
    answer = (request) =>
      JSON.stringify(request).length > maxPayload
        ? throwError(() => new DomainError('payload_too_large', 'The message for us.audit-chain.append is larger than the bus accepts'))
        : of({ entries: [] });
    const ids = await writeEvents(40, 10_000);
    relay.kick();
    await until(async () => (await rowsLeft()).length === 0);
    const delivered = appended.filter((request) => JSON.stringify(request).length <= maxPayload);
    // In order, each once, in batches as large as fit (8 of about 10 KB fit 100 KB: 40, 20, 10 refused, then 5 at a time).
    expect(delivered.flatMap((request) => request.events.map((event) => event.id))).toEqual(ids);
    expect(delivered.map((request) => request.events.length)).toEqual([5, 5, 5, 5, 5, 5, 5, 5]);
    expect(relay.parkedEvents().size).toBe(0);

    // The next drain starts from full batches again.
    appended.length = 0;
    answer = () => of({ entries: [] });
    const small = await writeEvents(3);
    relay.kick();
    await until(async () => (await rowsLeft()).length === 0);
    expect(appended.map((request) => request.events.map((event) => event.id))).toEqual([small]);
  });
});
