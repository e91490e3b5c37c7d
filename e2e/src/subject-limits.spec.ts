import { InProcessBus } from '@dcr/transport';
import { activeFlowApplication, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * Every entry point that names a person (the Record API, imports, the subjects endpoint, a decision
 * session's subject, lookups) takes an e-mail address and an external id by one rule, refuses over a
 * limit by naming it, and refuses an identifier it would otherwise silently drop.
 */
describe('subject limits at every entry point', () => {
  let us: RunningCountry;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const granted = { decision: 'granted', default_checked: false, mandatory: false };
  const record = (subject: Record<string, unknown>) =>
    api('POST', '/api/v1/consent_records', { flow_id: flowId, subject, decisions: { newsletter: granted }, captured_at: new Date().toISOString() });
  const importRow = (subject: Record<string, unknown>) =>
    api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: true, records: [{ subject, decisions: { newsletter: { decision: 'granted' } }, captured_at: new Date().toISOString() }] });
  const subjects = () => `/api/v1/applications/${applicationId}/subjects`;

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    ({ applicationId, apiToken, flowId } = await activeFlowApplication(us, adminToken, { name: 'Signup', pattern: 'standard', purposes: ['newsletter'], consent_duration: 'P1Y' }));
  });

  afterAll(async () => {
    await us?.close();
  });

  it('refuses an external id with a control character at the subjects endpoint, its lookup and a decision session, as the Record API does', async () => {
    expect((await record({ email: 'ctl@example.com', external_id: 'a\u0001b' })).body.details).toEqual([{ field: 'subject.external_id', reason: 'external_id must not contain control characters' }]);

    const created = await api('POST', subjects(), { email: 'ctl@example.com', external_id: 'a\u0001b' });
    expect(created.status).toBe(422);
    expect(created.body.details).toEqual([{ field: 'external_id', reason: 'external_id must not contain control characters' }]);

    // A lookup's query is refused as consent_status refuses one: 400, naming the parameter.
    const found = await api('GET', `${subjects()}?external_id=${encodeURIComponent('a\u0001b')}`);
    expect(found.status).toBe(400);
    expect(found.body.details).toEqual([{ field: 'external_id', reason: 'external_id must not contain control characters' }]);

    const session = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'ctl@example.com', external_id: 'a\u0001b' } });
    expect(session.status).toBe(422);
    expect(session.body.details).toEqual([{ field: 'subject.external_id', reason: 'external_id must not contain control characters' }]);

    // Spaces around an id are not kept (the Record API's rule): 200 characters between them are taken, and found again.
    const padded = ` ${'p'.repeat(200)} `;
    expect((await api('POST', subjects(), { external_id: padded })).status).toBe(201);
    const byPadded = await api('GET', `${subjects()}?external_id=${encodeURIComponent('p'.repeat(200))}`);
    expect(byPadded.status).toBe(200);
    expect(byPadded.body.external_id).toBe('p'.repeat(200));
    expect((await api('POST', subjects(), { external_id: '   ' })).body.details).toEqual([{ field: 'external_id', reason: 'external_id must not be blank' }]);
  });

  it("refuses at the subjects endpoint an external id the person of the address does not have, rather than dropping it", async () => {
    expect((await api('POST', subjects(), { email: 'held@example.com', external_id: 'crm-x' })).status).toBe(201);
    const other = await api('POST', subjects(), { email: 'held@example.com', external_id: 'crm-q' });
    expect(other.status).toBe(422);
    expect(other.body.details).toEqual([{ field: 'external_id', reason: 'the person recorded with this e-mail address has another external_id' }]);
    expect((await api('GET', `${subjects()}?external_id=crm-q`)).status).toBe(404);
    // The Record API refuses the same conflict.
    expect((await record({ email: 'held@example.com', external_id: 'crm-q' })).body.details).toEqual([{ field: 'subject.external_id', reason: 'the person recorded with this e-mail address has another external_id' }]);

    // An external id of one person with another person's address.
    expect((await api('POST', subjects(), { email: 'second@example.com' })).status).toBe(201);
    const mixed = await api('POST', subjects(), { email: 'second@example.com', external_id: 'crm-x' });
    expect(mixed.status).toBe(422);
    expect(mixed.body.details).toEqual([{ field: 'external_id', reason: 'belongs to another person of this application than email' }]);
    // The same identifiers again: the same person (200).
    const again = await api('POST', subjects(), { email: 'held@example.com', external_id: 'crm-x' });
    expect(again.status).toBe(200);
    expect(again.body.external_id).toBe('crm-x');
  });

  it('names the e-mail limit an address is over, in the same words at every entry point', async () => {
    const longLocal = `${'a'.repeat(65)}@example.com`;
    // A domain of labels of at most 63 characters each, so only the lengths are wrong.
    const domain = (n: number) => `${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(n - 132)}.com`;
    const longAddress = `${'a'.repeat(64)}@${domain(190)}`; // 255 characters
    const localReason = 'must have at most 64 bytes before the @ (an e-mail address limit)';
    const lengthReason = 'must be at most 254 characters (an e-mail address limit)';
    for (const [address, reason] of [[longLocal, localReason], [longAddress, lengthReason]]) {
      expect((await record({ email: address })).body.details).toEqual([{ field: 'subject.email', reason: `email ${reason}` }]);
      expect((await importRow({ email: address })).body.rows[0].reasons).toEqual([{ field: 'subject.email', reason }]);
      expect((await api('POST', subjects(), { email: address })).body.details).toEqual([{ field: 'email', reason: `email ${reason}` }]);
      expect((await api('GET', `${subjects()}?email=${encodeURIComponent(address)}`)).body.details).toEqual([{ field: 'email', reason: `email ${reason}` }]);
      expect((await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: address } })).body.details).toEqual([{ field: 'subject.email', reason: `email ${reason}` }]);
      const status = await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=${encodeURIComponent(address)}`);
      expect(status.body.details).toEqual([{ field: 'subject[email]', reason }]);
    }
    // At the limits: taken.
    expect(`${'a'.repeat(64)}@${domain(189)}`).toHaveLength(254);
    expect((await record({ email: `${'a'.repeat(64)}@${domain(189)}` })).status).toBe(201);
    expect((await api('POST', subjects(), { email: `${'b'.repeat(64)}@${domain(189)}` })).status).toBe(201);
  });
});
