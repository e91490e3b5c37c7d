import { validateReceipt, verifySignedReceipt } from '@dcr/receipts';
import {
  ConflictError,
  ConsentRecordCreateParams,
  FetchFunction,
  FlowTerms,
  GoneError,
  InvalidRequestError,
  NotFoundError,
  paginate,
  RateLimitError,
  ServiceClient,
  ServiceError,
  verifyWebhook,
  WebhookVerificationError,
  WrongCountryError,
} from '@dcr/server-sdk';
import { WebhookReceiver } from '@dcr/testing';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

/**
 * `@dcr/server-sdk` against two running countries: flows, the Record API and its status, imports,
 * receipts, decisions verified and exchanged, webhooks verified as a receiver would, the error class
 * of each refusal (a wrong country with its home country), an answer lost in transit recovered by the
 * retry's idempotency key, and Retry-After honoured against the real rate limit.
 */
describe('the server library', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  let receiver: WebhookReceiver;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let client: ServiceClient;
  let deClient: ServiceClient;
  let flowId: string;
  let recordId: string;

  const granted = { decision: 'granted' as const, default_checked: false, mandatory: false };
  const declined = { decision: 'declined' as const, default_checked: false, mandatory: false };
  const record = (email: string, extra: Partial<ConsentRecordCreateParams> = {}): ConsentRecordCreateParams => ({
    flow_id: flowId,
    subject: { email },
    decisions: { newsletter: granted, analytics: declined },
    captured_at: '2026-11-20T10:00:00.000Z',
    ...extra,
  });

  /** The raised error, failing the test when the call succeeds. */
  async function refusal(call: Promise<unknown>): Promise<ServiceError> {
    try {
      await call;
    } catch (error) {
      expect(error).toBeInstanceOf(ServiceError);
      return error as ServiceError;
    }
    throw new Error('the call succeeded');
  }

  /**
   * A fetch that delivers the request but loses the first matching answer on its way back, as a
   * dropped connection would: the service has acted, the client sees a network error and retries.
   */
  function losingFirstAnswer(matches: (url: string, method: string) => boolean) {
    const lost: Array<{ status: number; body: unknown }> = [];
    const fetchFunction: FetchFunction = async (url, init) => {
      const response = await fetch(url, init);
      if (lost.length === 0 && matches(url, init.method)) {
        lost.push({ status: response.status, body: await response.json() });
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
      return response;
    };
    return { fetch: fetchFunction, lost };
  }

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    // DE's rate limit is small, so the library's Retry-After handling meets the real one.
    countries = await startCountryPair({ adminToken, deEnv: { RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '3' } });
    ({ us, de } = countries);
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    client = new ServiceClient({ apiKey: apiToken, baseUrl: us.url });
    deClient = new ServiceClient({ apiKey: apiToken, baseUrl: de.url, maxRetries: 4 });
  });

  afterAll(async () => {
    await countries?.close();
    await receiver?.close();
  });

  it('creates and activates a flow, readable in the other country', async () => {
    const draft = await client.flows.create(applicationId, { ...NEWSLETTER_FLOW, name: 'Signup form' } as FlowTerms);
    expect(draft).toMatchObject({ id: expect.stringMatching(/^flw_dev_/), status: 'draft', version: 1, capturable: true });
    expect(draft.lastResponse.statusCode).toBe(201);
    flowId = draft.id;
    const active = await client.flows.activate(flowId);
    expect(active.status).toBe('active');
    expect(active.purpose_definitions.fraud).toMatchObject({ basis: 'legitimate_interest', takes_decision: true });
    expect((await client.flows.list(applicationId)).data.map((flow) => flow.id)).toContain(flowId);

    const refused = await refusal(client.flows.create(applicationId, { name: 'Bad', pattern: 'standard', purposes: ['newsletter'], consent_duration: 'a year' }));
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ statusCode: 422, code: 'validation_failed' });
    expect(refused.details.map((detail) => detail.field)).toContain('consent_duration');
    expect(refused.requestId).toMatch(/^req_/);

    await eventually(async () => (await deClient.flows.get(flowId).catch(() => undefined))?.status === 'active');
  });

  it('records consent, reads the status per purpose, and names each refused purpose', async () => {
    const created = await client.consentRecords.create(record('ada@example.com', { subject: { email: 'ada@example.com', external_id: 'crm-4711' } }));
    expect(created.lastResponse.statusCode).toBe(201);
    expect(created.consent_record).toMatchObject({
      record_id: expect.stringMatching(/^rec_us/),
      status: 'granted',
      flow_id: flowId,
      purposes: { newsletter: { status: 'granted' }, analytics: { status: 'declined' }, fraud: { status: 'noticed' }, billing: { status: 'noticed' } },
      channel: 'controller_attested',
    });
    recordId = created.consent_record.record_id;

    const status = await client.consentRecords.status(applicationId, { subject: { external_id: 'crm-4711' } });
    expect(status.purposes).toMatchObject({ newsletter: { status: 'granted', record_id: recordId }, analytics: { status: 'declined', record_id: recordId } });
    expect(await client.consentRecords.status(applicationId, { subject: { email: 'ada@example.com' } })).toEqual(status);
    expect(await refusal(client.consentRecords.status(applicationId, { subject: { external_id: 'nobody' } }))).toBeInstanceOf(NotFoundError);

    const refused = await refusal(client.consentRecords.create(record('ada@example.com', { decisions: { newsletter: { ...granted, default_checked: true } } })));
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused.statusCode).toBe(422);
    expect(refused.details.map((detail) => detail.field)).toEqual(expect.arrayContaining(['decisions.newsletter', 'decisions.analytics']));

    // The body's idempotency_key: the same record again, 200 instead of 201.
    const keyed = await client.consentRecords.create(record('grace@example.com', { idempotency_key: 'signup-grace' }));
    const again = await client.consentRecords.create(record('grace@example.com', { idempotency_key: 'signup-grace' }));
    expect(again.lastResponse.statusCode).toBe(200);
    expect(again.consent_record.record_id).toBe(keyed.consent_record.record_id);
  });

  it('recovers an answer lost in transit: the retry carries the same Idempotency-Key and gets the first answer', async () => {
    const lossy = losingFirstAnswer((url, method) => method === 'POST' && url.endsWith('/api/v1/consent_records'));
    const flaky = new ServiceClient({ apiKey: apiToken, baseUrl: us.url, fetch: lossy.fetch, initialRetryDelay: 10 });
    const created = await flaky.consentRecords.create(record('linus@example.com'));
    // The first attempt recorded the consent; its answer never arrived. The retry was answered from
    // the idempotency store: the same record, not a second one.
    expect(lossy.lost).toEqual([{ status: 201, body: { consent_record: expect.objectContaining({ record_id: expect.stringMatching(/^rec_us/) }) } }]);
    expect(created.consent_record.record_id).toBe((lossy.lost[0].body as { consent_record: { record_id: string } }).consent_record.record_id);
    expect(created.lastResponse).toMatchObject({ attempts: 2, idempotentReplayed: true, statusCode: 201 });
    const status = await client.consentRecords.status(applicationId, { subject: { email: 'linus@example.com' } });
    expect(status.purposes.newsletter.record_id).toBe(created.consent_record.record_id);
  });

  it('imports: a dry run reports per row and writes nothing; the real import can be read again', async () => {
    const rows = [
      { subject: { email: 'margaret@example.com' }, decisions: { newsletter: { decision: 'granted' as const }, analytics: { decision: 'declined' as const } }, captured_at: '2021-03-04T05:06:07.000Z' },
      { subject: { email: 'hedy@example.com' }, decisions: { newsletter: { decision: 'granted' as const, default_checked: true }, analytics: { decision: 'declined' as const } }, captured_at: '2021-03-04T05:06:07.000Z' },
    ];
    const dry = await client.imports.create({ flow_id: flowId, dry_run: true, records: rows });
    expect(dry.lastResponse.statusCode).toBe(200);
    expect(dry).toMatchObject({ dry_run: true, status: 'completed', summary: { recorded: 1, refused: 1 } });
    expect(dry.rows[1]).toMatchObject({ index: 1, outcome: 'refused', reasons: [expect.objectContaining({ field: 'decisions.newsletter' })] });
    expect(await refusal(client.consentRecords.status(applicationId, { subject: { email: 'margaret@example.com' } }))).toBeInstanceOf(NotFoundError);
    expect(await refusal(client.imports.get(dry.import_id))).toBeInstanceOf(NotFoundError);

    const real = await client.imports.create({ flow_id: flowId, dry_run: false, records: rows });
    expect(real.lastResponse.statusCode).toBe(201);
    expect(real.summary).toEqual({ recorded: 1, refused: 1 });
    const report = await client.imports.get(real.import_id);
    expect(report.rows).toEqual(real.rows);
    const status = await client.consentRecords.status(applicationId, { subject: { email: 'margaret@example.com' } });
    // Captured in 2021 under a one-year consent duration: it has lapsed.
    expect(status.purposes.newsletter).toMatchObject({ status: 'expired', record_id: real.rows[0].record_id, updated_at: '2022-03-04T05:06:07.000Z' });
  });

  it('reads a receipt in every flavor; the signed one verifies offline', async () => {
    await eventually(async () => (await client.receipts.get(recordId).catch(() => undefined)) !== undefined);
    const canonical = await client.receipts.get(recordId);
    expect(canonical.record.record_id).toBe(recordId);
    expect(validateReceipt(canonical).valid).toBe(true);
    const purposes = canonical.pii_processing.purposes.map((purpose) => purpose.purpose_id);
    expect(purposes).toContain('newsletter');
    expect(purposes).not.toContain('analytics');

    const signed = await client.receipts.get(recordId, { flavor: 'signed' });
    expect(signed.payload).toEqual(canonical);
    const jwks = (await http(us.url, 'GET', '/.well-known/jwks.json')).body;
    expect(await verifySignedReceipt(signed, { jwks })).toMatchObject({ valid: true });

    const dpv = await client.receipts.get(recordId, { flavor: 'dpv' });
    expect(dpv['@context']).toBeDefined();
    expect(dpv.lastResponse.headers['content-type']).toContain('application/ld+json');

    expect(await refusal(client.receipts.get('rec_us00000000000000000000'))).toBeInstanceOf(NotFoundError);
    const badFlavor = await refusal(client.receipts.get(recordId, { flavor: 'pdf' as 'dpv' }));
    expect(badFlavor).toMatchObject({ statusCode: 400, code: 'invalid_request' });
    expect(badFlavor.details).toEqual([expect.objectContaining({ field: 'flavor' })]);
  });

  it('opens decisions, verifies one consent token once, and exchanges another (a lost answer included)', async () => {
    const informed = await client.flows.create(applicationId, {
      name: 'Informed',
      pattern: 'informed',
      purposes: ['newsletter'],
      purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } },
      consent_duration: 'P1Y',
    });
    await client.flows.activate(informed.id);
    const complete = async (sessionToken: string): Promise<string> => {
      for (const to of ['informed', 'evidenced']) expect((await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/transitions`, { body: { to } })).status).toBe(200);
      const done = await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/complete`, { body: { outcome: 'granted' } });
      expect(done.status).toBe(200);
      return done.body.exchange_token;
    };

    const session = await client.sessions.create({ flow_id: informed.id });
    expect(session).toMatchObject({ session_token: expect.stringMatching(/^dts_us/), kind: 'consent', status: 'pending', flow_id: informed.id });
    expect(session.decision_url).toBe(`${us.url}/decisions/${session.session_token}`);
    const consentToken = await complete(session.session_token);
    expect(await client.decisions.verify(session.session_token, { consent_token: consentToken })).toEqual({ valid: true, status: 'fulfilled', outcome: 'granted' });
    expect(await client.decisions.verify(session.session_token, { consent_token: consentToken })).toMatchObject({ valid: false, status: 'expired' });

    const decision = await client.decisions.create({ kind: 'consent', flow_id: informed.id, delivery_mode: 'direct' });
    const exchangeToken = await complete(decision.session_token);
    const lossy = losingFirstAnswer((url) => url.endsWith('/exchange'));
    const flaky = new ServiceClient({ apiKey: apiToken, baseUrl: us.url, fetch: lossy.fetch, initialRetryDelay: 10 });
    // The first attempt spent the single-use token; only the idempotency key gets its answer back.
    const exchanged = await flaky.decisions.exchange(decision.session_token, { exchange_token: exchangeToken });
    expect(exchanged).toMatchObject({ status: 'fulfilled', outcome: 'granted', record_id: expect.stringMatching(/^rec_us/) });
    expect(exchanged).toEqual(lossy.lost[0].body);
    expect(exchanged.lastResponse).toMatchObject({ attempts: 2, idempotentReplayed: true });

    const spent = await refusal(client.decisions.exchange(decision.session_token, { exchange_token: exchangeToken }));
    expect(spent).toBeInstanceOf(GoneError);
    expect(spent.statusCode).toBe(410);
  });

  it('commits a capture made in the organisation’s form', async () => {
    const publishableKey = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/publishable_keys`, { token: adminToken })).body.key;
    await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, { token: adminToken, body: { allowed_origin: { origin: 'http://localhost' } } });
    const captured = await http(us.url, 'POST', '/api/v1/captures', {
      body: { flow_id: flowId, channel: 'form_capture', decisions: { newsletter: granted, analytics: declined } },
      headers: { 'x-publishable-key': publishableKey, origin: 'http://localhost:5173' },
    });
    expect(captured.status).toBe(201);
    const committed = await client.decisions.authorize(captured.body.capture_token, { subject: { email: 'katherine@example.com' }, suppress_receipt: true });
    expect(committed).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'form_capture' });
    const otherPerson = await refusal(client.decisions.authorize(captured.body.capture_token, { subject: { email: 'someone-else@example.com' } }));
    expect(otherPerson).toBeInstanceOf(ConflictError);
    expect(otherPerson.statusCode).toBe(409);
  });

  it('manages a webhook subscription and verifies what it delivers, as a receiver would', async () => {
    const subscription = await client.webhooks.create(applicationId, { url: `${receiver.url}/sdk`, events: ['consent.granted'] });
    expect(subscription).toMatchObject({ id: expect.stringMatching(/^whk_/), status: 'enabled', secret: expect.stringMatching(/^whsec_/) });
    const listed: string[] = [];
    for await (const item of paginate((cursor) => client.webhooks.list(applicationId, { cursor, limit: 1 }))) listed.push(item.id);
    expect(listed).toContain(subscription.id);
    expect(await client.webhooks.get(applicationId, subscription.id)).not.toHaveProperty('secret');

    // A real event: a consent recorded now is delivered, signed, to the receiver.
    const created = await client.consentRecords.create(record('barbara@example.com'));
    const arrived = (matches: (body: { id: string; data: { record_id?: string } }) => boolean) =>
      receiver.at('/sdk').filter((delivery) => matches(JSON.parse(delivery.body)));
    await eventually(async () => arrived((body) => body.data.record_id === created.consent_record.record_id).length === 1);
    const [delivered] = arrived((body) => body.data.record_id === created.consent_record.record_id);
    const event = verifyWebhook<{ record_id: string }>({ secret: subscription.secret, headers: delivered.headers, rawBody: delivered.body });
    expect(event).toMatchObject({ event: 'consent.granted', applicationId, data: { record_id: created.consent_record.record_id } });

    const test = await client.webhooks.test(applicationId, subscription.id);
    expect(test.lastResponse.statusCode).toBe(202);
    expect(test).toMatchObject({ event_type: 'webhook.test', test: true, subscription_id: subscription.id });
    await eventually(async () => arrived((body) => body.id === test.event_id).length === 1);
    const [testDelivery] = arrived((body) => body.id === test.event_id);
    expect(verifyWebhook({ secret: subscription.secret, headers: testDelivery.headers, rawBody: testDelivery.body })).toMatchObject({ event: 'webhook.test', id: test.event_id });
    await eventually(async () => (await client.webhooks.getDelivery(test.id)).status === 'succeeded');
    const logged = await client.webhooks.deliveries(applicationId, subscription.id);
    expect(logged.data.map((delivery) => delivery.id)).toContain(test.id);

    // After a rotation a replay is signed afresh with the new secret, and for a day with the old one too.
    const rotated = await client.webhooks.rotateSecret(applicationId, subscription.id);
    expect(rotated.secret).not.toBe(subscription.secret);
    expect(Date.parse(rotated.previous_secret_expires_at!)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    const replay = await client.webhooks.replay(test.id);
    expect(replay).toMatchObject({ replay_of: test.id, event_id: test.event_id });
    await eventually(async () => arrived((body) => body.id === test.event_id).length === 2);
    const replayed = arrived((body) => body.id === test.event_id)[1];
    expect(verifyWebhook({ secret: rotated.secret, headers: replayed.headers, rawBody: replayed.body }).id).toBe(test.event_id);
    expect(verifyWebhook({ secret: subscription.secret, headers: replayed.headers, rawBody: replayed.body }).id).toBe(test.event_id);
    let refusedReason: string | undefined;
    try {
      verifyWebhook({ secret: `${rotated.secret}x`, headers: replayed.headers, rawBody: replayed.body });
    } catch (error) {
      refusedReason = (error as WebhookVerificationError).reason;
    }
    expect(refusedReason).toBe('signature_mismatch');

    expect((await client.webhooks.enable(applicationId, subscription.id)).status).toBe('enabled');
    await client.webhooks.delete(applicationId, subscription.id);
    expect(await refusal(client.webhooks.get(applicationId, subscription.id))).toBeInstanceOf(NotFoundError);
  });

  it('raises WrongCountryError with the home country when the other country is asked', async () => {
    const receipt = await refusal(deClient.receipts.get(recordId));
    expect(receipt).toBeInstanceOf(WrongCountryError);
    expect(receipt).toMatchObject({ statusCode: 421, code: 'wrong_country', homeCountry: 'US', requestId: expect.any(String) });
    expect(receipt.body).toEqual({ message: expect.any(String), code: 'wrong_country', home_country: 'US', request_id: receipt.requestId });

    // Ada is homed in the US once the directory entry has reached DE.
    let person: ServiceError | undefined;
    await eventually(async () => {
      person = await deClient.consentRecords.create(record('ada@example.com')).then(
        () => undefined,
        (error: ServiceError) => error,
      );
      return person instanceof WrongCountryError;
    });
    expect((person as WrongCountryError).homeCountry).toBe('US');

    const session = await client.sessions.create({ flow_id: flowId });
    const verify = await refusal(deClient.decisions.verify(session.session_token, { consent_token: 'anything' }));
    expect(verify).toBeInstanceOf(WrongCountryError);
    expect((verify as WrongCountryError).homeCountry).toBe('US');
  });

  it('honours Retry-After from the real rate limit, and raises RateLimitError when told not to retry', async () => {
    const answers: Array<{ status: number; retryAfter: string | null }> = [];
    const waits: number[] = [];
    const recording: FetchFunction = async (url, init) => {
      const response = await fetch(url, init);
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
      return response;
    };
    const patient = new ServiceClient({
      apiKey: apiToken,
      baseUrl: de.url,
      maxRetries: 5,
      fetch: recording,
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    // One call after another, faster than two a second: past the burst of three, the limit answers 429.
    for (let i = 0; i < 6; i++) expect((await patient.flows.get(flowId)).id).toBe(flowId);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(6);
    // One wait per 429, each at least what its Retry-After asked for.
    expect(waits).toHaveLength(limited.length);
    waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(Number(limited[i].retryAfter) * 1000));

    const impatient = new ServiceClient({ apiKey: apiToken, baseUrl: de.url, maxRetries: 0 });
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => impatient.flows.get(flowId)));
    const rejected = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected').map((outcome) => outcome.reason);
    expect(rejected.length).toBeGreaterThan(0);
    for (const error of rejected) {
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({ statusCode: 429, code: 'rate_limited' });
      expect((error as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1);
    }
  });
});
