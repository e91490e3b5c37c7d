import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { auditChainService } from '@dcr/app-audit-chain';
import { decisionsService } from '@dcr/app-decisions';
import { gatewayService, RunningGateway, startGateway } from '@dcr/app-gateway';
import { mcpGatewayService } from '@dcr/app-mcp-gateway';
import { oidcService } from '@dcr/app-oidc';
import { receiptsService } from '@dcr/app-receipts';
import { residencyRouterService } from '@dcr/app-residency-router';
import { webhooksService } from '@dcr/app-webhooks';
import { GatewayEnvironment, loadConfig, ServiceEnvironment, subjectPrefix } from '@dcr/config';
import { countryContext, startService } from '@dcr/service-kit';
import { createTestDatabase, testNatsUrl, TestDatabase, uniquePrefix } from '@dcr/testing';
import { CountryClient, createTransportClient, InProcessBus } from '@dcr/transport';

export const SERVICES = [
  residencyRouterService,
  decisionsService,
  receiptsService,
  auditChainService,
  webhooksService,
  oidcService,
  mcpGatewayService,
];

/** Captures a country's JSON log lines so tests can read what was logged. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) this.lines.push(JSON.parse(line));
    done();
  }
}

export interface CountryOptions {
  country: string;
  peers: string[];
  transport: 'inprocess' | 'nats';
  bus?: InProcessBus;
  namespace?: string;
  subjectRefKey: string;
  adminToken: string;
  env?: Record<string, string>;
}

export interface RunningCountry {
  country: string;
  url: string;
  /** The transport it runs on, as E2E_TRANSPORT may have chosen it (countryClient). */
  transport: 'inprocess' | 'nats';
  namespace?: string;
  bus?: InProcessBus;
  database: TestDatabase;
  logs: LogCapture;
  gateway: RunningGateway;
  /** The environment its services were started with (startReplica starts another one with it). */
  environment: Record<string, string | undefined>;
  close(): Promise<void>;
}

/** One NATS namespace per in-process bus a spec shares between its countries (E2E_TRANSPORT=nats). */
const namespaceOfBus = new WeakMap<object, string>();

/**
 * The transport a country runs on: the spec's, unless E2E_TRANSPORT=nats moves a spec written for
 * the in-process bus onto real NATS (production's transport, whose limits the bus only imitates),
 * its countries sharing one namespace as they shared one bus.
 */
function transportOf(options: CountryOptions): { transport: 'inprocess' | 'nats'; namespace?: string } {
  if (process.env.E2E_TRANSPORT !== 'nats' || options.transport === 'nats') return { transport: options.transport, namespace: options.namespace };
  const key: object = options.bus ?? options;
  let namespace = namespaceOfBus.get(key);
  if (!namespace) namespaceOfBus.set(key, (namespace = uniquePrefix('e2e')));
  return { transport: 'nats', namespace };
}

/** Every service of one country, in this process, on its own fresh database. */
export async function startCountry(options: CountryOptions): Promise<RunningCountry> {
  const database = await createTestDatabase(`e2e_${options.country}`);
  const { transport, namespace } = transportOf(options);
  const raw = {
    COUNTRY: options.country,
    REGION: 'dev',
    DATABASE_URL: database.url,
    TRANSPORT: transport,
    NATS_URL: testNatsUrl(),
    SUBJECT_NAMESPACE: namespace,
    PEER_COUNTRIES: options.peers.join(','),
    SUBJECT_REF_KEY: options.subjectRefKey,
    ADMIN_TOKEN: options.adminToken,
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DB_POOL_SIZE: '3',
    LOG_LEVEL: 'info',
    // Every test signs in from loopback: the per-address limit of inbox sign-in codes (30 an hour by
    // default) would hold a whole file's sign-ins back. Its own test sets it (sign-in-code-limit.spec.ts).
    SIGN_IN_CODES_PER_IP_PER_HOUR: '0',
    // Under a loaded CI machine a peer's directory confirmation can take longer than the default 2 s,
    // and a best-effort registration then homes the person unconfirmed (docs/architecture.md): two
    // countries asked for one new person at once could both home them. The protocol is what the
    // tests check, so they wait for the peer; a peer that is down answers at once either way.
    DIRECTORY_CONFIRM_TIMEOUT_MS: '15000',
    ...options.env,
  };
  const logs = new LogCapture();
  const running: { close(): Promise<void> }[] = [];
  for (const definition of SERVICES) {
    const env = loadConfig(definition.environment ?? ServiceEnvironment, raw);
    running.push(await startService(countryContext(definition, env, { bus: options.bus, logDestination: logs })));
  }
  const gateway = await startGateway(
    countryContext(gatewayService, loadConfig(GatewayEnvironment, raw), { bus: options.bus, logDestination: logs }),
  );
  return {
    country: options.country,
    url: gateway.url,
    transport,
    namespace,
    bus: options.bus,
    database,
    logs,
    gateway,
    environment: raw,
    async close() {
      await gateway.close();
      for (const service of running.reverse()) await service.close();
      await database.drop();
    },
  };
}

/**
 * Another replica of one of a country's services (`decisionsService`, say), on its transport and
 * database: the country's messages for that service then go to the replicas in turn, as NATS's
 * queue group hands them out in production. Close it before the country.
 */
export async function startReplica(country: RunningCountry, definition: (typeof SERVICES)[number]): Promise<{ close(): Promise<void> }> {
  const env = loadConfig(definition.environment ?? ServiceEnvironment, country.environment);
  return startService(countryContext(definition, env, { bus: country.bus, logDestination: country.logs }));
}

export interface CountryPairOptions {
  adminToken: string;
  /** Both countries' key of subject references (a spec that computes references passes its own). */
  subjectRefKey?: string;
  /** One in-process bus (the default), or real NATS under `namespace` (a fresh one when not given). */
  transport?: 'inprocess' | 'nats';
  namespace?: string;
  /** Both countries' environment; `usEnv` and `deEnv` add one country's own over it. */
  env?: Record<string, string>;
  usEnv?: Record<string, string>;
  deEnv?: Record<string, string>;
}

export interface CountryPair {
  us: RunningCountry;
  de: RunningCountry;
  /** The bus they share (absent on NATS). */
  bus?: InProcessBus;
  /** DE, then US. */
  close(): Promise<void>;
}

/**
 * US and DE, each the other's peer, on one transport with one subject-reference key and admin token:
 * US starts first. When DE does not start, US is closed before the error is thrown, so a spec's
 * afterAll only closes a pair it got.
 */
export async function startCountryPair(options: CountryPairOptions): Promise<CountryPair> {
  const transport = options.transport ?? 'inprocess';
  const bus = transport === 'inprocess' ? new InProcessBus() : undefined;
  const namespace = transport === 'nats' ? (options.namespace ?? uniquePrefix('e2e')) : undefined;
  const common = { transport, bus, namespace, subjectRefKey: options.subjectRefKey ?? randomSecret(), adminToken: options.adminToken };
  const us = await startCountry({ ...common, country: 'US', peers: ['DE'], env: { ...options.env, ...options.usEnv } });
  let de: RunningCountry;
  try {
    de = await startCountry({ ...common, country: 'DE', peers: ['US'], env: { ...options.env, ...options.deEnv } });
  } catch (error) {
    await us.close();
    throw error;
  }
  const close = async () => {
    await de.close();
    await us.close();
  };
  return { us, de, bus, close };
}

export const randomSecret = () => randomBytes(32).toString('hex');

/**
 * A client of `country`'s services on the transport it runs on (in-process or NATS), as a test
 * that plays a service or a peer country sends through: close it when done.
 */
export function countryClient(country: RunningCountry, to = country.country): CountryClient {
  return createTransportClient(country.transport, { bus: country.bus, servers: testNatsUrl(), prefix: subjectPrefix(to, country.namespace) });
}

/** A small JSON HTTP client for the tests. */
export async function http(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** Polls until `check` holds; replication between countries is asynchronous. */
/**
 * Every item of a paged list (`{data, next_cursor}`), following `next_cursor` from `path` (which
 * carries its own query, `limit` say); a page that does not answer 200 fails the test.
 */
export async function allPages(url: string, path: string, token: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await http(url, 'GET', cursor ? `${path}${path.includes('?') ? '&' : '?'}cursor=${cursor}` : path, { token });
    if (page.status !== 200) throw new Error(`GET ${path} answered ${page.status}: ${JSON.stringify(page.body).slice(0, 500)}`);
    ids.push(...page.body.data.map((item: { id: string }) => item.id));
    cursor = page.body.next_cursor;
    pages += 1;
  } while (cursor);
  return { ids, pages };
}

/**
 * An import's report read page by page (`GET /api/v1/consent_records/imports/<id>`, `?limit=` when
 * given), following `next_cursor` until it is null: every page's answer, and their rows in order. A
 * page that does not answer 200 fails the test.
 */
export async function importReportPages(url: string, importId: string, token: string, limit?: number): Promise<{ rows: any[]; pages: any[] }> {
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const query = [limit !== undefined ? `limit=${limit}` : '', cursor ? `cursor=${cursor}` : ''].filter(Boolean).join('&');
    const page = await http(url, 'GET', `/api/v1/consent_records/imports/${importId}${query ? `?${query}` : ''}`, { token });
    if (page.status !== 200) throw new Error(`the report of ${importId} answered ${page.status}: ${JSON.stringify(page.body).slice(0, 500)}`);
    if (pages.length > 10_000) throw new Error(`the report of ${importId} does not end`);
    pages.push(page.body);
    cursor = page.body.next_cursor;
  } while (cursor);
  return { rows: pages.flatMap((page) => page.rows), pages };
}

export async function eventually(check: () => Promise<boolean>, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An application made with the admin token at `country` (`body`, a sandbox "Acme" by default), and an API token of it with the default scopes. */
export async function applicationWithToken(
  country: RunningCountry,
  adminToken: string,
  body: Record<string, unknown> = { name: 'Acme', environment: 'sandbox' },
): Promise<{ applicationId: string; apiToken: string }> {
  const application = await http(country.url, 'POST', '/api/v1/applications', { token: adminToken, body });
  if (application.status !== 201) throw new Error(`the application was not created: ${JSON.stringify(application.body)}`);
  const applicationId: string = application.body.id;
  const token = await http(country.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: adminToken, body: {} });
  if (token.status !== 201) throw new Error(`the API token was not issued: ${JSON.stringify(token.body)}`);
  return { applicationId, apiToken: token.body.token };
}

/**
 * An application made with the admin token at `country`, an API token of it (applicationWithToken),
 * and a flow of `flow` (the create body) activated: what most specs start from.
 */
export async function activeFlowApplication(country: RunningCountry, adminToken: string, flow: Record<string, unknown>): Promise<{ applicationId: string; apiToken: string; flowId: string }> {
  const { applicationId, apiToken } = await applicationWithToken(country, adminToken);
  const created = await http(country.url, 'POST', `/api/v1/applications/${applicationId}/flows`, { token: apiToken, body: flow });
  if (created.status !== 201) throw new Error(`the flow was not created: ${JSON.stringify(created.body)}`);
  const activated = await http(country.url, 'POST', `/api/v1/flows/${created.body.id}/activate`, { token: apiToken });
  if (activated.status !== 200) throw new Error(`the flow was not activated: ${JSON.stringify(activated.body)}`);
  return { applicationId, apiToken, flowId: created.body.id };
}

/** The home country each of `references` has in a country's residency directory (absent: none). */
export async function directoryHomes(country: RunningCountry, references: string[]): Promise<Record<string, string>> {
  const client = new Client({ connectionString: country.database.url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT rtrim(reference) AS reference, home_country FROM residency_router.directory_entries WHERE reference = ANY($1)', [references]);
    return Object.fromEntries(rows.map((row: { reference: string; home_country: string }) => [row.reference, row.home_country]));
  } finally {
    await client.end();
  }
}
