import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { firstValueFrom, timeout } from 'rxjs';
import { subjectPrefix } from '@dcr/config';
import { healthPattern, WEBHOOKS_CREATE, WEBHOOKS_ENQUEUE, WebhookWithSecretMessage } from '@dcr/contracts';
import { createTestDatabase, testNatsUrl, TestDatabase, uniquePrefix, WebhookReceiver } from '@dcr/testing';
import { CountryClient, createTransportClient } from '@dcr/transport';

const MAIN = path.join(__dirname, '../dist/main.js');

/**
 * The webhooks service as its own process on real NATS and PostgreSQL, killed (SIGKILL) while a
 * delivery is in flight: after a restart the claim expires and the same event is delivered.
 */
describe('webhooks: a worker killed mid-delivery', () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let client: CountryClient;
  let worker: ChildProcess | undefined;
  const namespace = uniquePrefix('whk');
  const subjectRefKey = randomBytes(32).toString('hex');

  function startWorker(): ChildProcess {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        COUNTRY: 'US',
        REGION: 'dev',
        DATABASE_URL: database.url,
        TRANSPORT: 'nats',
        NATS_URL: testNatsUrl(),
        SUBJECT_NAMESPACE: namespace,
        SUBJECT_REF_KEY: subjectRefKey,
        NODE_ENV: 'test',
        LOG_LEVEL: 'error',
        WEBHOOK_CLAIM_LEASE: '1s',
      },
      stdio: 'ignore',
    });
    return child;
  }

  async function ready(): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await firstValueFrom(client.send(healthPattern('webhooks'), {}).pipe(timeout(1000)));
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase('webhooks_crash');
    receiver = new WebhookReceiver();
    await receiver.start();
    client = createTransportClient('nats', { servers: testNatsUrl(), prefix: subjectPrefix('US', namespace), timeoutMs: 5000 });
  });

  afterAll(async () => {
    worker?.kill('SIGKILL');
    await client?.close();
    await receiver?.close();
    await database?.drop();
  });

  it('delivers the event after a restart, with the same event id', async () => {
    worker = startWorker();
    await ready();
    const applicationId = 'tp_dev_0123456789abcdef';
    const subscription = await firstValueFrom(
      client.send<WebhookWithSecretMessage>(WEBHOOKS_CREATE, {
        application_id: applicationId,
        environment: 'sandbox',
        url: `${receiver.url}/hang-once`,
        events: ['consent.granted'],
        actor: { type: 'operator' },
      }),
    );
    const eventId = `evt_${randomBytes(10).toString('hex')}`;
    const queued = await firstValueFrom(
      client.send<{ deliveries: number }>(WEBHOOKS_ENQUEUE, {
        events: [{ id: eventId, type: 'consent.granted', application_id: applicationId, occurred_at: new Date().toISOString(), data: { outcome: 'granted' } }],
      }),
    );
    expect(queued.deliveries).toBe(1);

    const until = async (check: () => Promise<boolean> | boolean, ms = 15_000) => {
      const deadline = Date.now() + ms;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error('condition not met in time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await until(() => receiver.at('/hang-once').length === 1);
    const exited = new Promise((resolve) => worker!.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;

    const db = new Client({ connectionString: database.url });
    await db.connect();
    try {
      const claimed = await db.query('SELECT status, attempts FROM webhooks.deliveries WHERE subscription_id = $1', [subscription.id]);
      expect(claimed.rows).toEqual([{ status: 'delivering', attempts: 0 }]);

      worker = startWorker();
      await ready();
      await until(() => receiver.at('/hang-once').length === 2);
      const [first, second] = receiver.at('/hang-once');
      expect(second.headers['x-service-event-id']).toBe(eventId);
      expect(first.headers['x-service-event-id']).toBe(eventId);
      await until(async () => (await db.query(`SELECT 1 FROM webhooks.deliveries WHERE subscription_id = $1 AND status = 'succeeded'`, [subscription.id])).rowCount === 1);
    } finally {
      await db.end();
    }
  }, 60_000);
});
