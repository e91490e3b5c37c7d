import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { firstValueFrom } from 'rxjs';
import { AuditChainEnvironment, loadConfig } from '@dcr/config';
import {
  AUDIT_ANCHORS,
  AUDIT_APPEND,
  AUDIT_LIST,
  AUDIT_WITNESS_CONFIGURATION,
  AuditAnchorsReply,
  AuditAppendReply,
  AuditEventInput,
  AuditListReply,
  WitnessConfigurationMessage,
} from '@dcr/contracts';
import { auditLeafData, checkAuditChain, DomainError } from '@dcr/domain';
import { countryContext, startService } from '@dcr/service-kit';
import { createTestDatabase, TestDatabase } from '@dcr/testing';
import { generateNoteKey, leafHash, openNote, parseCheckpoint, parseVerifierKey, rootOfLeaves } from '@dcr/transparency';
import { CountryClient, createTransportClient, InProcessBus } from '@dcr/transport';
import { auditChainService } from '../src/audit-chain.service';

const APPS = ['tp_dev_aaaaaaaaaaaaaaaa', 'tp_dev_bbbbbbbbbbbbbbbb', 'tp_dev_cccccccccccccccc'];
const ORIGIN = 'audit.test.invalid/us';

/**
 * The audit-chain service on its own (in-process transport, real PostgreSQL): concurrent appends
 * from many producers, redeliveries, the interval anchor and key rotation.
 */
describe('audit-chain service', () => {
  let database: TestDatabase;
  let bus: InProcessBus;
  let client: CountryClient;
  let service: { close(): Promise<void> } | undefined;
  let db: Client;
  const firstKey = generateNoteKey(ORIGIN);

  async function start(checkpointKey: string, anchorInterval: string) {
    const env = loadConfig(AuditChainEnvironment, {
      COUNTRY: 'US',
      REGION: 'dev',
      DATABASE_URL: database.url,
      TRANSPORT: 'inprocess',
      SUBJECT_REF_KEY: 'k'.repeat(40),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DB_POOL_SIZE: '4',
      ANCHOR_INTERVAL: anchorInterval,
      AUDIT_LOG_ORIGIN: ORIGIN,
      AUDIT_CHECKPOINT_KEY: checkpointKey,
    });
    service = await startService(countryContext(auditChainService, env, { bus }));
  }

  const event = (application: number, n: number, id = `evt_${randomBytes(10).toString('hex')}`): AuditEventInput => ({
    id,
    type: 'consent.granted',
    application_id: APPS[application],
    actor: { type: 'participant', id: `sub_${n}` },
    occurred_at: new Date(Date.UTC(2026, 10, 22, 12, 0, 0, n)).toISOString(),
    payload: { n, application },
  });
  const append = (events: AuditEventInput[], source = 'test') =>
    firstValueFrom(client.send<AuditAppendReply>(AUDIT_APPEND, { source, events }));

  beforeAll(async () => {
    database = await createTestDatabase('audit_chain');
    bus = new InProcessBus();
    client = createTransportClient('inprocess', { bus, prefix: 'us' });
    await start(firstKey.signerKey, '1h');
    db = new Client({ connectionString: database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await service?.close();
    await client?.close();
    await database?.drop();
  });

  it('sequences concurrent appends into gap-free chains per application and one tree over all of them', async () => {
    const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 25 }, (_, i) => event((b + i) % 3, b * 25 + i)));
    const replies = await Promise.all(batches.map((events) => append(events)));
    expect(replies.reduce((sum, reply) => sum + reply.appended, 0)).toBe(500);
    const leaves = replies.flatMap((reply) => reply.entries.map((entry) => entry.leaf_index)).sort((a, b) => a - b);
    expect(leaves).toEqual(Array.from({ length: 500 }, (_, i) => i));

    for (const application of APPS) {
      const page = await firstValueFrom(client.send<AuditListReply>(AUDIT_LIST, { application_id: application, limit: 1000 }));
      expect(page.entries.length).toBeGreaterThan(150);
      expect(checkAuditChain(page.entries)).toMatchObject({ valid: true });
    }
    const { rows: nodes } = await db.query('SELECT count(*)::int AS n FROM audit_chain.merkle_nodes');
    expect(nodes[0].n).toBe(500 + 31 + 15 + 7 + 3 + 1); // the 500 leaves and every complete subtree of 16 leaves or more
  });

  it('appends a redelivered event once, within one request and across requests', async () => {
    const repeated = event(0, 1);
    const first = await append([repeated, repeated, event(1, 2)]);
    expect(first.appended).toBe(2);
    expect(first.entries[0]).toEqual(first.entries[1]);
    const again = await append([repeated]);
    expect(again).toEqual({ appended: 0, entries: [first.entries[0]] });
    // The same id from another producer is another event.
    expect((await append([repeated], 'other')).appended).toBe(1);
  });

  it('refuses a malformed append with the field named, and writes nothing', async () => {
    const before = (await db.query('SELECT count(*)::int AS n FROM audit_chain.entries')).rows[0].n;
    const error = await append([{ ...event(0, 1), application_id: 'nope' }]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    expect(JSON.stringify((error as DomainError).details)).toContain('application_id');
    expect((await db.query('SELECT count(*)::int AS n FROM audit_chain.entries')).rows[0].n).toBe(before);
  });

  it('anchors on its own every ANCHOR_INTERVAL, and keeps a rotated key verifiable as retired', async () => {
    await service!.close();
    const secondKey = generateNoteKey(ORIGIN);
    await start(secondKey.signerKey, '200ms');
    let anchors: AuditAnchorsReply = { anchors: [], has_more: false };
    const deadline = Date.now() + 10_000;
    while (anchors.anchors.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      anchors = await firstValueFrom(client.send<AuditAnchorsReply>(AUDIT_ANCHORS, { limit: 10 }));
    }
    const size = (await db.query('SELECT count(*)::int AS n FROM audit_chain.entries')).rows[0].n;
    expect(anchors.anchors).toHaveLength(1);
    expect(anchors.anchors[0]).toMatchObject({ tree_size: size, witness_receipts: [] });
    const { rows } = await db.query('SELECT hash FROM audit_chain.entries ORDER BY leaf_index');
    const root = rootOfLeaves(rows.map((row: { hash: string }) => leafHash(auditLeafData(row.hash))));
    expect(anchors.anchors[0].merkle_root).toBe(root.toString('hex'));
    // Nothing new was appended, so the next intervals make no new anchor.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await firstValueFrom(client.send<AuditAnchorsReply>(AUDIT_ANCHORS, { limit: 10 }))).anchors).toHaveLength(1);

    const configuration = await firstValueFrom(client.send<WitnessConfigurationMessage>(AUDIT_WITNESS_CONFIGURATION, {}));
    expect(configuration.log.checkpoint_keys.map((key) => [key.verifier_key, key.status])).toEqual([
      [secondKey.verifierKey, 'current'],
      [firstKey.verifierKey, 'retired'],
    ]);
    expect(configuration.anchor_interval_seconds).toBe(0.2);
    const opened = openNote(anchors.anchors[0].checkpoint, [parseVerifierKey(secondKey.verifierKey)]);
    expect(parseCheckpoint(opened.text)).toMatchObject({ origin: ORIGIN, size });
  });
});
