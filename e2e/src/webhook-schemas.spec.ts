import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT } from '@dcr/domain';
import { verifyWebhook } from '@dcr/server-sdk';
import { WebhookReceiver } from '@dcr/testing';
import { InProcessBus } from '@dcr/transport';
import { applicationWithToken, eventually, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

/**
 * The served OpenAPI document's `webhooks` section describes what a receiver really gets: real
 * deliveries (a hosted consent, a Record API record, its withdrawals, a flow activation, a test
 * delivery) validate against the entry of their event type, and every event type has one.
 */
describe("the OpenAPI document's webhooks, against real deliveries", () => {
  let us: RunningCountry;
  let receiver: WebhookReceiver;
  const adminToken = randomSecret();
  let apiToken: string;
  let applicationId: string;
  let document: any;
  let secret: string;
  let subscriptionId: string;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const delivered = () => receiver.at('/all').map((delivery) => ({ delivery, body: JSON.parse(delivery.body) }));
  const validatorOf = (ajv: Ajv2020, event: string) =>
    ajv.compile({ $ref: `openapi.json#/webhooks/${event}/post/requestBody/content/application~1json/schema` });

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken, { name: 'Schemas', environment: 'sandbox' }));
    const subscription = await api('POST', `/api/v1/applications/${applicationId}/webhooks`, { url: `${receiver.url}/all`, events: [...WEBHOOK_EVENT_TYPES] });
    expect(subscription.status).toBe(201);
    secret = subscription.body.secret;
    subscriptionId = subscription.body.id;
    document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
  });

  afterAll(async () => {
    await us?.close();
    await receiver?.close();
  });

  it('has a webhooks entry, a signed POST with its headers, for every event type and webhook.test', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT].sort());
    for (const event of Object.keys(document.webhooks)) {
      const post = document.webhooks[event].post;
      expect([event, post.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`).sort()]).toEqual([
        event,
        ['header:X-Service-Event-ID', 'header:X-Service-Event-Type', 'header:X-Service-Signature', 'header:X-Service-Timestamp'],
      ]);
      expect(post.requestBody.content['application/json'].schema.properties.event.const).toBe(event);
    }
  });

  it('describes the bodies really delivered: a hosted consent and its revocation, a record, its withdrawals, a flow activation, a test', async () => {
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, NEWSLETTER_FLOW);
    const flowId = flow.body.id as string;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);

    // A hosted consent (informed path), granted and then revoked with its session token.
    const hosted = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Hosted',
      pattern: 'informed',
      purposes: ['newsletter'],
      purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } },
      consent_duration: 'P1Y',
    });
    expect((await api('POST', `/api/v1/flows/${hosted.body.id}/activate`)).status).toBe(200);
    const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: hosted.body.id });
    expect(created.status).toBe(201);
    const sessionToken = created.body.session_token;
    for (const to of ['informed', 'evidenced']) await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/transitions`, { body: { to } });
    const completed = await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/complete`, { body: { outcome: 'granted' } });
    expect(completed.status).toBe(200);
    // The organisation's read of it names no person as null, as its events do (below).
    const exchanged = await api('POST', `/api/v1/decisions/${sessionToken}/exchange`, { exchange_token: completed.body.exchange_token });
    expect([exchanged.status, exchanged.body.claims?.subject]).toEqual([200, null]);
    expect((await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/transitions`, { body: { to: 'revoked' } })).status).toBe(200);

    // A Record API record, then a newer one that withdraws analytics from it (consent.purpose_revoked).
    const granted = { decision: 'granted', default_checked: false, mandatory: false };
    const record = async (decisions: Record<string, unknown>, capturedAt: number) => {
      const answer = await api('POST', '/api/v1/consent_records', { flow_id: flowId, subject: { email: 'schemas@example.com' }, decisions, captured_at: new Date(capturedAt).toISOString() });
      expect(answer.status).toBe(201);
      return answer.body.consent_record.record_id as string;
    };
    const first = await record({ newsletter: granted, analytics: granted }, Date.now() - 60_000);
    await record({ newsletter: granted, analytics: { ...granted, decision: 'declined' } }, Date.now() - 30_000);
    expect((await api('POST', `/api/v1/applications/${applicationId}/webhooks/${subscriptionId}/test`)).status).toBe(202);

    const sessionId = created.body.session_id;
    const seen = (predicate: (body: any) => boolean) => delivered().some(({ body }) => predicate(body));
    await eventually(async () =>
      seen((body) => body.event === 'consent.granted' && body.data.session_id === sessionId) &&
      seen((body) => body.event === 'consent.revoked' && body.data.session_id === sessionId) &&
      seen((body) => body.event === 'consent.granted' && body.data.record_id === first) &&
      seen((body) => body.event === 'consent.purpose_revoked' && body.data.record_id === first) &&
      seen((body) => body.event === 'flow.activated') &&
      seen((body) => body.event === WEBHOOK_TEST_EVENT),
    );

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: document.components, webhooks: document.webhooks });
    for (const { delivery, body } of delivered()) {
      // What the server library accepts (the documented signature scheme), and the documented headers.
      expect(verifyWebhook({ secret, headers: delivery.headers, rawBody: delivery.body }).id).toBe(body.id);
      expect(delivery.headers['x-service-signature']).toMatch(new RegExp(document.webhooks[body.event].post.parameters.find((p: { name: string }) => p.name === 'X-Service-Signature').schema.pattern));
      const validate = validatorOf(ajv, body.event);
      expect([body.event, validate(body), validate.errors]).toEqual([body.event, true, null]);
    }
    // A session that named no person: `subject` is null in its outcome and its revocation alike, and
    // the revocation's schema takes no other shape for it ({id: null} included).
    const sessionEvents = delivered().filter(({ body }) => body.data.session_id === sessionId).map(({ body }) => [body.event, body.data.subject]);
    expect(sessionEvents.sort()).toEqual([['consent.granted', null], ['consent.revoked', null]]);
    const revocation = delivered().find(({ body }) => body.event === 'consent.revoked' && body.data.session_id === sessionId)!.body;
    expect(validatorOf(ajv, 'consent.revoked')({ ...revocation, data: { ...revocation.data, subject: { id: null } } })).toBe(false);
    // The schemas are not so loose that anything passes: a record's grant without its channel, or a
    // withdrawal with purposes as a list, is refused.
    const recordGrant = delivered().find(({ body }) => body.event === 'consent.granted' && body.data.record_id === first)!.body;
    const withdrawal = delivered().find(({ body }) => body.event === 'consent.purpose_revoked')!.body;
    expect(withdrawal.data).toMatchObject({ withdrawn: ['analytics'], channel: 'newer_record', purposes: { analytics: 'withdrawn' }, flow_version: 1 });
    const { flow_version: _version, ...withoutVersion } = withdrawal.data;
    expect(validatorOf(ajv, 'consent.purpose_revoked')({ ...withdrawal, data: withoutVersion })).toBe(false);
    const { channel: _channel, ...withoutChannel } = recordGrant.data;
    expect(validatorOf(ajv, 'consent.granted')({ ...recordGrant, data: withoutChannel })).toBe(false);
    expect(validatorOf(ajv, 'consent.purpose_revoked')({ ...withdrawal, data: { ...withdrawal.data, purposes: ['analytics'] } })).toBe(false);
    expect(validatorOf(ajv, 'consent.granted')({ ...recordGrant, event: 'consent.denied' })).toBe(false);
  });
  it('tells the organisation of an approval no one will decide: at its deadline, or cancelled by the person or the host, with the reason given', async () => {
    const approval = { title: 'Pay invoice 117', action: 'payments.create', trigger: 'value', value: { amount: 125000, currency: 'EUR' } };
    const open = async (extra: Record<string, unknown> = {}) => {
      const created = await api('POST', '/api/v1/decisions', { kind: 'approval', approval, ...extra });
      expect(created.status).toBe(201);
      return created.body as { session_id: string; session_token: string };
    };
    const byPerson = await open();
    const byHost = await open();
    const late = await open({ deadline_at: new Date(Date.now() + 1500).toISOString() });
    expect((await http(us.url, 'POST', `/api/v1/decisions/${byPerson.session_token}/cancel`, { body: { reason: 'I did not ask for this' } })).status).toBe(200);
    expect((await http(us.url, 'POST', `/api/v1/decisions/${byHost.session_token}/cancel`, { body: { reason: 'host_cancelled', cancelled_by: 'host' } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect((await http(us.url, 'GET', `/api/v1/decisions/${late.session_token}`)).body.status).toBe('expired');

    const endedOf = (session: { session_id: string }) => delivered().find(({ body }) => body.event === 'approval.expired' && body.data.session_id === session.session_id)?.body;
    await eventually(async () => [byPerson, byHost, late].every((session) => endedOf(session) !== undefined));
    expect([endedOf(byPerson).data, endedOf(byHost).data, endedOf(late).data].map((data) => [data.ended, data.reason, data.actor.type, data.outcome])).toEqual([
      ['cancelled_by_person', 'I did not ask for this', 'participant', null],
      ['cancelled_by_host', 'host_cancelled', 'host', null],
      ['deadline', undefined, 'system', null],
    ]);
    expect(endedOf(late).data.approval).toMatchObject({ title: 'Pay invoice 117', action: 'payments.create' });
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: document.components, webhooks: document.webhooks });
    const validate = validatorOf(ajv, 'approval.expired');
    for (const session of [byPerson, byHost, late]) expect([validate(endedOf(session)), validate.errors]).toEqual([true, null]);
    expect(validate({ ...endedOf(late), data: { ...endedOf(late).data, ended: 'forgotten' } })).toBe(false);
    // A consent session that ends without a decision sends no approval event.
    expect(delivered().filter(({ body }) => body.event === 'approval.expired').length).toBe(3);
  });

  it('describes the withdrawals between a person\'s hosted consents and records: each body is exactly one of the two withdrawal shapes', async () => {
    const hostedFlow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Hosted two',
      pattern: 'informed',
      purposes: ['newsletter', 'analytics'],
      purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' }, analytics: { label: 'Analytics', basis: 'consent' } },
      consent_duration: 'P1Y',
    });
    const flowId = hostedFlow.body.id as string;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    const subject = { email: 'linked@example.com', external_id: 'linked-1' };
    const hosted = async (outcome: string, purposes: Record<string, boolean>) => {
      const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject });
      expect(created.status).toBe(201);
      for (const to of ['informed', 'evidenced']) await http(us.url, 'POST', `/api/v1/decisions/${created.body.session_token}/transitions`, { body: { to } });
      expect((await http(us.url, 'POST', `/api/v1/decisions/${created.body.session_token}/complete`, { body: { outcome, purposes } })).status).toBe(200);
      return created.body.session_id as string;
    };
    const decision = (value: string) => ({ decision: value, default_checked: false, mandatory: false });
    // A hosted consent, then the organisation's record declining analytics (taken back from the hosted
    // consent by purpose), then a hosted refusal of the newsletter (taken back from the record and
    // from the first hosted consent).
    const first = await hosted('granted', { newsletter: true, analytics: true });
    const recorded = await api('POST', '/api/v1/consent_records', { flow_id: flowId, subject, decisions: { newsletter: decision('granted'), analytics: decision('declined') }, captured_at: new Date().toISOString() });
    expect([recorded.status, recorded.body.details]).toEqual([201, undefined]);
    const recordId = recorded.body.consent_record.record_id as string;
    await hosted('granted', { newsletter: false, analytics: true });
    const withdrawals = () => delivered().filter(({ body }) => ['consent.purpose_revoked', 'consent.revoked'].includes(body.event) && (body.data.session_id === first || body.data.record_id === recordId));
    await eventually(async () => withdrawals().length === 3);

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: document.components, webhooks: document.webhooks });
    const shapes = withdrawals().map(({ body }) => [body.event, body.data.session_id === first ? 'hosted' : 'record', body.data.channel, body.data.withdrawn]);
    expect(shapes.sort()).toEqual([
      ['consent.purpose_revoked', 'hosted', 'newer_record', ['analytics']],
      ['consent.purpose_revoked', 'record', 'newer_record', ['newsletter']],
      ['consent.revoked', 'hosted', 'newer_record', ['newsletter']],
    ]);
    for (const { body } of withdrawals()) {
      const validate = validatorOf(ajv, body.event);
      expect([body.event, body.data.record_id, validate(body), validate.errors]).toEqual([body.event, body.data.record_id, true, null]);
    }
    // The person's own withdrawals of a hosted consent on their records page have the same shape with
    // their channel and no `superseded_by`: one of the two schemas, not both (oneOf).
    for (const { body } of withdrawals().filter(({ body }) => body.data.session_id === first)) {
      const { superseded_by: _newer, ...own } = body.data;
      expect(validatorOf(ajv, body.event)({ ...body, data: { ...own, channel: 'own_records', actor: { type: 'participant', id: own.subject.id } } })).toBe(true);
    }
  });
});
