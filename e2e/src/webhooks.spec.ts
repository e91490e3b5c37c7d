import { Client } from 'pg';
import { WEBHOOK_EVENT_TYPES } from '@dcr/domain';
import { verifyWebhook } from '@dcr/server-sdk';
import { WebhookReceiver } from '@dcr/testing';
import { WEBHOOKS_SUBSCRIPTIONS_CHANGED, WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT, WebhookSubscriptionsSnapshotReply } from '@dcr/contracts';
import { lastValueFrom } from 'rxjs';
import { allPages, applicationWithToken, countryClient, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';

/**
 * Webhooks end to end against a real HTTP receiver on loopback, with the retry waits shortened:
 * subscriptions, signed deliveries of decision events, retries after a 5xx with the same event id,
 * a 4xx not retried, disablement after five failures, test deliveries, replay and secret rotation.
 */
describe('webhooks', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  let receiver: WebhookReceiver;
  let db: Client;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;

  const api = (method: string, path: string, body?: unknown, token = apiToken) => http(us.url, method, path, { token, body });
  const subscribe = async (path: string, events: string[], app = applicationId) => {
    const created = await api('POST', `/api/v1/applications/${app}/webhooks`, { url: `${receiver.url}${path}`, events });
    expect(created.status).toBe(201);
    return created.body as { id: string; secret: string; status: string };
  };
  const deliveries = async (subscriptionId: string) =>
    (await api('GET', `/api/v1/applications/${applicationId}/webhooks/${subscriptionId}/deliveries`)).body.data as Array<Record<string, any>>;

  async function activeFlow(): Promise<string> {
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Newsletter',
      pattern: 'informed',
      purposes: ['newsletter'],
      purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } },
      consent_duration: 'P1Y',
    });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    return flow.body.id;
  }

  /** Each granted decision's public session id (`dcs_…`, in the create answer), by its session token. */
  const sessionIds = new Map<string, string>();

  async function grantedDecision(flowId: string, country = us): Promise<string> {
    const created = await http(country.url, 'POST', '/api/v1/decisions', { token: apiToken, body: { kind: 'consent', flow_id: flowId } });
    expect(created.status).toBe(201);
    const token = created.body.session_token;
    sessionIds.set(token, created.body.session_id);
    for (const to of ['informed', 'evidenced']) await http(country.url, 'POST', `/api/v1/decisions/${token}/transitions`, { body: { to } });
    expect((await http(country.url, 'POST', `/api/v1/decisions/${token}/complete`, { body: { outcome: 'granted' } })).status).toBe(200);
    return token;
  }

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    const env = { WEBHOOK_RETRY_WAITS: '100ms,200ms,300ms,400ms', WEBHOOK_READ_TIMEOUT: '300ms' };
    countries = await startCountryPair({ adminToken, env });
    ({ us, de } = countries);
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await countries?.close();
    await receiver?.close();
  });

  it('creates a subscription whose secret is shown once and stored only encrypted', async () => {
    const created = await subscribe('/ok', ['consent.granted']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^whk_/), status: 'enabled', secret: expect.stringMatching(/^whsec_/) });
    const listed = await api('GET', `/api/v1/applications/${applicationId}/webhooks`);
    expect(listed.body.data.map((item: { id: string }) => item.id)).toContain(created.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);
    const one = await api('GET', `/api/v1/applications/${applicationId}/webhooks/${created.id}`);
    expect(one.body).not.toHaveProperty('secret');
    const { rows } = await db.query('SELECT secret_sealed FROM webhooks.subscriptions WHERE id = $1', [created.id]);
    expect(rows[0].secret_sealed).not.toContain(created.secret.slice(6));
    expect(rows[0].secret_sealed).toMatch(/^v1\./);
  });

  it('refuses bad URLs and unknown event types, naming the field', async () => {
    const bad = await api('POST', `/api/v1/applications/${applicationId}/webhooks`, { url: 'ftp://example.com/x', events: ['consent.granted'] });
    expect(bad.status).toBe(422);
    expect(bad.body.details[0].field).toBe('url');
    const unknown = await api('POST', `/api/v1/applications/${applicationId}/webhooks`, { url: `${receiver.url}/ok`, events: ['consent.maybe'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.details[0].field).toMatch(/^events/);
    // The OpenAPI document names the event types a subscription may ask for (it said only "string").
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    expect(document.components.schemas.CreateWebhookDto.properties.events.items).toEqual({ type: 'string', enum: [...WEBHOOK_EVENT_TYPES] });
    const missing = await api('POST', `/api/v1/applications/${applicationId}/webhooks`, { url: `${receiver.url}/ok` });
    expect(missing.status).toBe(422);
    expect(missing.body.details.map((d: { field: string }) => d.field)).toContain('events');

    const production = await http(us.url, 'POST', '/api/v1/applications', { token: adminToken, body: { name: 'Prod', environment: 'production' } });
    for (const url of [`${receiver.url}/ok`, 'https://10.1.2.3/hook', 'https://localhost/hook', 'http://example.com/hook']) {
      const refused = await http(us.url, 'POST', `/api/v1/applications/${production.body.id}/webhooks`, { token: adminToken, body: { url, events: ['consent.granted'] } });
      expect(refused.status).toBe(422);
      expect(refused.body.details[0].field).toBe('url');
    }
    const fine = await http(us.url, 'POST', `/api/v1/applications/${production.body.id}/webhooks`, {
      token: adminToken,
      body: { url: 'https://hooks.example.com/decisions', events: ['consent.granted'] },
    });
    expect(fine.status).toBe(201);
  });

  it('delivers a decision event signed, with the headers and body of the contract', async () => {
    const subscription = await subscribe('/ok?granted', ['consent.granted']);
    const flowId = await activeFlow();
    const sessionToken = await grantedDecision(flowId);
    await eventually(async () => receiver.at('/ok?granted').length === 1);
    const [delivery] = receiver.at('/ok?granted');
    const verified = verifyWebhook<Record<string, unknown>>({ secret: subscription.secret, headers: delivery.headers, rawBody: delivery.body });
    expect(verified).toMatchObject({ event: 'consent.granted', applicationId });
    const body = JSON.parse(delivery.body);
    expect(Object.keys(body)).toEqual(['event', 'id', 'created_at', 'application_id', 'data']);
    expect(delivery.headers['x-service-event-id']).toBe(body.id);
    expect(delivery.headers['x-service-event-type']).toBe('consent.granted');
    expect(Math.abs(Number(delivery.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(body.data).toMatchObject({ outcome: 'granted', flow_id: flowId, kind: 'consent', session_id: expect.stringMatching(/^dcs_/) });
    // The create answer names the session's public id, which is how the organisation matches it; the
    // session token (the participant's credential) is in no event, webhook or audit entry.
    expect(body.data.session_id).toBe(sessionIds.get(sessionToken));
    expect(delivery.body).not.toContain(sessionToken);
    expect(body.data).not.toHaveProperty('session_token');
    const auditPayloads = async () => (await db.query(`SELECT payload::text AS payload FROM audit_chain.entries WHERE event_type = 'consent.granted'`)).rows.map((row) => row.payload as string);
    await eventually(async () => (await auditPayloads()).some((payload) => payload.includes(body.data.session_id)));
    expect((await auditPayloads()).filter((payload) => payload.includes(sessionToken))).toEqual([]);
    expect(JSON.stringify(body)).not.toMatch(/"consent_token"/);
    expect(() => verifyWebhook({ secret: 'whsec_wrong', headers: delivery.headers, rawBody: delivery.body })).toThrow();

    // The receiver has the request before the dispatcher records its outcome (outcomes are written in batches).
    await eventually(async () => (await deliveries(subscription.id))[0]?.status !== 'delivering');
    const [logged] = await deliveries(subscription.id);
    expect(logged).toMatchObject({ status: 'succeeded', attempts: 1, event_id: body.id, test: false });
    expect(logged.attempt_log).toEqual([expect.objectContaining({ attempt: 1, response_status: 200, response_excerpt: 'thanks', error: null })]);
    expect(logged.request.body).toBe(delivery.body);
  });

  it('retries after a 5xx with the same event id, and stops at once after a 4xx (a failed delivery on the audit trail)', async () => {
    const flaky = await subscribe('/flaky-2', ['flow.activated']);
    const rejecting = await subscribe('/reject?once', ['flow.activated']);
    await activeFlow();
    await eventually(async () => (await deliveries(flaky.id))[0]?.status === 'succeeded');
    const attempts = receiver.at('/flaky-2');
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((item) => item.headers['x-service-event-id'])).size).toBe(1);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(150);
    expect((await deliveries(flaky.id))[0].attempt_log.map((a: { response_status: number }) => a.response_status)).toEqual([503, 503, 200]);

    await eventually(async () => (await deliveries(rejecting.id))[0]?.status === 'failed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/reject?once')).toHaveLength(1);
    const [failed] = await deliveries(rejecting.id);
    expect(failed).toMatchObject({ attempts: 1, next_attempt_at: null });
    await eventually(async () => {
      const trail = await api('GET', `/api/v1/applications/${applicationId}/audit?type=webhook.delivery_failed`);
      return trail.body.data.some((entry: { actor: { type: string } }) => entry.actor.type === 'system');
    });
    const subscriptionState = await api('GET', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}`);
    expect(subscriptionState.body.consecutive_failures).toBe(1);
  });

  it('gives up after five attempts and disables a subscription after five failed deliveries; enable resets it', async () => {
    const down = await subscribe('/down', ['flow.activated']);
    await activeFlow();
    await eventually(async () => (await deliveries(down.id))[0]?.status === 'failed', 15000);
    expect((await deliveries(down.id))[0].attempts).toBe(5);
    expect(receiver.at('/down')).toHaveLength(5);

    const rejecting = await subscribe('/reject?five', ['flow.activated']);
    // Test deliveries never count.
    for (let i = 0; i < 6; i++) expect((await api('POST', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}/test`)).status).toBe(202);
    await eventually(async () => receiver.at('/reject?five').length === 6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await api('GET', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}`)).body).toMatchObject({ status: 'enabled', consecutive_failures: 0 });

    for (let i = 0; i < 5; i++) await activeFlow();
    await eventually(async () => (await api('GET', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}`)).body.status === 'disabled');
    const disabled = (await api('GET', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}`)).body;
    expect(disabled).toMatchObject({ consecutive_failures: 5, disabled_reason: 'five consecutive failed deliveries' });
    await eventually(async () => (await api('GET', `/api/v1/applications/${applicationId}/audit?type=webhook.subscription_disabled`)).body.data.length > 0);

    const before = receiver.at('/reject?five').length;
    await activeFlow();
    // A replay on the disabled subscription is refused, naming it, and queues nothing.
    const failedOne = (await deliveries(rejecting.id)).find((delivery) => !delivery.test);
    const replay = await api('POST', `/api/v1/webhook_deliveries/${failedOne!.id}/replay`);
    expect([replay.status, replay.body.code, replay.body.details?.[0]?.field]).toEqual([409, 'conflict', 'subscription']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/reject?five')).toHaveLength(before);

    // The event that happened while it was disabled is in the log, not sent and not counted, saying why
    // (it was dropped: nothing to see or replay).
    await eventually(async () => (await deliveries(rejecting.id)).some((delivery) => delivery.failure_reason !== null));
    const missed = (await deliveries(rejecting.id)).find((delivery) => delivery.failure_reason !== null)!;
    expect(missed).toMatchObject({ status: 'failed', attempts: 0, attempt_log: [], failure_reason: expect.stringMatching(/disabled when the event happened/) });
    expect((await api('GET', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}`)).body.consecutive_failures).toBe(5);

    const enabled = await api('POST', `/api/v1/applications/${applicationId}/webhooks/${rejecting.id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', consecutive_failures: 0, disabled_reason: null });
    // Enabled again, what it missed is replayed: the same event reaches the receiver.
    expect((await api('POST', `/api/v1/webhook_deliveries/${missed.id}/replay`)).status).toBe(202);
    await eventually(async () => receiver.at('/reject?five').some((hit) => hit.headers['x-service-event-id'] === missed.event_id));
  });

  it('retries a receiver that does not answer in time, with the same event id, and then fails the delivery', async () => {
    const hanging = await subscribe('/hang', ['flow.activated']);
    await activeFlow();
    await eventually(async () => (await deliveries(hanging.id))[0]?.status === 'failed', 15000);
    const [delivery] = await deliveries(hanging.id);
    expect(delivery.attempts).toBe(5);
    expect(delivery.attempt_log.map((a: { error: string; response_status: number | null }) => [a.error, a.response_status])).toEqual(
      Array.from({ length: 5 }, () => ['read timeout', null]),
    );
    expect(new Set(receiver.at('/hang').map((item) => item.headers['x-service-event-id']))).toEqual(new Set([delivery.event_id]));
    expect(receiver.at('/hang')).toHaveLength(5);
  });

  it('sends test deliveries through the signed pipeline, replays a delivery with its event id, and rotates the secret', async () => {
    const subscription = await subscribe('/ok?tools', ['consent.revoked']);
    const test = await api('POST', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/test`);
    expect(test.status).toBe(202);
    expect(test.body).toMatchObject({ event_type: 'webhook.test', test: true });
    await eventually(async () => receiver.at('/ok?tools').length === 1);
    const first = receiver.at('/ok?tools')[0];
    expect(verifyWebhook({ secret: subscription.secret, headers: first.headers, rawBody: first.body }).event).toBe('webhook.test');

    const replayed = await api('POST', `/api/v1/webhook_deliveries/${test.body.id}/replay`);
    expect(replayed.status).toBe(202);
    expect(replayed.body).toMatchObject({ replay_of: test.body.id, event_id: test.body.event_id });
    await eventually(async () => receiver.at('/ok?tools').length === 2);
    const second = receiver.at('/ok?tools')[1];
    expect(second.headers['x-service-event-id']).toBe(first.headers['x-service-event-id']);
    expect(second.body).toBe(first.body);
    const inspected = await api('GET', `/api/v1/webhook_deliveries/${replayed.body.id}`);
    expect(inspected.status).toBe(200);
    await eventually(async () => (await api('GET', `/api/v1/webhook_deliveries/${replayed.body.id}`)).body.status === 'succeeded');

    const rotated = await api('POST', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(subscription.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.parse(rotated.body.updated_at)).toBe(24 * 3_600_000);
    await api('POST', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/test`);
    await eventually(async () => receiver.at('/ok?tools').length === 3);
    const third = receiver.at('/ok?tools')[2];
    expect(verifyWebhook({ secret: rotated.body.secret, headers: third.headers, rawBody: third.body }).event).toBe('webhook.test');
    // For a day the old secret signs too, a second value after the new one's, so a receiver switching over loses nothing.
    expect(third.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhook({ secret: subscription.secret, headers: third.headers, rawBody: third.body }).event).toBe('webhook.test');
    // A day later only the new one does.
    await db.query(`UPDATE webhooks.subscriptions SET previous_secret_until = now() - interval '1 second' WHERE id = $1`, [subscription.id]);
    await api('POST', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/test`);
    await eventually(async () => receiver.at('/ok?tools').length === 4);
    const fourth = receiver.at('/ok?tools')[3];
    expect(fourth.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifyWebhook({ secret: rotated.body.secret, headers: fourth.headers, rawBody: fourth.body }).event).toBe('webhook.test');
    expect(() => verifyWebhook({ secret: subscription.secret, headers: fourth.headers, rawBody: fourth.body })).toThrow();

    const wanted = ['webhook.subscription_created', 'webhook.secret_rotated', 'webhook.delivery_replayed'];
    await eventually(async () => {
      const trail = await api('GET', `/api/v1/applications/${applicationId}/audit?type=${wanted.join(',')}&limit=200`);
      const types = new Set(trail.body.data.map((entry: { event_type: string }) => entry.event_type));
      return wanted.every((type) => types.has(type));
    });
  });

  it('keeps a subscription in force in every country: made in one, rotated in the other, deleted in the first', async () => {
    const subscription = await subscribe('/ok?everywhere', ['consent.granted']);
    // US's snapshot as a peer pulls it, while the subscription is at its first revision.
    const toUs = countryClient(us);
    const toDe = countryClient(de);
    const snapshot = () => lastValueFrom(toUs.send<WebhookSubscriptionsSnapshotReply>(WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT, { from_country: 'DE' }));
    const first = (await snapshot()).subscriptions.find((replica: { id: string }) => replica.id === subscription.id);
    expect(first).toMatchObject({ revision: 1, status: 'enabled', deleted_at: null });
    expect(JSON.stringify(first)).not.toContain(subscription.secret.slice(6));
    const flowId = await activeFlow();
    const inDe = (method: string, path: string) => http(de.url, method, path, { token: apiToken });
    const deRow = async () => (await inDe('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).body;
    await eventually(async () => (await inDe('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status === 200);
    expect(await deRow()).toMatchObject({ id: subscription.id, url: `${receiver.url}/ok?everywhere`, events: ['consent.granted'], status: 'enabled' });
    expect((await inDe('GET', `/api/v1/applications/${applicationId}/webhooks`)).body.data.map((item: { id: string }) => item.id)).toContain(subscription.id);
    // DE keeps the secret sealed under its own key, not as US sealed it.
    const deDb = new Client({ connectionString: de.database.url });
    await deDb.connect();
    try {
      const [usSealed, deSealed] = await Promise.all([
        db.query('SELECT secret_sealed FROM webhooks.subscriptions WHERE id = $1', [subscription.id]),
        deDb.query('SELECT secret_sealed FROM webhooks.subscriptions WHERE id = $1', [subscription.id]),
      ]);
      expect(deSealed.rows[0].secret_sealed).toMatch(/^v1\./);
      expect(deSealed.rows[0].secret_sealed).not.toBe(usSealed.rows[0].secret_sealed);
      expect(deSealed.rows[0].secret_sealed).not.toContain(subscription.secret.slice(6));

      // A decision made in DE (its person's data stays there) is delivered from DE, signed with the one secret.
      await eventually(async () => (await inDe('GET', `/api/v1/flows/${flowId}`)).status === 200);
      await grantedDecision(flowId, de);
      await eventually(async () => receiver.at('/ok?everywhere').length === 1);
      const fromDe = receiver.at('/ok?everywhere')[0];
      expect(verifyWebhook<Record<string, any>>({ secret: subscription.secret, headers: fromDe.headers, rawBody: fromDe.body })).toMatchObject({ event: 'consent.granted' });
      expect((await deDb.query('SELECT count(*)::int AS n FROM webhooks.deliveries WHERE subscription_id = $1', [subscription.id])).rows[0].n).toBe(1);
      expect((await db.query('SELECT count(*)::int AS n FROM webhooks.deliveries WHERE subscription_id = $1', [subscription.id])).rows[0].n).toBe(0);

      // Rotated in DE: US signs with the new secret from then on.
      const rotated = await inDe('POST', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/rotate_secret`);
      expect(rotated.status).toBe(200);
      await eventually(async () => (await api('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).body.updated_at === rotated.body.updated_at);
      await grantedDecision(flowId);
      await eventually(async () => receiver.at('/ok?everywhere').length === 2);
      const fromUs = receiver.at('/ok?everywhere')[1];
      expect(verifyWebhook({ secret: rotated.body.secret, headers: fromUs.headers, rawBody: fromUs.body }).event).toBe('consent.granted');
      // The secret rotated away in DE signs beside it in US too, for the day DE keeps it.
      expect(verifyWebhook({ secret: subscription.secret, headers: fromUs.headers, rawBody: fromUs.body }).event).toBe('consent.granted');
      const until = async (client: Client) => (await client.query('SELECT previous_secret_until FROM webhooks.subscriptions WHERE id = $1', [subscription.id])).rows[0].previous_secret_until;
      expect((await until(db)).toISOString()).toBe((await until(deDb)).toISOString());

      // Deleted in US: gone in DE too, and DE's decisions reach nobody.
      expect((await api('DELETE', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status).toBe(204);
      await eventually(async () => (await inDe('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status === 404);
      expect((await deDb.query('SELECT deleted_at, revision FROM webhooks.subscriptions WHERE id = $1', [subscription.id])).rows[0]).toMatchObject({
        deleted_at: expect.any(Date),
        revision: 3,
      });
      // The first revision arriving late (a lost race, a slow pull) changes nothing.
      await lastValueFrom(toDe.emit(WEBHOOKS_SUBSCRIPTIONS_CHANGED, { subscriptions: [first] }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await inDe('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status).toBe(404);
      // A country that missed every push catches up from the snapshot (what its minutely pull stores).
      await deDb.query('DELETE FROM webhooks.subscriptions WHERE id = $1', [subscription.id]);
      const current = (await snapshot()).subscriptions.find((replica: { id: string }) => replica.id === subscription.id);
      await lastValueFrom(toDe.emit(WEBHOOKS_SUBSCRIPTIONS_CHANGED, { subscriptions: [first, current] }));
      await eventually(async () => (await deDb.query('SELECT revision FROM webhooks.subscriptions WHERE id = $1', [subscription.id])).rows[0]?.revision === 3);
      expect((await inDe('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status).toBe(404);
    } finally {
      await deDb.end();
      await Promise.all([toUs.close(), toDe.close()]);
    }
  });

  it('needs the webhooks scopes: webhooks:read to read, webhooks:write to change', async () => {
    const tokenWith = async (scopes: string[]) =>
      (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: adminToken, body: { scopes } })).body.token as string;
    const webhooksOnly = await tokenWith(['webhooks:read', 'webhooks:write']);
    const readOnly = await tokenWith(['webhooks:read']);
    const applicationsOnly = await tokenWith(['applications:read', 'applications:write']);
    const path = `/api/v1/applications/${applicationId}/webhooks`;
    const made = await api('POST', path, { url: `${receiver.url}/ok?scopes`, events: ['consent.denied'] }, webhooksOnly);
    expect(made.status).toBe(201);
    expect((await api('GET', `${path}/${made.body.id}`, undefined, readOnly)).status).toBe(200);
    const cannotWrite = await api('POST', `${path}/${made.body.id}/rotate_secret`, undefined, readOnly);
    expect(cannotWrite.status).toBe(403);
    expect(cannotWrite.body.message).toContain('webhooks:write');
    const notThatScope = await api('GET', path, undefined, applicationsOnly);
    expect(notThatScope.status).toBe(403);
    expect(notThatScope.body.message).toContain('webhooks:read');
    expect((await api('DELETE', `${path}/${made.body.id}`, undefined, webhooksOnly)).status).toBe(204);
  });

  it('scopes subscriptions and deliveries to the caller\'s account', async () => {
    const subscription = await subscribe('/ok?scoped', ['consent.denied']);
    const test = await api('POST', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/test`);
    const { applicationId: other, apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other', environment: 'sandbox' });
    expect((await api('GET', `/api/v1/applications/${applicationId}/webhooks`, undefined, otherToken)).status).toBe(404);
    expect((await api('GET', `/api/v1/webhook_deliveries/${test.body.id}`, undefined, otherToken)).status).toBe(404);
    expect((await api('POST', `/api/v1/webhook_deliveries/${test.body.id}/replay`, undefined, otherToken)).status).toBe(404);
    // Another application's subscription id under this application is not found either.
    const foreign = await http(us.url, 'POST', `/api/v1/applications/${other}/webhooks`, { token: otherToken, body: { url: `${receiver.url}/ok`, events: ['consent.denied'] } });
    expect((await api('GET', `/api/v1/applications/${applicationId}/webhooks/${foreign.body.id}`)).status).toBe(404);
    // Its deliveries are not found under another application's path either, nor once it is deleted.
    expect((await api('GET', `/api/v1/applications/${other}/webhooks/${subscription.id}/deliveries`, undefined, otherToken)).status).toBe(404);
    expect((await api('DELETE', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status).toBe(204);
    expect((await api('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}`)).status).toBe(404);
    expect((await api('GET', `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/deliveries`)).status).toBe(404);
  });

  it('lists deliveries of large events in pages that fit one message on the bus, every delivery once', async () => {
    const subscription = await subscribe('/ok', ['consent.granted']);
    // A flow of 100 purposes: each record's event (and so each delivery's body) is about 9 KB.
    const keys = Array.from({ length: 100 }, (_, i) => `purpose_with_a_long_key_that_takes_many_bytes_of_each_event_${String(i).padStart(3, '0')}`);
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Preferences',
      pattern: 'standard',
      purposes: keys,
      purpose_definitions: Object.fromEntries(keys.map((key) => [key, { label: key, basis: 'consent' }])),
      consent_duration: 'P1Y',
    });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const decisions = Object.fromEntries(keys.map((key) => [key, { decision: 'granted' }]));
    const records = Array.from({ length: 150 }, (_, i) => ({ subject: { email: `large-${i}@example.com` }, decisions, captured_at: '2026-11-20T10:00:00Z' }));
    expect((await api('POST', '/api/v1/consent_records/imports', { flow_id: flow.body.id, dry_run: false, records })).body.summary).toEqual({ recorded: 150, refused: 0 });
    await eventually(async () => Number((await db.query(`SELECT count(*) FROM webhooks.deliveries WHERE subscription_id = $1`, [subscription.id])).rows[0].count) === 150, 30000);
    const bodies = await db.query(`SELECT sum(octet_length(body))::int AS n FROM webhooks.deliveries WHERE subscription_id = $1`, [subscription.id]);
    expect(bodies.rows[0].n).toBeGreaterThan(1024 * 1024);
    const { ids: listed, pages } = await allPages(us.url, `/api/v1/applications/${applicationId}/webhooks/${subscription.id}/deliveries?limit=200`, apiToken);
    expect(pages).toBeGreaterThan(1);
    expect(listed).toHaveLength(150);
    expect(new Set(listed).size).toBe(150);
  }, 60000);

  it("lists an application's subscriptions though they are more than one message on the bus carries", async () => {
    const model = await subscribe('/ok', ['consent.granted']);
    // 500 more of them, each with a long URL (about 2.2 KB listed): over 1 MiB in all.
    await db.query(
      `INSERT INTO webhooks.subscriptions (id, application_id, url, events, environment, status, secret_sealed, consecutive_failures, disabled_reason, created_at, updated_at, deleted_at, revision)
       SELECT 'whk_' || lpad(g::text, 20, '0'), s.application_id, s.url || '?padding=' || repeat('p', 2000) || '&n=' || g, s.events, s.environment, s.status, s.secret_sealed, 0, NULL,
              now() + g * interval '1 millisecond', now(), NULL, 1
         FROM generate_series(1, 500) g, webhooks.subscriptions s WHERE s.id = $1`,
      [model.id],
    );
    const { ids: listed } = await allPages(us.url, `/api/v1/applications/${applicationId}/webhooks?limit=200`, apiToken);
    expect(listed).toEqual(expect.arrayContaining([model.id, 'whk_00000000000000000001', 'whk_00000000000000000500']));
    expect(new Set(listed).size).toBe(listed.length);
    await db.query(`DELETE FROM webhooks.subscriptions WHERE id LIKE 'whk_000000000000%'`);
  }, 60000);
});
