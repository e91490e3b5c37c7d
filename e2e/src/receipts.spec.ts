import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsonld from 'jsonld';
import { canonicalJson } from '@dcr/domain';
import { receiptSchemaBytes, validateReceipt, verifySignedReceipt } from '@dcr/receipts';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { ReceiptExporter } from '../../apps/receipts/src/records/receipt-exporter';

/**
 * Receipts end to end: a completed consent decision is frozen into an ISO/IEC TS 27560 receipt,
 * exported as canonical JSON, DPV JSON-LD and a signed JWS that verifies offline; a withdrawal is
 * appended without touching the frozen sections; the schema and keys are discoverable.
 */
describe('consent receipts', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let sessionToken: string;
  let recordId: string;

  const api = (method: string, path: string, body?: unknown, country = us, token = apiToken) => http(country.url, method, path, { token, body });
  const receipt = (flavor: string, id = recordId, country = us, token = apiToken) =>
    http(country.url, 'GET', `/api/v1/consent_receipts/${id}?flavor=${flavor}`, { token });
  /** A Record API record granting the newsletter on a new active flow with these terms (beside the defaults), made in `country`. */
  const recordOn = async (terms: Record<string, unknown>, email: string, country = us) => {
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Sign-up',
      pattern: 'standard',
      purposes: ['newsletter'],
      purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } },
      consent_duration: 'P1Y',
      ...terms,
    });
    expect(flow.status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    // Flows are authored here and replicated: another country records once it has the active version.
    if (country !== us) await eventually(async () => (await api('GET', `/api/v1/flows/${flow.body.id}`, undefined, country)).body.status === 'active');
    const made = await api('POST', '/api/v1/consent_records', {
      flow_id: flow.body.id,
      subject: { email },
      decisions: { newsletter: { decision: 'granted', default_checked: false, mandatory: false } },
      captured_at: new Date().toISOString(),
    }, country);
    expect(made.status).toBe(201);
    return { flowId: flow.body.id as string, recordId: made.body.consent_record.record_id as string };
  };

  beforeAll(async () => {
    countries = await startCountryPair({
      adminToken,
      // The processor's URL as an operator may configure it (boot accepts any https URL), outside ASCII.
      usEnv: { PUBLIC_BASE_URL: 'https://us.decisions.example.com', RECEIPT_PROCESSOR_URL: 'https://dienstleister.example/über-uns' },
      // DE's public origin as an operator may write it: a host outside ASCII (boot accepts any http(s) origin).
      deEnv: { PUBLIC_BASE_URL: 'https://de.bücher.example' },
    });
    ({ us, de } = countries);
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken, { name: 'Acme Newsletter', environment: 'sandbox' }));
    // The token reaches DE by configuration replication (asynchronous); the misdirected-request test asks DE.
    await eventually(async () => (await http(de.url, 'GET', '/api/v1/me', { token: apiToken })).status === 200);
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Newsletter',
      pattern: 'informed',
      title: 'Stay in touch',
      purposes: ['newsletter', 'analytics', 'fraud'],
      purpose_definitions: {
        newsletter: { label: 'Newsletter', basis: 'consent' },
        analytics: { label: 'Usage analytics', basis: 'consent' },
        fraud: { label: 'Fraud prevention', basis: 'legitimate_interest' },
      },
      consent_duration: 'P1Y',
      policy_url: 'https://acme.example.com/privacy',
    });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flow.body.id });
    sessionToken = created.body.session_token;
    for (const to of ['informed', 'evidenced']) await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/transitions`, { body: { to } });
    const done = await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/complete`, {
      body: { outcome: 'granted', purposes: { newsletter: true, analytics: false } },
    });
    expect(done.status).toBe(200);
    const exchanged = await api('POST', `/api/v1/decisions/${sessionToken}/exchange`, { exchange_token: done.body.exchange_token });
    recordId = exchanged.body.record_id;
    expect(recordId).toMatch(/^rec_us/);
    await eventually(async () => (await receipt('canonical')).status === 200);
  });

  afterAll(async () => {
    await countries?.close();
  });

  it('exports the canonical receipt: schema-valid RFC 8785 JSON with only the granted purposes', async () => {
    const answer = await receipt('canonical');
    expect(answer.headers.get('content-type')).toContain('application/json');
    const body = answer.body as Record<string, any>;
    expect(canonicalJson(body)).toBe(await (await fetch(`${us.url}/api/v1/consent_receipts/${recordId}`, { headers: { authorization: `Bearer ${apiToken}` } })).text());
    expect(validateReceipt(body)).toEqual({ valid: true, errors: [] });
    expect(body.$schema).toBe('https://us.decisions.example.com/schemas/receipt/v2/record.json');
    expect(body.record).toMatchObject({ schema_version: 'service-cr/2.13', conforms_to: 'ISO/IEC TS 27560:2023', record_id: recordId });
    expect(body.pii_processing.purposes.map((p: { purpose_id: string }) => p.purpose_id).sort()).toEqual(['fraud', 'newsletter']);
    expect(body.pii_processing.storage_locations).toEqual(['US']);
    expect(body.pii_processing.privacy_notice).toMatchObject({ url: 'https://acme.example.com/privacy', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // No one signed in (the informed path): the records page could never find this record, so the
    // receipt names no withdrawal entry (a signed-in person's receipt does: consent-records.spec.ts).
    expect(body.record.anonymous).toBe(true);
    expect(body.pii_processing).not.toHaveProperty('withdrawal_method');
    const controller = body.party_identification.find((p: { party_role: string }) => p.party_role === 'controller');
    expect(controller).toMatchObject({ party_id: applicationId, party_name: 'Acme Newsletter', provenance: 'display_name' });
    expect(body.party_identification.map((p: { party_role: string }) => p.party_role)).toEqual(expect.arrayContaining(['processor', 'supervisory_authority']));
    // Written as the URI the schema asks for (it was refused there, and no receipt of the country froze).
    expect(body.party_identification.find((p: { party_role: string }) => p.party_role === 'processor').party_url).toBe('https://dienstleister.example/%C3%BCber-uns');
    // Decided on the hosted pages: the page that showed the notice is on the receipt, by the application, before the decision.
    expect(body.event.map((e: { event_state: string }) => e.event_state)).toEqual(['notice shown', 'consent requested', 'consent given']);
    const [shown, requested, given] = body.event as Array<{ event_time: string; entity_id: string }>;
    expect(shown.entity_id).toBe(applicationId);
    expect(Date.parse(shown.event_time)).toBeGreaterThanOrEqual(Date.parse(requested.event_time));
    expect(Date.parse(shown.event_time)).toBeLessThanOrEqual(Date.parse(given.event_time));
    expect(body.extensions).toMatchObject({ consent_flow_id: expect.stringMatching(/^flw_/), collection_channel: 'hosted' });
    expect(body.pii_processing).not.toHaveProperty('recipient_third_parties');
  });

  it('exports DPV JSON-LD that a standard processor expands offline', async () => {
    const answer = await receipt('dpv');
    expect(answer.headers.get('content-type')).toContain('application/ld+json');
    const documentLoader = async (url: string) => {
      throw new Error(`no network: ${url}`);
    };
    const expanded = await jsonld.expand(answer.body, { documentLoader: documentLoader as never });
    const text = JSON.stringify(expanded);
    expect(text).toContain('https://w3id.org/dpv#ConsentRecord');
    expect(text).toContain('https://w3id.org/dpv#hasPurpose');
    expect(text).toContain(recordId);
  });

  it('exports a signed receipt that verifies offline against the published keys, also with the npx tool', async () => {
    const signed = (await receipt('signed')).body;
    expect(signed.signature).toMatch(/^[\w-]+\.\.[\w-]+$/);
    const jwks = (await http(us.url, 'GET', '/.well-known/jwks.json')).body;
    expect(jwks.keys).toHaveLength(1);
    expect(await verifySignedReceipt(signed, { jwks })).toMatchObject({ valid: true, kid: jwks.keys[0].kid });
    const tampered = { ...signed, payload: { ...signed.payload, record: { ...signed.payload.record, record_id: 'rec_us00000000000000000000' } } };
    expect(await verifySignedReceipt(tampered, { jwks })).toMatchObject({ valid: false, code: 'bad_signature' });

    const witness = (await http(us.url, 'GET', '/.well-known/witness-configuration')).body;
    expect(witness.receipt_keys).toEqual([expect.objectContaining({ kid: jwks.keys[0].kid, status: 'current', valid_until: null })]);
    expect(witness.log.origin).toMatch(/audit\/us$/);

    const folder = mkdtempSync(join(tmpdir(), 'receipt-'));
    writeFileSync(join(folder, 'signed.json'), JSON.stringify(signed));
    writeFileSync(join(folder, 'jwks.json'), JSON.stringify(jwks));
    const output = execFileSync(process.execPath, [join(__dirname, '../../libs/receipts/bin/dcr-receipt-verify.js'), join(folder, 'signed.json'), '--jwks', join(folder, 'jwks.json')], { encoding: 'utf8' });
    expect(output).toMatch(/^VALID/);
  });

  it('appends a withdrawal to the lifecycle and never rewrites the frozen sections', async () => {
    const before = (await receipt('canonical')).body;
    expect((await http(us.url, 'POST', `/api/v1/decisions/${sessionToken}/transitions`, { body: { to: 'revoked' } })).status).toBe(200);
    await eventually(async () => (await receipt('canonical')).body.event.some((e: { event_state: string }) => e.event_state === 'consent withdrawn'));
    const after = (await receipt('canonical')).body;
    expect(validateReceipt(after).valid).toBe(true);
    expect(after.pii_processing).toEqual(before.pii_processing);
    expect(after.record).toEqual(before.record);
    expect(after.event.slice(0, before.event.length)).toEqual(before.event);
    expect(after.event[after.event.length - 1]).toMatchObject({ event_state: 'consent withdrawn' });
    // Revoked with the session token, which the organisation holds too: where it was made from is not known, so not stated.
    expect(after.event[after.event.length - 1]).not.toHaveProperty('event_channel');
  });

  it('refuses to revoke a decision that granted no consent, so its receipt stays readable', async () => {
    const decide = async (terms: Record<string, unknown>, outcome: string) => {
      const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, { name: 'Terms', pattern: 'informed', consent_duration: 'P1Y', ...terms });
      expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flow.body.id })).body.session_token;
      for (const to of ['informed', 'evidenced']) await http(us.url, 'POST', `/api/v1/decisions/${token}/transitions`, { body: { to } });
      const done = await http(us.url, 'POST', `/api/v1/decisions/${token}/complete`, { body: { outcome } });
      expect(done.status).toBe(200);
      const id = (await api('POST', `/api/v1/decisions/${token}/exchange`, { exchange_token: done.body.exchange_token })).body.record_id;
      await eventually(async () => (await receipt('canonical', id)).status === 200);
      return { token, id };
    };
    // Notice only (a contract): the receipt is a notice record, with no consent in it to withdraw.
    const notice = await decide({ purposes: ['billing'], purpose_definitions: { billing: { label: 'Billing', basis: 'contract' } } }, 'granted');
    expect((await receipt('canonical', notice.id)).body.record.record_type).toBe('notice_record');
    // A refusal: nothing was given (its session has ended, so the state machine refuses already).
    const refused = await decide({ purposes: ['newsletter'], purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } } }, 'denied');
    for (const { token, id } of [notice, refused]) {
      const revoke = await http(us.url, 'POST', `/api/v1/decisions/${token}/transitions`, { body: { to: 'revoked' } });
      expect(revoke.status).toBe(409);
      if (token === notice.token) expect(revoke.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('no consent to withdraw') });
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const flavor of ['canonical', 'dpv', 'signed']) expect((await receipt(flavor, id)).status).toBe(200);
      expect((await receipt('canonical', id)).body.event.map((e: { event_state: string }) => e.event_state)).not.toContain('consent withdrawn');
    }
  });

  it('freezes the receipt of a flow whose policy URL is not plain ASCII, and every receipt after it', async () => {
    // The flow accepts the policy URL as a browser reads it; the receipt states it as a URI (RFC
    // 3986), which is what its schema asks. It was refused there, and the record's event, retried
    // for ever, held up every receipt, webhook and audit entry behind it.
    const german = await recordOn({ policy_url: 'https://beispiel.de/datenschutzerklärung?fassung={2026}|kurz' }, 'iri@example.com');
    expect((await api('GET', `/api/v1/flows/${german.flowId}`)).body.policy_url).toBe('https://beispiel.de/datenschutzerklärung?fassung={2026}|kurz');
    const after = await recordOn({}, 'after-iri@example.com');
    for (const id of [german.recordId, after.recordId]) await eventually(async () => (await receipt('canonical', id)).status === 200);
    const body = (await receipt('canonical', german.recordId)).body;
    expect(validateReceipt(body)).toEqual({ valid: true, errors: [] });
    expect(body.pii_processing.privacy_notice.url).toBe('https://beispiel.de/datenschutzerkl%C3%A4rung?fassung=%7B2026%7D%7Ckurz');
  });

  it('freezes the receipts of a country whose public origin is written outside ASCII, naming it as a URI (punycode)', async () => {
    // The schema asks for URIs (RFC 3986) in `$schema` and `withdrawal_method`: with the host as
    // written, every receipt of the country was refused there, never frozen, and each read a 503.
    const { recordId: id } = await recordOn({}, 'idn-origin@example.de', de);
    expect(id).toMatch(/^rec_de/);
    const read = await receipt('canonical', id, de);
    expect(read.status).toBe(200);
    expect(validateReceipt(read.body)).toEqual({ valid: true, errors: [] });
    expect(read.body.$schema).toBe('https://de.xn--bcher-kva.example/schemas/receipt/v2/record.json');
    expect(read.body.pii_processing.withdrawal_method).toBe(`https://de.xn--bcher-kva.example/inbox/records?application_id=${applicationId}&via=receipt`);
  });

  it('reads the receipt of a consent whose term ends past the last instant a date can name (it never lapses), never a 500', async () => {
    const { recordId: id } = await recordOn({ consent_duration: 'P300000Y' }, 'for-good@example.com');
    await eventually(async () => (await receipt('canonical', id)).status !== 404);
    for (const flavor of ['canonical', 'dpv', 'signed']) expect([flavor, (await receipt(flavor, id)).status]).toEqual([flavor, 200]);
    const body = (await receipt('canonical', id)).body;
    expect(validateReceipt(body).valid).toBe(true);
    expect(body.event.map((e: { event_state: string }) => e.event_state)).toEqual(['consent given']);
  });

  it('answers a receipt read whose kept projection lapses while the read runs (the consent\'s term ends), never a 500', async () => {
    // The projection kept for the receipt is valid until the consent's term ends; here it ends
    // between the read's query and its answer (as it does for a read at that very moment).
    let exporter: { projections: Map<string, { validUntil: number }> } | undefined;
    const exportOf = ReceiptExporter.prototype.export;
    const exportSpy = jest.spyOn(ReceiptExporter.prototype, 'export').mockImplementation(function (this: never, ...args: Parameters<typeof exportOf>) {
      exporter = this;
      return exportOf.apply(this, args);
    });
    const queryOf = DataSource.prototype.query;
    const querySpy = jest.spyOn(DataSource.prototype, 'query').mockImplementation(async function (this: DataSource, sql: string, parameters?: any, ...rest: any[]) {
      const result = await queryOf.call(this, sql, parameters, ...rest);
      const kept = parameters?.[1] !== null && sql.includes('"receipts"."receipts" r WHERE r."record_id"') ? exporter?.projections.get(parameters?.[0]) : undefined;
      if (kept) kept.validUntil = Date.now() - 1;
      return result;
    });
    try {
      expect((await receipt('canonical')).status).toBe(200);
      const lapsed = await receipt('canonical');
      expect(lapsed.status).toBe(200);
      expect(validateReceipt(lapsed.body).valid).toBe(true);
      expect(querySpy).toHaveBeenCalled();
    } finally {
      exportSpy.mockRestore();
      querySpy.mockRestore();
    }
  });

  it('serves the schema byte-for-byte, the transparency record, and answers misdirected or foreign requests', async () => {
    const schema = await fetch(`${us.url}/schemas/receipt/v2/record.json`);
    expect(schema.headers.get('content-type')).toContain('application/schema+json');
    expect(Buffer.from(await schema.arrayBuffer()).equals(receiptSchemaBytes())).toBe(true);

    const transparency = await http(us.url, 'GET', `/.well-known/transparency/${applicationId}`);
    expect(transparency.status).toBe(200);
    expect(transparency.body).toMatchObject({
      application_id: applicationId,
      receipts: { export_flavors: ['canonical', 'dpv', 'signed'], schema: expect.stringMatching(/\/schemas\/receipt\/v2\/record\.json$/) },
      keys: { jwks_uri: expect.stringMatching(/\/\.well-known\/jwks\.json$/) },
    });
    expect(transparency.body.parties[0]).toMatchObject({ party_id: applicationId, party_role: 'controller' });

    const elsewhere = await receipt('canonical', recordId, de);
    expect(elsewhere.status).toBe(421);
    expect(elsewhere.body).toMatchObject({ code: 'wrong_country', home_country: 'US' });
    expect((await receipt('canonical', 'rec_us00000000000000000000')).status).toBe(404);
    expect((await receipt('canonical', 'not-a-record')).status).toBe(404);
    const badFlavor = await receipt('xml');
    expect(badFlavor.status).toBe(400);
    expect(badFlavor.body.details[0].field).toBe('flavor');
    // A misspelt or repeated parameter is refused by name, not answered with the canonical receipt.
    for (const [query, field] of [['flavour=dpv', 'flavour'], ['flavor=dpv&flavor=signed', 'flavor'], ['flavor=signed&format=jws', 'format']]) {
      const refused = await http(us.url, 'GET', `/api/v1/consent_receipts/${recordId}?${query}`, { token: apiToken });
      expect([query, refused.status, refused.body.code, refused.body.details?.map((d: { field: string }) => d.field)]).toEqual([query, 400, 'invalid_request', [field]]);
    }

    const { apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other', environment: 'sandbox' });
    expect((await receipt('canonical', recordId, us, otherToken)).status).toBe(404);
  });

  it('waits for the receipt of a record written a moment ago, and answers 503 with Retry-After while the receipts service has not frozen it', async () => {
    // The receipts table held: a record's receipt cannot be frozen (its insert waits), reads go on.
    const db = new Client({ connectionString: us.database.url });
    await db.connect();
    const holdReceipts = async () => {
      await db.query('BEGIN');
      await db.query('LOCK TABLE "receipts"."receipts" IN EXCLUSIVE MODE');
    };
    try {
      await holdReceipts();
      const soon = await recordOn({}, 'receipt-soon@example.com');
      const reading = receipt('canonical', soon.recordId);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await db.query('COMMIT');
      const answer = await reading;
      expect([answer.status, answer.body.record?.record_id]).toEqual([200, soon.recordId]);

      await holdReceipts();
      const late = await recordOn({}, 'receipt-late@example.com');
      const pending = await receipt('canonical', late.recordId);
      expect(pending.status).toBe(503);
      expect(pending.headers.get('retry-after')).toBe('1');
      expect(pending.body).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining(late.recordId) });
      // Another organisation's token learns nothing of it: the 404 of a receipt that does not exist, at once.
      const { apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other waiting', environment: 'sandbox' });
      const foreign = await receipt('canonical', late.recordId, us, otherToken);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
      await db.query('COMMIT');
      // Nothing was lost: once the receipts service can write, the receipt is there.
      await eventually(async () => (await receipt('canonical', late.recordId)).status === 200);
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
    }
  });

  it('reads a receipt only with an API token that may read records or decisions (records:read or decisions:read), as the OpenAPI document says', async () => {
    const tokenWith = async (scopes: string[]) =>
      (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: adminToken, body: { scopes } })).body.token as string;
    for (const scopes of [['webhooks:write'], ['applications:read'], ['records:write']]) {
      const refused = await receipt('canonical', recordId, us, await tokenWith(scopes));
      expect([scopes, refused.status, refused.body.code]).toEqual([scopes, 403, 'forbidden']);
      expect(refused.body.message).toContain('records:read');
      expect(refused.body.message).toContain('decisions:read');
    }
    for (const scopes of [['records:read'], ['decisions:read']]) {
      expect([scopes, (await receipt('signed', recordId, us, await tokenWith(scopes))).status]).toEqual([scopes, 200]);
    }
    const operation = (await http(us.url, 'GET', '/.well-known/openapi')).body.paths['/api/v1/consent_receipts/{record_id}'].get;
    expect(operation.security).toEqual([{ bearer: ['records:read'] }, { bearer: ['decisions:read'] }]);
    expect(operation['x-required-scopes-any']).toEqual(['records:read', 'decisions:read']);
    expect(operation.description).toContain('one of `records:read`, `decisions:read`');
  });

  it('answers 501 for the receipt kinds that are not built yet', async () => {
    const authorization = await api('GET', '/api/v1/authorization_receipts/agr_0123');
    expect(authorization.status).toBe(501);
    expect(authorization.body).toMatchObject({ code: 'not_implemented', message: expect.stringContaining('Authorization receipts') });
    expect((await api('POST', '/api/v1/disclosure_receipts', {})).status).toBe(501);
    // The OpenAPI document says so, and lists the receipt read's 421.
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    expect(document.paths['/api/v1/authorization_receipts/{id}'].get.responses['501']).toBeDefined();
    expect(document.paths['/api/v1/disclosure_receipts'].post.responses['501']).toBeDefined();
    expect(document.paths['/api/v1/consent_receipts/{record_id}'].get.responses['421']).toBeDefined();
  });

  it("answers 501 naming what is not built for the specification's cross-border endpoints, not 404, and says so in the OpenAPI document", async () => {
    const endpoints = [
      ['GET', '/api/v1/transfer_register', 'The transfer register'],
      ['POST', '/api/v1/transfer_register/evidence_package', "The transfer register's evidence package"],
      ['GET', '/api/v1/residency_posture', 'The residency posture'],
      ['POST', '/api/v1/residency_posture/evidence_package', 'The signed proof of residency'],
      ['POST', '/api/v1/presentations', 'Verifying presented credentials'],
    ] as const;
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    for (const [method, path, named] of endpoints) {
      const answer = await api(method, path);
      expect([path, answer.status, answer.body.code, answer.body.message.startsWith(named)]).toEqual([path, 501, 'not_implemented', true]);
      expect(document.paths[path][method.toLowerCase()].responses['501']).toBeDefined();
    }
    // Still behind a credential, as the specification's endpoints are.
    expect((await http(us.url, 'GET', '/api/v1/transfer_register')).status).toBe(401);
  });

  it("answers 501 naming what is not built for the specification's OpenID Connect and MCP endpoints, not 404", async () => {
    const endpoints = [
      ['GET', '/.well-known/openid-configuration', 'The OpenID Connect provider'],
      ['GET', '/oauth/authorize?client_id=x', 'The OpenID Connect provider'],
      ['POST', '/oauth/token', 'The OpenID Connect provider'],
      ['POST', '/oauth/par', 'The OpenID Connect provider'],
      ['POST', '/oauth2/par', 'The OpenID Connect provider'],
      ['POST', '/oauth/token/exchange', 'The OpenID Connect provider'],
      ['GET', '/.well-known/mcp-configuration', 'The MCP gateway'],
      ['POST', '/mcp/v1/agent', 'The MCP gateway'],
      ['GET', '/api/v1/oap/escalations', 'The MCP gateway'],
      ['GET', '/api/v1/oap/escalations/esc_1', 'The MCP gateway'],
    ] as const;
    for (const [method, path, named] of endpoints) {
      const answer = await http(us.url, method, path, method === 'POST' ? { body: {} } : {});
      expect([path, answer.status, answer.body.code, String(answer.body.message).startsWith(named)]).toEqual([path, 501, 'not_implemented', true]);
    }
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    expect(document.paths['/.well-known/openid-configuration'].get.responses['501']).toBeDefined();
  });
});
