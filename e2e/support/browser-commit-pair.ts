import { Client } from 'pg';
import { applicationWithToken, eventually, http, RunningCountry, startCountryPair } from './country-harness';
import { NEWSLETTER_FLOW } from './fixtures';

/** A country pair with an application whose forms commit captures in the browser (see startBrowserCommitPair). */
export interface BrowserCommitPair {
  us: RunningCountry;
  de: RunningCountry;
  applicationId: string;
  apiToken: string;
  publishableKey: string;
  /** NEWSLETTER_FLOW, active. */
  flowId: string;
  /** Each country's database, connected. */
  usDb: Client;
  deDb: Client;
  /**
   * A capture at `country`'s endpoint from SHOP_ORIGIN (newsletter ticked, analytics not, neither
   * ticked by default nor mandatory), with `extra` fields, under `key` as its Idempotency-Key.
   */
  capture(country: RunningCountry, extra?: Record<string, unknown>, key?: string): Promise<HttpAnswer>;
  /** The organisation's server commits a capture at `country`, binding `email`. */
  authorize(country: RunningCountry, token: string, email: string): Promise<HttpAnswer>;
  close(): Promise<void>;
}

type HttpAnswer = Awaited<ReturnType<typeof http>>;

/** The form's origin, allowed for the application's publishable key. */
export const SHOP_ORIGIN = 'https://shop.example';

/**
 * US and DE over one in-process bus, each with a public origin (so that receipt mails are sent: they
 * link to the records page), and an application made at US with an API token, a publishable key for
 * SHOP_ORIGIN, browser commit on and NEWSLETTER_FLOW active; it returns once the application (with
 * browser commit) and the flow have reached DE.
 */
export async function startBrowserCommitPair(options: { adminToken: string; subjectRefKey?: string }): Promise<BrowserCommitPair> {
  const countries = await startCountryPair({
    adminToken: options.adminToken,
    subjectRefKey: options.subjectRefKey,
    usEnv: { PUBLIC_BASE_URL: 'https://us.decisions.example.com' },
    deEnv: { PUBLIC_BASE_URL: 'https://de.decisions.example.com' },
  });
  const { us, de } = countries;
  const as = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: options.adminToken, body });
  const { applicationId, apiToken } = await applicationWithToken(us, options.adminToken, { name: 'Shop', environment: 'sandbox' });
  const publishableKey: string = (await as('POST', `/api/v1/applications/${applicationId}/publishable_keys`)).body.key;
  await as('POST', `/api/v1/applications/${applicationId}/allowed_origins`, { allowed_origin: { origin: SHOP_ORIGIN } });
  expect((await as('PATCH', `/api/v1/applications/${applicationId}/settings`, { browser_commit: true })).status).toBe(200);
  const flowId: string = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/flows`, { token: apiToken, body: NEWSLETTER_FLOW })).body.id;
  expect((await http(us.url, 'POST', `/api/v1/flows/${flowId}/activate`, { token: apiToken })).status).toBe(200);
  const granted = { decision: 'granted', default_checked: false, mandatory: false };
  const declined = { decision: 'declined', default_checked: false, mandatory: false };
  const capture = (country: RunningCountry, extra: Record<string, unknown> = {}, key?: string) =>
    http(country.url, 'POST', '/api/v1/captures', {
      body: { flow_id: flowId, channel: 'form_capture', decisions: { newsletter: granted, analytics: declined }, ...extra },
      headers: { 'x-publishable-key': publishableKey, origin: SHOP_ORIGIN, ...(key ? { 'idempotency-key': key } : {}) },
    });
  const authorize = (country: RunningCountry, token: string, email: string) =>
    http(country.url, 'POST', `/api/v1/decisions/${token}/authorize`, { token: apiToken, body: { subject: { email } } });
  // The application (with browser commit on) and the flow reach DE: a capture there is taken.
  await eventually(async () => (await capture(de)).status === 201, 20_000);
  await eventually(async () => (await http(de.url, 'GET', `/api/v1/applications/${applicationId}`, { token: apiToken })).body?.settings?.browser_commit === true);
  const usDb = new Client({ connectionString: us.database.url });
  const deDb = new Client({ connectionString: de.database.url });
  await usDb.connect();
  await deDb.connect();
  return {
    us,
    de,
    applicationId,
    apiToken,
    publishableKey,
    flowId,
    usDb,
    deDb,
    capture,
    authorize,
    async close() {
      await usDb.end();
      await deDb.end();
      await countries.close();
    },
  };
}
