import { Client } from 'pg';
import { verifyWebhook, VerifiedWebhook } from '@dcr/server-sdk';
import { WebhookReceiver } from '@dcr/testing';
import { InProcessBus } from '@dcr/transport';
import { applicationWithToken, eventually, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

/**
 * The webhooks of consent records as an organisation's CRM receives them: every withdrawal of a
 * record says when it was made (`withdrawn_at`), and a record's events can be put in order by their
 * `created_at` (the deliveries themselves are not ordered: a retried one arrives after later ones).
 */
describe('webhooks of consent records, as a receiver reads them', () => {
  let us: RunningCountry;
  let receiver: WebhookReceiver;
  let db: Client;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let secret: string;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const granted = { decision: 'granted', default_checked: false, mandatory: false };
  const record = async (email: string, captured_at: string) => {
    const created = await api('POST', '/api/v1/consent_records', { flow_id: flowId, subject: { email }, decisions: { newsletter: granted, analytics: granted }, captured_at });
    expect(created.status).toBe(201);
    return created.body.consent_record.record_id as string;
  };
  const inboxOf = async (email: string) => {
    await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email } });
    const code = /\b(\d{6})\b/.exec((await db.query(`SELECT text FROM decisions.dev_mailbox WHERE to_address = $1 ORDER BY sent_at DESC LIMIT 1`, [email])).rows[0].text)![1];
    return (await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email, code } })).body.inbox_token as string;
  };
  /** What the receiver got about one record, each delivery verified as the server library verifies it. */
  const eventsOf = (recordId: string): Array<VerifiedWebhook<Record<string, any>>> =>
    receiver
      .at('/crm')
      .map((delivery) => verifyWebhook<Record<string, any>>({ secret, headers: delivery.headers, rawBody: delivery.body }))
      .filter((event) => event.data.record_id === recordId);

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    const bus = new InProcessBus();
    us = await startCountry({ transport: 'inprocess', bus, subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken, { name: 'CRM sync', environment: 'sandbox' }));
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, NEWSLETTER_FLOW);
    flowId = flow.body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    const subscription = await api('POST', `/api/v1/applications/${applicationId}/webhooks`, {
      url: `${receiver.url}/crm`,
      events: ['consent.granted', 'consent.denied', 'consent.revoked', 'consent.purpose_revoked'],
    });
    expect(subscription.status).toBe(201);
    secret = subscription.body.secret;
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await us?.close();
    await receiver?.close();
  });

  it("says when the person withdrew on their records page (withdrawn_at), as the withdrawal's answer does", async () => {
    const email = 'page@example.com';
    const recordId = await record(email, new Date(Date.now() - 60_000).toISOString());
    const token = await inboxOf(email);
    const one = await http(us.url, 'POST', `/api/v1/inbox/records/${recordId}/withdraw`, { token, body: { purpose: 'analytics', channel: 'email_link' } });
    const rest = await http(us.url, 'POST', `/api/v1/inbox/records/${recordId}/withdraw`, { token, body: {} });
    expect([one.status, rest.status]).toEqual([200, 200]);
    await eventually(async () => eventsOf(recordId).length === 3);
    expect(eventsOf(recordId).map((event) => [event.event, event.data.withdrawn, event.data.channel, event.data.withdrawn_at, event.data.flow_version])).toEqual([
      ['consent.granted', undefined, 'controller_attested', undefined, 1],
      ['consent.purpose_revoked', ['analytics'], 'email_link', one.body.withdrawn_at, 1],
      ['consent.revoked', ['newsletter'], 'own_records', rest.body.withdrawn_at, 1],
    ]);
  });

  it('names on every withdrawal the flow version of the record withdrawn from, as that record\'s consent.granted does', async () => {
    const email = 'versions@example.com';
    const own = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Versioned form' });
    expect((await api('POST', `/api/v1/flows/${own.body.id}/activate`)).status).toBe(200);
    const declined = { ...granted, decision: 'declined' };
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const recordOn = async (decisions: Record<string, unknown>, captured_at: string) => {
      const created = await api('POST', '/api/v1/consent_records', { flow_id: own.body.id, subject: { email }, decisions, captured_at });
      expect(created.status).toBe(201);
      return created.body.consent_record.record_id as string;
    };
    // R1 on version 1; then version 2 is active, and the person withdraws analytics on R1 (records page).
    const r1 = await recordOn({ newsletter: granted, analytics: granted }, minutesAgo(10));
    expect((await api('POST', `/api/v1/flows/${own.body.id}/versions`, { consent_duration: 'P2Y' })).status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${own.body.id}/activate`)).status).toBe(200);
    // Version 2 dated as activated 9.5 minutes ago, so that R2 and R3 below, captured after that, are
    // decided against it (a record is decided against the version in force at its captured_at).
    await db.query(`UPDATE decisions.flow_versions SET activated_at = now() - interval '570 seconds' WHERE id = $1 AND version = 2`, [own.body.id]);
    const token = await inboxOf(email);
    expect((await http(us.url, 'POST', `/api/v1/inbox/records/${r1}/withdraw`, { token, body: { purpose: 'analytics' } })).status).toBe(200);
    // R2 on version 2, captured before that withdrawal (it carries it) and declining newsletter (it
    // withdraws newsletter from R1); R3 on version 2, captured between them (late: R2 withdraws from it).
    const r2 = await recordOn({ newsletter: declined, analytics: granted }, minutesAgo(8));
    const r3 = await recordOn({ newsletter: granted, analytics: granted }, minutesAgo(9));
    await eventually(async () => eventsOf(r1).length === 3 && eventsOf(r2).length === 2 && eventsOf(r3).length === 3);
    const versionOf = new Map([r1, r2, r3].map((id) => [id, eventsOf(id).find((event) => event.event === 'consent.granted')!.data.flow_version]));
    expect([versionOf.get(r1), versionOf.get(r2), versionOf.get(r3)]).toEqual([1, 2, 2]);
    // Per record, by channel (deliveries are not ordered): the person's own, on R1 and carried onto
    // R2 and R3 (version 2), and what a newer record withdrew, from R1 (version 1, though R2 and R3,
    // which withdrew it, are of version 2) and from R3.
    const withdrawals = [r1, r2, r3].flatMap((id) =>
      eventsOf(id)
        .filter((event) => event.event !== 'consent.granted')
        .sort((a, b) => a.data.channel.localeCompare(b.data.channel)),
    );
    expect(withdrawals.map((event) => [event.data.record_id, event.data.channel, event.data.withdrawn, event.data.flow_version])).toEqual([
      [r1, 'newer_record', ['newsletter'], 1],
      [r1, 'own_records', ['analytics'], 1],
      [r2, 'own_records', ['analytics'], 2],
      [r3, 'newer_record', ['newsletter'], 2],
      [r3, 'own_records', ['analytics'], 2],
    ]);
  });

  it("dates a withdrawal carried onto a newer record no earlier than that record's consent.granted, the person's time in withdrawn_at", async () => {
    const email = 'carried@example.com';
    const first = await record(email, new Date(Date.now() - 120_000).toISOString());
    const token = await inboxOf(email);
    const withdrawal = await http(us.url, 'POST', `/api/v1/inbox/records/${first}/withdraw`, { token, body: { purpose: 'analytics' } });
    expect(withdrawal.status).toBe(200);
    // Captured before the withdrawal, sent after it: it carries the withdrawal.
    const second = await record(email, new Date(Date.now() - 60_000).toISOString());
    await eventually(async () => eventsOf(second).length === 2);
    const grant = eventsOf(second).find((event) => event.event === 'consent.granted')!;
    const carried = eventsOf(second).find((event) => event.event !== 'consent.granted')!;
    expect(grant.data.supersedes).toBe(first);
    // Ordered by created_at, the grant comes first (the carried withdrawal said the person's time, before it).
    expect(Date.parse(carried.createdAt)).toBeGreaterThanOrEqual(Date.parse(grant.createdAt));
    expect(carried).toMatchObject({
      event: 'consent.purpose_revoked',
      data: { withdrawn: ['analytics'], carried_from: first, withdrawn_at: withdrawal.body.withdrawn_at, purposes: { newsletter: 'granted', analytics: 'withdrawn' } },
    });
  });
});
