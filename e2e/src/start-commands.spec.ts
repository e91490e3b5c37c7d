import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, chmodSync } from 'node:fs';
import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { dropDatabase } from '@dcr/persistence';
import { GATEWAY_MEMORY_NODE_FLAGS, MEMORY_NODE_FLAGS } from '@dcr/service-kit';
import { testNatsUrl, testServerUrl, uniquePrefix } from '@dcr/testing';
import { http } from '../support/country-harness';
import { freePort, launch, REPO_ROOT } from '../support/processes';

/**
 * The two commands of the README, run as a newcomer would (after the build that `npm test` does):
 * each must seed, print both endpoints, write the credentials file, serve both countries, and stop
 * cleanly on SIGTERM.
 */
describe('start commands', () => {
  beforeAll(() => {
    for (const service of ['gateway', 'decisions', 'residency-router']) {
      if (!existsSync(path.join(REPO_ROOT, 'apps', service, 'dist', 'main.js'))) {
        throw new Error('Build first: these tests run the built services (npm test does: npm run build)');
      }
    }
  });

  function credentialsIn(dataDir: string) {
    return JSON.parse(readFileSync(path.join(dataDir, 'dev-credentials.json'), 'utf8')) as {
      application_id: string;
      api_token: string;
      publishable_key: string;
      endpoints: Record<string, string>;
    };
  }

  it('npm start and the image start Node with the memory flags that reclaimMemoryWhenIdle needs', () => {
    const start = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start as string;
    const entrypoint = readFileSync(path.join(REPO_ROOT, 'deploy', 'docker-entrypoint.sh'), 'utf8');
    const imageFlags = /^MEMORY_FLAGS="([^"]*)"$/m.exec(entrypoint)?.[1].split(' ');
    const imageGatewayFlags = /^GATEWAY_MEMORY_FLAGS="([^"]*)"$/m.exec(entrypoint)?.[1].split(' ');
    for (const flag of MEMORY_NODE_FLAGS) expect(start.split(' ')).toContain(flag);
    expect(imageFlags).toEqual(MEMORY_NODE_FLAGS);
    expect(imageGatewayFlags).toEqual(GATEWAY_MEMORY_NODE_FLAGS);
    // The image's two start lines: the gateway's, and the other services'.
    expect(entrypoint.match(/^\s*exec node \$GATEWAY_MEMORY_FLAGS /gm)).toHaveLength(1);
    expect(entrypoint.match(/^\s*exec node \$MEMORY_FLAGS /gm)).toHaveLength(1);
  });

  it('npm start prints where it keeps the credentials and logs as a path one can copy: absolute for a data folder outside the working directory', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { printEndpoints, shownPath } = require(path.join(REPO_ROOT, 'tools/dev/seed.js')) as {
      printEndpoints(options: { endpoints: Record<string, string>; file: string; mode: string }): void;
      shownPath(file: string, cwd?: string): string;
    };
    // Inside the working directory (the default .data/): relative, as the README shows it.
    expect(shownPath('/work/repo/.data/dev-credentials.json', '/work/repo')).toBe('.data/dev-credentials.json');
    // Outside it (DCR_DATA_DIR=/tmp/x-data): absolute, not ../../tmp/x-data/dev-credentials.json.
    expect(shownPath('/tmp/x-data/dev-credentials.json', '/work/repo')).toBe('/tmp/x-data/dev-credentials.json');
    expect(shownPath('/work/repo-other/dev-credentials.json', '/work/repo')).toBe('/work/repo-other/dev-credentials.json');

    const file = path.join(tmpdir(), 'x-data', 'dev-credentials.json');
    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
    try {
      printEndpoints({ endpoints: { US: 'http://127.0.0.1:1' }, file, mode: 'test' });
    } finally {
      write.mockRestore();
    }
    expect(written.join('')).toContain(`  credentials: ${file}\n`);
  });

  it('npm start: the embedded default serves US and DE and keeps its data across restarts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'dcr-embedded-'));
    // PostgreSQL runs as an unprivileged user when the tests run as root: it must reach the folder.
    chmodSync(dataDir, 0o755);
    const env = {
      DCR_DATA_DIR: dataDir,
      US_PORT: String(await freePort()),
      DE_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
    };
    // Stopped in any case: a failed expectation must not leave a server (and jest) running.
    const launched: Array<ReturnType<typeof launch>> = [];
    try {
      const first = launch('tools/dev/start-embedded.js', env);
      launched.push(first);
      await first.waitForOutput('stop with Ctrl-C', 90000);
      const credentials = credentialsIn(dataDir);
      expect(credentials).toMatchObject({
        application_id: expect.stringMatching(/^tp_dev_/),
        publishable_key: expect.stringMatching(/^pk_test_/),
        endpoints: { US: `http://127.0.0.1:${env.US_PORT}`, DE: `http://127.0.0.1:${env.DE_PORT}` },
      });
      expect(first.output()).toContain(credentials.endpoints.US);
      expect(first.output()).toContain(credentials.endpoints.DE);
      // Printed as given, absolute: the data folder is outside the working directory.
      expect(first.output()).toContain(`credentials: ${path.join(dataDir, 'dev-credentials.json')}\n`);
      expect(first.output()).toContain(`logs in ${path.join(dataDir, 'logs')}/`);
      for (const [country, url] of Object.entries(credentials.endpoints)) {
        const me = await http(url, 'GET', '/api/v1/me', { token: credentials.api_token });
        expect(me.status).toBe(200);
        expect(me.body.country).toBe(country);
      }
      // The server runs with the allocator settings of tools/dev/embedded-postgres-runtime.js.
      const postmaster = Number(readFileSync(path.join(realpathSync(path.join(dataDir, 'postgres')), 'postmaster.pid'), 'utf8').split('\n')[0]);
      expect(readFileSync(`/proc/${postmaster}/environ`, 'utf8').split('\0')).toContainEqual(expect.stringMatching(/^GLIBC_TUNABLES=glibc\.malloc\.mmap_threshold=4194304/));
      expect(await first.stop()).toBe(0);

      const second = launch('tools/dev/start-embedded.js', env);
      launched.push(second);
      await second.waitForOutput('stop with Ctrl-C', 90000);
      expect(credentialsIn(dataDir).application_id).toBe(credentials.application_id);
      const me = await http(credentials.endpoints.DE, 'GET', '/api/v1/me', { token: credentials.api_token });
      expect(me.status).toBe(200);
      expect(await second.stop()).toBe(0);
    } finally {
      await Promise.all(launched.map((child) => child.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240000);

  it("npm start: PostgreSQL's usual port taken, it takes another; a second start on a data folder in use says which process holds it", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'dcr-embedded-'));
    chmodSync(dataDir, 0o755);
    // 54329, the embedded PostgreSQL's usual port, held by something else (if nothing holds it yet).
    const squatter = createServer();
    await new Promise<void>((resolve) => {
      squatter.once('error', () => resolve());
      squatter.listen(54329, '127.0.0.1', () => resolve());
    });
    const launched: Array<ReturnType<typeof launch>> = [];
    try {
      const first = launch('tools/dev/start-embedded.js', { DCR_DATA_DIR: dataDir, US_PORT: String(await freePort()), DE_PORT: String(await freePort()) });
      launched.push(first);
      await first.waitForOutput('stop with Ctrl-C', 90000);
      const postmaster = Number(readFileSync(path.join(realpathSync(path.join(dataDir, 'postgres')), 'postmaster.pid'), 'utf8').split('\n')[0]);
      expect(readFileSync(path.join(realpathSync(path.join(dataDir, 'postgres')), 'postmaster.pid'), 'utf8').split('\n')[3]).not.toBe('54329');

      const second = launch('tools/dev/start-embedded.js', {
        DCR_DATA_DIR: dataDir,
        US_PORT: String(await freePort()),
        DE_PORT: String(await freePort()),
        EMBEDDED_PG_PORT: String(await freePort()),
      });
      launched.push(second);
      const code = await new Promise<number | null>((resolve) => second.child.once('exit', (exitCode) => resolve(exitCode)));
      expect(code).toBe(1);
      expect(second.output()).toContain('did not start');
      expect(second.output()).toContain(`Another PostgreSQL (process ${postmaster}) is using that folder`);
      // It names the start that runs it, not only its database server.
      expect(second.output()).toContain(`the embedded PostgreSQL of a running \`npm start\` (process ${first.child.pid})`);
      expect(second.output()).toContain('DCR_DATA_DIR');
      expect(second.output()).not.toContain('UnhandledPromiseRejection');
      // The first goes on serving.
      const credentials = credentialsIn(dataDir);
      expect((await http(credentials.endpoints.US, 'GET', '/api/v1/me', { token: credentials.api_token })).status).toBe(200);
      expect(await first.stop()).toBe(0);
    } finally {
      await Promise.all(launched.map((child) => child.stop()));
      await new Promise((resolve) => squatter.close(resolve));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240000);

  it('npm run start:distributed: a readiness wait that is not a whole number of seconds is refused before anything starts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'dcr-distributed-timeout-'));
    try {
      for (const value of ['abc', '0', '1.5', '99999']) {
        const started = launch('tools/dev/start-distributed.js', { DCR_DATA_DIR: dataDir, DATABASE_URL: testServerUrl(), NATS_URL: testNatsUrl(), START_READY_TIMEOUT_S: value });
        const code = await new Promise<number | null>((resolve) => started.child.once('exit', resolve));
        expect([value, code, started.output()]).toEqual([value, 1, expect.stringContaining('START_READY_TIMEOUT_S must be a whole number of seconds from 1 to 3600')]);
      }
      // Nothing was started: no log of a service was written.
      expect(existsSync(path.join(dataDir, 'logs'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60000);

  it('npm run start:distributed: a start that fails after the services were started stops them too (they were left holding their ports)', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'dcr-distributed-failed-'));
    const serverUrl = new URL(testServerUrl());
    serverUrl.pathname = `/${uniquePrefix('distfail')}`;
    // Both endpoints answer ready at once, and refuse the seed: the launcher's start fails right after
    // it spawned its sixteen services (as when a slow machine makes a country miss its readiness wait).
    const squatters = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<HttpServer>((resolve) => {
            const server = createHttpServer((request, response) => response.writeHead(request.url === '/readyz' ? 200 : 503).end('{}'));
            server.listen(0, '127.0.0.1', () => resolve(server));
          }),
      ),
    );
    const [usPort, dePort] = squatters.map((server) => String((server.address() as AddressInfo).port));
    const env = { DCR_DATA_DIR: dataDir, DATABASE_URL: serverUrl.toString(), NATS_URL: testNatsUrl(), SUBJECT_NAMESPACE: uniquePrefix('e2e'), US_PORT: usPort, DE_PORT: dePort };
    const servicesOf = () =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DCR_DATA_DIR=${dataDir}`);
          } catch {
            return false;
          }
        })
        .map(Number);
    const started = launch('tools/dev/start-distributed.js', env);
    try {
      const code = await new Promise<number | null>((resolve) => started.child.once('exit', resolve));
      expect([code, started.output()]).toEqual([1, expect.stringContaining('503')]);
      expect(servicesOf()).toEqual([]);
    } finally {
      for (const pid of servicesOf()) process.kill(pid, 'SIGKILL');
      await Promise.all(squatters.map((server) => new Promise((resolve) => server.close(resolve))));
      await dropDatabase(`${serverUrl.toString()}_us`);
      await dropDatabase(`${serverUrl.toString()}_de`);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120000);

  it('npm run start:distributed: sixteen processes over real NATS, a request crossing services and back', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'dcr-distributed-'));
    const serverUrl = new URL(testServerUrl());
    serverUrl.pathname = `/${uniquePrefix('dist')}`;
    const env = {
      DCR_DATA_DIR: dataDir,
      DATABASE_URL: serverUrl.toString(),
      NATS_URL: testNatsUrl(),
      SUBJECT_NAMESPACE: uniquePrefix('e2e'),
      US_PORT: String(await freePort()),
      DE_PORT: String(await freePort()),
      ANCHOR_INTERVAL: '1s',
    };
    const started = launch('tools/dev/start-distributed.js', env);
    let killedOne = false;
    try {
      await started.waitForOutput('stop with Ctrl-C', 120000);
      expect(started.output()).toContain('16 processes');
      // Every service process runs with the memory flags: MEMORY_NODE_FLAGS, or the gateway's.
      const services = execFileSync('ps', ['-o', 'pid=', '--ppid', String(started.child.pid)], { encoding: 'utf8' }).split('\n').filter((line) => line.trim());
      expect(services).toHaveLength(16);
      const argvs = services.map((pid) => readFileSync(`/proc/${pid.trim()}/cmdline`, 'utf8').split('\0'));
      const gateways = argvs.filter((argv) => argv.some((arg) => arg.endsWith(path.join('apps', 'gateway', 'dist', 'main.js'))));
      expect(gateways).toHaveLength(2);
      for (const argv of argvs) {
        const gateway = gateways.includes(argv);
        expect(argv).toEqual(expect.arrayContaining([...(gateway ? GATEWAY_MEMORY_NODE_FLAGS : MEMORY_NODE_FLAGS)]));
        expect(argv.includes('--expose-gc')).toBe(!gateway);
      }
      const { api_token: token, application_id: app, endpoints } = credentialsIn(dataDir);

      // gateway (DE) → decisions (DE) → residency-router (DE) over NATS, which confirms the new
      // directory entry with US's residency-router before answering; US's gateway → residency-router
      // then answers where the person lives.
      const usDirectory = new Client({ connectionString: `${serverUrl.toString()}_us` });
      await usDirectory.connect();
      const homedInDe = async () => (await usDirectory.query(`SELECT count(*)::int AS n FROM residency_router.directory_entries WHERE home_country = 'DE'`)).rows[0].n;
      const before = await homedInDe();
      const created = await http(endpoints.DE, 'POST', `/api/v1/applications/${app}/subjects`, {
        token,
        body: { external_id: 'ext-1' },
      });
      expect(created.status).toBe(201);
      // Confirmed over NATS: in US's directory as soon as DE answered, not when an event arrives.
      expect(await homedInDe()).toBeGreaterThan(before);
      await usDirectory.end();
      // ... and not by the fallback (the sync event sent when a peer does not confirm).
      const routerLog = readFileSync(path.join(dataDir, 'logs', 'de-residency-router.log'), 'utf8');
      expect(routerLog).toContain('"service":"residency-router","country":"DE"');
      expect(routerLog).not.toContain('directory confirmation from');
      let answer = await http(endpoints.US, 'GET', `/api/v1/applications/${app}/subjects/${created.body.id}`, { token });
      for (let i = 0; answer.status !== 421 && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await http(endpoints.US, 'GET', `/api/v1/applications/${app}/subjects/${created.body.id}`, { token });
      }
      expect(answer.status).toBe(421);
      expect(answer.body.home_country).toBe('DE');

      // The seed's credential changes are on US's trail; its anchor is cosigned by DE's witness over NATS.
      let anchors = await http(endpoints.US, 'GET', '/api/v1/anchors', { token });
      for (let i = 0; !(anchors.body.data?.[0]?.witness_receipts?.length > 0) && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        anchors = await http(endpoints.US, 'GET', '/api/v1/anchors', { token });
      }
      expect(anchors.body.data[0].witness_receipts).toEqual([expect.objectContaining({ witness: `127.0.0.1:${env.DE_PORT}/witness/de` })]);

      const client = new Client({ connectionString: `${serverUrl.toString()}_de` });
      await client.connect();
      const schemas = await client.query(`SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' AND nspname <> 'information_schema' ORDER BY 1`);
      await client.end();
      expect(schemas.rows.map((r) => r.nspname)).toEqual(
        expect.arrayContaining(['audit_chain', 'decisions', 'gateway', 'mcp_gateway', 'oidc', 'receipts', 'residency_router', 'webhooks']),
      );

      // A service killed by a signal stops the others, and the launcher exits 1 naming it (it exited 0:
      // a child killed by a signal has no exit code, and the launcher waited for it forever).
      const webhooks = services.filter((_pid, i) => argvs[i].some((arg) => arg.endsWith(path.join('apps', 'webhooks', 'dist', 'main.js'))));
      expect(webhooks).toHaveLength(2);
      process.kill(Number(webhooks[0].trim()), 'SIGKILL');
      await started.waitForOutput('exited (SIGKILL)', 30000);
      killedOne = true;
    } finally {
      expect(await started.stop()).toBe(killedOne ? 1 : 0);
      await dropDatabase(`${serverUrl.toString()}_us`);
      await dropDatabase(`${serverUrl.toString()}_de`);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240000);
});
