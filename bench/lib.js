/**
 * What the benchmarks share: command-line options, free ports, starting and stopping a script,
 * starting a whole country pair with the repository's own start command in a temporary data folder,
 * the machine description, and writing a result file to bench/results/.
 */
const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { performance } = require('node:perf_hooks');
const { MEMORY_NODE_FLAGS } = require('@dcr/service-kit');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1] : fallback;
}

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * Starts `node [flags] <script>` and resolves once its output contains readyText. The output goes to
 * a file, not to a pipe: a service writing an access line per request would otherwise have this
 * process (which also runs the load generator) read every line, slowing the load for that target
 * only. The file is polled until ready; `output()` returns its last 256 KiB (for error reports).
 */
function start(script, env, readyText, flags = [], root = ROOT) {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dcr-bench-log-'));
  const logFile = path.join(logDir, 'output.log');
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...flags, path.join(root, script)], { env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let finalOutput;
  const output = () => {
    if (finalOutput !== undefined) return finalOutput;
    try {
      const size = fs.statSync(logFile).size;
      const length = Math.min(size, 256 * 1024);
      const buffer = Buffer.alloc(length);
      const handle = fs.openSync(logFile, 'r');
      try {
        fs.readSync(handle, buffer, 0, length, size - length);
      } finally {
        fs.closeSync(handle);
      }
      return buffer.toString();
    } catch {
      return '';
    }
  };
  child.once('exit', () => {
    finalOutput = output();
    fs.rmSync(logDir, { recursive: true, force: true });
  });
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (!output().includes(readyText)) return;
      clearInterval(poll);
      resolve({ child, output });
    }, 100);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`${script} exited with ${code}:\n${output()}`));
    });
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Starts US and DE with the repository's own start command (`tools/dev/start-embedded.js`, or
 * `tools/dev/start-distributed.js`, which needs DATABASE_URL and NATS_URL) in a temporary data
 * folder on free ports, with the per-application rate limit raised out of the way (on, so its cost
 * is measured, but at 10,000,000/s). Resolves once it is ready, with the development credentials
 * it wrote (`dev-credentials.json`: application_id, api_token, publishable_key, endpoints).
 * `nodeFlags` are added to the embedded process (the distributed launcher sets its own). `root` is
 * the checkout to start (another work tree, for an A/B run of two commits on the same host).
 */
async function startCountryPair({ mode = 'embedded', env = {}, nodeFlags = [], root = ROOT } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dcr-bench-'));
  fs.chmodSync(dataDir, 0o755);
  const fullEnv = {
    DCR_DATA_DIR: dataDir,
    US_PORT: String(await freePort()),
    DE_PORT: String(await freePort()),
    EMBEDDED_PG_PORT: String(await freePort()),
    // The limiter stays on, raised out of the way, so its cost is part of what is measured.
    RATE_LIMIT_RPS: '10000000',
    RATE_LIMIT_BURST: '10000000',
    ...env,
  };
  const script = mode === 'distributed' ? 'tools/dev/start-distributed.js' : 'tools/dev/start-embedded.js';
  // The same Node flags as `npm start` (package.json); the distributed launcher adds them itself.
  const flags = mode === 'embedded' ? ['--max-semi-space-size=64', '--heap-growing-percent=300', ...MEMORY_NODE_FLAGS, ...nodeFlags] : nodeFlags;
  // On any benchmark (embedded only): `--cpu-prof <dir>`, a V8 CPU profile of the service written
  // when it stops; `--sql-trace <file>`, bench/sql-trace.js preloaded to count its SQL statements;
  // `--record-stages <file>`, bench/record-stages.js preloaded to time a Record API request's stages.
  const profileDir = option('cpu-prof');
  if (profileDir && mode === 'embedded') flags.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`);
  const sqlTrace = option('sql-trace');
  if (sqlTrace && mode === 'embedded') {
    flags.push('--require', path.join(__dirname, 'sql-trace.js'));
    fullEnv.SQL_TRACE_FILE = path.resolve(sqlTrace);
  }
  // `--stall-probe <file>`: bench/stall-probe.js preloaded to log event-loop delays and long collections.
  const stallProbe = option('stall-probe');
  if (stallProbe && mode === 'embedded') {
    flags.push('--require', path.join(__dirname, 'stall-probe.js'));
    fullEnv.STALL_PROBE_FILE = path.resolve(stallProbe);
  }
  // `--pg-stat-statements`: the embedded PostgreSQL with pg_stat_statements preloaded (planning time
  // tracked too), for a benchmark that reports what each statement costs (postgresWork).
  if (process.argv.includes('--pg-stat-statements') && mode === 'embedded') {
    fullEnv.EMBEDDED_PG_FLAGS = '-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on';
  }
  const recordStages = option('record-stages');
  if (recordStages && mode === 'embedded') {
    flags.push('--require', path.join(__dirname, 'record-stages.js'));
    fullEnv.RECORD_STAGES_FILE = path.resolve(recordStages);
  }
  let service;
  try {
    service = await start(script, fullEnv, 'stop with Ctrl-C', flags, root);
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const credentials = JSON.parse(fs.readFileSync(path.join(dataDir, 'dev-credentials.json'), 'utf8'));
  const placement = process.argv.includes('--pin') ? pinProcesses(service.child.pid) : undefined;
  // Where each country's data is, for benchmarks that read what the service wrote.
  const databaseUrl = (country) => {
    if (mode === 'distributed') return require('@dcr/persistence').countryDatabaseUrl(process.env.DATABASE_URL, country);
    return `postgres://postgres:dcr-embedded@127.0.0.1:${fullEnv.EMBEDDED_PG_PORT}/dcr_${country.toLowerCase()}`;
  };
  return {
    databaseUrl,
    /** The Node flags the embedded process was started with (the distributed launcher sets its own). */
    nodeFlags: flags,
    child: service.child,
    output: service.output,
    dataDir,
    credentials,
    /** With --pin: which cores the service, PostgreSQL, NATS and the load generator were given. */
    placement: placement?.description,
    async close() {
      placement?.restore();
      await stop(service.child);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `--pin`: the service's Node.js processes on the first cores, and PostgreSQL (its postmaster, so
 * the backends it forks later too), NATS and this process (the load generator) on the last one.
 *
 * Why: on this two-vCPU host, every write to a loopback socket wakes the reader (a PostgreSQL
 * backend, the load generator) with a synchronous wake-up, which Linux places on the writer's core,
 * where it preempts the writer; the other core stays half idle. Measured for decision creates
 * (embedded, 32 connections): 321–522 req/s unplaced, 777–1,019 req/s placed, with about 50 ms
 * p50 of waiting for the core. A deployment would run PostgreSQL elsewhere; placing it here
 * separates the service's own cost from that scheduling effect. Results record the placement, and
 * the affinities PostgreSQL and NATS had are restored on close (they are the machine's services).
 * Paced runs report how late the load generator noticed their requests were due (`send_lateness`)
 * and how many waited for a free connection (`waited_for_connection`), so its own stalls on the
 * shared core can be told from the service's.
 */
function pinProcesses(servicePid) {
  const cores = os.cpus().length;
  if (cores < 2) return undefined;
  const serviceCores = cores === 2 ? '0' : `0-${cores - 2}`;
  const otherCore = String(cores - 1);
  const table = processTable();
  const inService = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 50; p = table.get(p)?.ppid ?? 0, hops++) if (p === servicePid) return true;
    return false;
  };
  /** A process's CPU list, or undefined when it ended since the table was read (a PostgreSQL backend, say). */
  const affinity = (pid) => {
    try {
      return execFileSync('taskset', ['-p', '-c', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(':').pop().trim();
    } catch {
      return undefined;
    }
  };
  const setAffinity = (pid, list) => {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', list, String(pid)], { stdio: 'ignore' });
    } catch {
      // the process ended meanwhile
    }
  };
  const restore = [];
  const placed = { service: [], others: [] };
  for (const [pid, row] of table) {
    if (row.comm === 'postgres' || row.comm === 'nats-server') {
      const before = affinity(pid);
      if (before === undefined) continue;
      restore.push([pid, before]);
      setAffinity(pid, otherCore);
      placed.others.push(row.comm);
    } else if (pid === servicePid || (inService(pid) && row.comm.startsWith('node'))) {
      setAffinity(pid, serviceCores);
      placed.service.push(pid);
    }
  }
  restore.push([process.pid, affinity(process.pid)]);
  setAffinity(process.pid, otherCore);
  return {
    description: {
      service_cores: serviceCores,
      service_processes: placed.service.length,
      postgres_nats_and_load_generator_core: otherCore,
      postgres_processes: placed.others.filter((c) => c === 'postgres').length,
      nats_processes: placed.others.filter((c) => c === 'nats-server').length,
    },
    restore() {
      for (const [pid, list] of restore) setAffinity(pid, list);
    },
  };
}

/** pid → {ppid, comm, cpu seconds (user + system), reaped children's cpu seconds} for every process, from /proc. */
/**
 * One service process the distributed launcher started (its child with `apps/<service>/dist/main.js`
 * and COUNTRY=<country>): its pid, environment and Node flags, read from /proc.
 */
function launchedService(launcherPid, service, country) {
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(launcherPid)], { encoding: 'utf8' }).split('\n').map(Number).filter(Boolean);
  for (const pid of children) {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.findIndex((arg) => arg.endsWith(path.join('apps', service, 'dist', 'main.js')));
    if (script < 0) continue;
    const env = Object.fromEntries(
      fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    if (env.COUNTRY === country) return { pid, env, flags: argv.slice(1, script) };
  }
  throw new Error(`the ${country} ${service} of the distributed launcher (pid ${launcherPid}) was not found`);
}

function processTable() {
  const table = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { comm, fields } = parseStat(fs.readFileSync(`/proc/${entry}/stat`, 'utf8'));
      table.set(Number(entry), {
        ppid: Number(fields[1]),
        comm,
        cpu: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS,
        // Children it has waited for: PostgreSQL's postmaster reaps the backends of connections that
        // ended, whose own CPU then shows only here.
        reaped: (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS,
      });
    } catch {
      // the process ended meanwhile
    }
  }
  return table;
}
const CLOCK_TICKS = 100;

/** A service process's name: `<country> <service>` for the distributed launcher's, else its pid and command. */
function processName(pid) {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const service = argv.map((arg) => /apps\/([^/]+)\/dist\/main\.js$/.exec(arg)?.[1]).find(Boolean);
    const country = /(?:^|\0)COUNTRY=([A-Z]{2})(?:\0|$)/.exec(fs.readFileSync(`/proc/${pid}/environ`, 'utf8'))?.[1];
    return service ? `${country ?? '?'} ${service}` : `${pid} ${path.basename(argv.find((arg) => arg.endsWith('.js')) ?? argv[0])}`;
  } catch {
    return String(pid);
  }
}

/** A `/proc/.../stat` line: the command name, and the fields after it (the third field of the file first). */
function parseStat(stat) {
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

/** A thread's CPU seconds (user and system), or undefined when it ended meanwhile. */
function threadCpu(pid, tid) {
  try {
    const { fields } = parseStat(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** The machine's CPU seconds from /proc/stat: in all, and per core (`cpuN` lines, in order). */
function machineCpu() {
  const times = (line) => {
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0) / CLOCK_TICKS;
    const idle = fields[3] / CLOCK_TICKS;
    const iowait = fields[4] / CLOCK_TICKS;
    return { total, busy: total - idle - iowait, iowait };
  };
  const lines = fs.readFileSync('/proc/stat', 'utf8').split('\n');
  return { ...times(lines[0]), cores: lines.filter((line) => /^cpu\d+ /.test(line)).map(times) };
}

/**
 * CPU time spent between start and stop by: the service (the process `rootPid` and its
 * descendants, PostgreSQL excluded), PostgreSQL (every process named postgres, and the backends of
 * connections that ended meanwhile, which its postmaster reaped: the embedded
 * cluster, or the system one in distributed mode), this process (the load generator), and the
 * machine as a whole (so that other work on a shared machine shows up).
 */
function cpuMeter(rootPid) {
  const snapshot = () => {
    const table = processTable();
    const inService = (pid) => {
      for (let p = pid, hops = 0; p > 1 && hops < 50; p = table.get(p)?.ppid ?? 0, hops++) if (p === rootPid) return true;
      return false;
    };
    let service = 0;
    let postgres = 0;
    /** Each service process's main thread (its event loop), by pid. */
    const mainThreads = new Map();
    /** Each service process's CPU, by pid (named by processName). */
    const processes = new Map();
    for (const [pid, row] of table) {
      if (row.comm === 'postgres') postgres += row.cpu + row.reaped;
      else if (inService(pid)) {
        service += row.cpu;
        processes.set(pid, row.cpu);
        const main = threadCpu(pid, pid);
        if (main !== undefined) mainThreads.set(pid, main);
      }
    }
    const self = process.cpuUsage();
    return { service, postgres, mainThreads, processes, self: (self.user + self.system) / 1e6, machine: machineCpu(), at: performance.now() };
  };
  const start = snapshot();
  return {
    stop(requests) {
      const end = snapshot();
      const seconds = (end.at - start.at) / 1000;
      const perRequest = (cpuSeconds) => round2((cpuSeconds * 1000) / requests);
      const machineBusy = end.machine.busy - start.machine.busy;
      const machineTotal = end.machine.total - start.machine.total;
      return {
        service_cpu_ms_per_request: perRequest(end.service - start.service),
        postgres_cpu_ms_per_request: perRequest(end.postgres - start.postgres),
        load_generator_cpu_ms_per_request: perRequest(end.self - start.self),
        service_cpu_cores: round2((end.service - start.service) / seconds),
        // The busiest event loop of the service's processes (embedded: its one main thread), in cores:
        // near 1, the service is bound by that thread; well under, it waits (the rest of
        // service_cpu_cores is V8's and libuv's other threads).
        service_busiest_main_thread_cores: round2(
          Math.max(0, ...[...end.mainThreads].map(([pid, cpu]) => (start.mainThreads.has(pid) ? cpu - start.mainThreads.get(pid) : 0))) / seconds,
        ),
        postgres_cpu_cores: round2((end.postgres - start.postgres) / seconds),
        machine_busy_percent: Math.round((100 * machineBusy) / machineTotal),
        // Each core's busy share, and the share it sat idle with a task waiting for the disk (a core
        // with time to spare under saturation means the load waits for something else: a round
        // trip, a flush; see the twenty-fifth session in docs/performance.md). With --pin, core 0
        // is the service's, the last PostgreSQL's and the load generator's.
        machine_core_busy_percent: end.machine.cores.map((core, i) => Math.round((100 * (core.busy - start.machine.cores[i].busy)) / Math.max(1e-9, core.total - start.machine.cores[i].total))),
        machine_core_iowait_percent: end.machine.cores.map((core, i) => Math.round((100 * (core.iowait - start.machine.cores[i].iowait)) / Math.max(1e-9, core.total - start.machine.cores[i].total))),
        // Each service process's CPU per request, by name (distributed mode: one process a service and
        // country; embedded: the one process), the launcher and processes under 0.01 ms left out.
        service_cpu_ms_per_request_by_process: Object.fromEntries(
          [...end.processes]
            .map(([pid, cpu]) => [processName(pid), perRequest(cpu - (start.processes.get(pid) ?? 0))])
            .filter(([, ms]) => ms >= 0.01)
            .sort((a, b) => b[1] - a[1]),
        ),
        // Everything else on the machine (other people's work on a shared host), in cores.
        other_processes_cpu_cores: round2(Math.max(0, machineBusy - (end.service - start.service) - (end.postgres - start.postgres) - (end.self - start.self)) / seconds),
      };
    },
  };
}
const round2 = (n) => Math.round(n * 100) / 100;

/**
 * The most requests per second a run's measured CPU costs allow (`cpu`, from cpuMeter, at `rate`
 * requests/s), if every core each side may use were busy all the time and nothing waited: with
 * `placement` (--pin), the service's cores, its busiest event loop (one thread), and the core
 * PostgreSQL shares with the load generator, each on its own; unplaced, all the machine's cores
 * for the three together. A run whose rate is well under its ceiling waits (round trips, flushes);
 * a target over the ceiling cannot be met on this host at these costs, however the waits are cut.
 * `baseline`: a rate to state the ceiling as a share of (bench/records.js: pgbench's).
 */
function ceilingRate(cpu, rate, placement, baseline) {
  const perSecond = (ms) => (ms > 0 ? 1000 / ms : Infinity);
  const cores = os.cpus().length;
  const bounds = placement
    ? [
        ["the service's cores", perSecond(cpu.service_cpu_ms_per_request) * Math.max(1, cores - 1)],
        ["the service's event loop", perSecond((1000 * cpu.service_busiest_main_thread_cores) / rate)],
        ["PostgreSQL's and the load generator's core", perSecond(cpu.postgres_cpu_ms_per_request + cpu.load_generator_cpu_ms_per_request)],
      ]
    : [['all cores', perSecond(cpu.service_cpu_ms_per_request + cpu.postgres_cpu_ms_per_request + cpu.load_generator_cpu_ms_per_request) * cores]];
  const [boundBy, most] = bounds.reduce((low, bound) => (bound[1] < low[1] ? bound : low));
  return {
    records_per_second: Math.round(most),
    ...(baseline ? { share_of_pgbench: Math.round((1000 * most) / baseline) / 1000 } : {}),
    bound_by: boundBy,
    each: Object.fromEntries(bounds.map(([name, value]) => [name, Math.round(value)])),
  };
}

function machine() {
  return { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version };
}

/**
 * How fast the host is right now: the milliseconds a fixed CPU task takes in a fresh Node.js process
 * on the first core (SHA-256 chained 300,000 times, then two million property writes). This shared
 * host's speed moves by a factor of two between runs minutes apart (docs/performance.md, tenth
 * session), so results carry this figure, taken before and after, to tell a slow host from slow code.
 */
function hostCalibration() {
  const code =
    "const t=process.hrtime.bigint();const c=require('crypto');let x='a';" +
    "for(let i=0;i<300000;i++)x=c.createHash('sha256').update(x).digest('hex');" +
    "const o={};for(let i=0;i<2e6;i++)o['k'+(i%1000)]=i;" +
    'process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))';
  let output;
  try {
    output = execFileSync('taskset', ['-c', '0', process.execPath, '-e', code], { encoding: 'utf8' });
  } catch {
    output = execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  }
  return Math.round(Number(output));
}

/**
 * Which code was measured: the commit, and the files under apps/, libs/ and tools/ that differ from
 * it (others edit the working tree while benchmarks run), with a hash of that difference.
 */
function source() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
    const commit = git('rev-parse', 'HEAD').trim();
    const changed = git('status', '--porcelain', '--', 'apps', 'libs', 'tools').split('\n').filter(Boolean).map((line) => line.slice(3));
    const diff = changed.length > 0 ? crypto.createHash('sha256').update(git('diff', 'HEAD', '--', 'apps', 'libs', 'tools')).digest('hex').slice(0, 12) : null;
    return { commit, uncommitted_files: changed, uncommitted_diff_sha256: diff };
  } catch {
    return { commit: null };
  }
}

/** Writes bench/results/<ISO date, file-safe>-<name>.json and answers the file's path. */
function writeResult(date, name, result) {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${date.replace(/[:.]/g, '-')}-${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/**
 * Lets PostgreSQL finish what a load left behind before the next measured run: the dirty pages of
 * its writes (a checkpoint, forced here, which also restarts the checkpoint timer, so no timed
 * checkpoint of that backlog falls in the run) and autovacuums of its tables. Without it, that work
 * landed in later measured windows (bench/records.js: pgbench's inserts doubled PostgreSQL's CPU per
 * record in some runs; bench/decisions.js: half-load runs right after saturation or a token pool's
 * preparation). Waits until no autovacuum worker has run for two polls in a row (at most a minute).
 * Answers the seconds waited.
 */
async function settlePostgres(databaseUrl) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  try {
    await client.query('CHECKPOINT');
    let quiet = 0;
    while (quiet < 2 && Date.now() - started < 60_000) {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`);
      quiet = rows[0].n === 0 ? quiet + 1 : 0;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return Math.round((Date.now() - started) / 100) / 10;
  } finally {
    await client.end();
  }
}

/**
 * What PostgreSQL did for a measured window, per unit of work (a record, say): the WAL it wrote (the
 * whole cluster's `pg_stat_wal`, both countries' databases), and with `statements` (the embedded
 * server started with pg_stat_statements preloaded: `--pg-stat-statements`, see startCountryPair)
 * the statements that cost it most, each with its calls, its execution and planning time, its rows
 * and WAL records per unit. `start()` before the window (it resets the statement counters), then
 * `stop(units)` after it.
 */
function postgresWork(databaseUrl, { statements = false, top = 15 } = {}) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: databaseUrl });
  // WAL from pg_stat_wal; commits from pg_stat_database, every database of the cluster (both
  // countries' in embedded mode), less the ones this probe's own queries make.
  const wal = async () =>
    (
      await client.query(
        'SELECT w.wal_records, w.wal_fpi, w.wal_bytes, (SELECT sum(xact_commit) FROM pg_stat_database) AS commits FROM pg_stat_wal w',
      )
    ).rows[0];
  let before;
  return {
    async start() {
      await client.connect();
      if (statements) {
        await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
        await client.query('SELECT pg_stat_statements_reset()');
      }
      before = await wal();
    },
    async stop(units) {
      try {
        const after = await wal();
        const per = (value) => Math.round((100 * value) / Math.max(1, units)) / 100;
        const result = {
          wal_records_per_unit: per(Number(after.wal_records) - Number(before.wal_records)),
          wal_full_page_images_per_unit: per(Number(after.wal_fpi) - Number(before.wal_fpi)),
          wal_bytes_per_unit: Math.round((Number(after.wal_bytes) - Number(before.wal_bytes)) / Math.max(1, units)),
          // pg_stat_database is the cumulative statistics system's: a backend reports its counts
          // when it goes idle (at most once a second), so a window's count can be short by what the
          // last second's busy backends had not reported yet.
          commits_per_unit: per(Number(after.commits) - Number(before.commits)),
        };
        if (statements) {
          const { rows } = await client.query(
            `SELECT d.datname AS database, s.calls, s.total_exec_time AS exec_ms, s.total_plan_time AS plan_ms, s.rows, s.wal_records,
                    left(regexp_replace(s.query, '\\s+', ' ', 'g'), 160) AS query
               FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
              WHERE s.query NOT LIKE '%pg_stat_statements%'
              ORDER BY s.total_exec_time + s.total_plan_time DESC LIMIT $1`,
            [top],
          );
          const us = (ms) => Math.round((1000 * Number(ms)) / Math.max(1, units) * 10) / 10;
          result.statements = rows.map((row) => ({
            database: row.database,
            calls_per_unit: per(Number(row.calls)),
            exec_us_per_unit: us(row.exec_ms),
            plan_us_per_unit: us(row.plan_ms),
            rows_per_unit: per(Number(row.rows)),
            wal_records_per_unit: per(Number(row.wal_records)),
            query: row.query,
          }));
        }
        return result;
      } finally {
        await client.end();
      }
    },
  };
}

module.exports = { ROOT, option, freePort, start, stop, median, startCountryPair, launchedService, machine, hostCalibration, source, writeResult, cpuMeter, ceilingRate, settlePostgres, postgresWork };
