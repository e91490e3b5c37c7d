/**
 * An evenly paced open-loop HTTP/1.1 load for the half-rate latency runs: request i is due at
 * start + i/rate, and its latency is counted from when it was due, so time spent waiting for a free
 * connection (or for the generator itself) counts too.
 *
 * It writes each request as bytes on a kept-alive TCP connection and reads the answer's status line,
 * headers and body itself, instead of going through Node's http client: on this two-core machine the
 * generator shares a core with PostgreSQL, and Node's client cost about 0.3 ms of that core per
 * request (five times autocannon's), enough to delay PostgreSQL and the generator's own timer. The
 * connections are opened before the first request is due, as a client's pool would be, so the run
 * does not also time their handshakes. One request at a time per connection (no pipelining).
 */
const net = require('node:net');
const { performance } = require('node:perf_hooks');

const round = (n, digits = 0) => Number(n.toFixed(digits));
const HEADER_END = Buffer.from('\r\n\r\n');

/** The bytes of one request. */
function requestBytes(url, { method, path, headers = {}, body }) {
  const payload = body === undefined ? undefined : Buffer.from(body);
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (payload) head += `content-length: ${payload.length}\r\n`;
  head += '\r\n';
  return payload ? Buffer.concat([Buffer.from(head), payload]) : Buffer.from(head);
}

/**
 * Reads answers off one connection: calls `onResponse(status, body)` for each complete one. Knows
 * `content-length` and `transfer-encoding: chunked` bodies, which is all the service sends.
 */
function responseReader(onResponse) {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      const end = buffered.indexOf(HEADER_END);
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const start = end + 4;
      if (length) {
        const size = Number(length[1]);
        if (buffered.length < start + size) return;
        const body = buffered.subarray(start, start + size).toString('utf8');
        buffered = buffered.subarray(start + size);
        onResponse(status, body);
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const parts = [];
        let at = start;
        for (;;) {
          const lineEnd = buffered.indexOf('\r\n', at);
          if (lineEnd < 0) return;
          const size = parseInt(buffered.subarray(at, lineEnd).toString('latin1'), 16);
          if (buffered.length < lineEnd + 2 + size + 2) return;
          if (size === 0) {
            at = lineEnd + 4;
            break;
          }
          parts.push(buffered.subarray(lineEnd + 2, lineEnd + 2 + size));
          at = lineEnd + 2 + size + 2;
        }
        buffered = buffered.subarray(at);
        onResponse(status, Buffer.concat(parts).toString('utf8'));
      } else {
        buffered = buffered.subarray(start);
        onResponse(status, '');
      }
    }
  };
}

/** The run's rate and latency percentiles (ms) from each request's latency. */
function summary(latencies, elapsedS, extra = {}) {
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const at = (q) => round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)], 1);
  return {
    requests: latencies.length,
    seconds: round(elapsedS, 2),
    ...extra,
    requests_per_second: round(latencies.length / elapsedS),
    latency_p50_ms: at(0.5),
    latency_p90_ms: at(0.9),
    latency_p99_ms: at(0.99),
    latency_max_ms: round(sorted[sorted.length - 1], 1),
  };
}

/**
 * Reads the answers of one connection that carries one request at a time (`socket.inFlight`):
 * `answered(inFlight, status, body)` for each, after counting its status.
 */
function onAnswers(socket, statuses, answered) {
  socket.on(
    'data',
    responseReader((status, body) => {
      const inFlight = socket.inFlight;
      socket.inFlight = undefined;
      statuses[status] = (statuses[status] ?? 0) + 1;
      answered(inFlight, status, body);
    }),
  );
  socket.on('error', () => undefined);
}

/** Opens one kept-alive connection. */
function connect(url) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => resolve(socket));
    socket.setNoDelay(true);
    socket.once('error', reject);
  });
}

/**
 * Sends `total` requests at `rate` per second over `sockets` connections; `next()` gives each
 * request ({method, path, headers, body}), `onAnswer(status, body)` sees each answer. Resolves with
 * the rate achieved and the latency percentiles (ms, from each request's due time).
 */
async function paced({ base, rate, total, sockets = 64, next, onAnswer }) {
  const url = new URL(base);
  const connections = await Promise.all(Array.from({ length: sockets }, () => connect(url)));
  const latencies = new Float64Array(total);
  // How late this process noticed each request was due (the tick less the due time): the load
  // generator's own stalls (it shares a core with PostgreSQL under --pin), which the latencies
  // include. Apart from it: how many requests then waited for a free connection (all `sockets`
  // busy: the service is behind).
  const lateness = new Float64Array(total);
  let waitedForConnection = 0;
  const statuses = {};
  let errors = 0;
  let done = 0;
  const free = [];
  const waiting = [];
  let live = connections.length;
  return new Promise((resolve) => {
    const interval = 1000 / rate;
    const started = performance.now();
    let sent = 0;
    const finish = () => {
      for (const socket of connections) socket.destroy();
      const late = Array.from(lateness).sort((a, b) => a - b);
      const sendLateness = { p50_ms: round(late[Math.floor(0.5 * (total - 1))], 1), p99_ms: round(late[Math.ceil(0.99 * total) - 1], 1), max_ms: round(late[total - 1], 1) };
      resolve({ ...summary(latencies, (performance.now() - started) / 1000, { target_rate: rate }), send_lateness: sendLateness, waited_for_connection: waitedForConnection, statuses, errors });
    };
    const answered = (i, due) => {
      latencies[i] = performance.now() - due;
      if (++done === total) finish();
    };
    const send = (socket, i, due) => {
      socket.inFlight = { i, due };
      socket.write(requestBytes(url, next()));
    };
    const release = (socket) => {
      const queued = waiting.shift();
      if (queued) send(socket, queued.i, queued.due);
      else free.push(socket);
    };
    for (const socket of connections) {
      onAnswers(socket, statuses, ({ i, due }, status, body) => {
        onAnswer?.(status, body);
        answered(i, due);
        release(socket);
      });
      socket.on('close', () => {
        // A connection the server closed: its request failed, and it serves no more.
        if (socket.inFlight) {
          errors++;
          answered(socket.inFlight.i, socket.inFlight.due);
          socket.inFlight = undefined;
        }
        const index = free.indexOf(socket);
        if (index >= 0) free.splice(index, 1);
        live--;
        if (live === 0) {
          // Nothing left to send on: what waits fails rather than waiting forever.
          for (const queued of waiting.splice(0)) {
            errors++;
            answered(queued.i, queued.due);
          }
        }
      });
      free.push(socket);
    }
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor((now - started) / interval) + 1);
      while (sent < due) {
        const dueAt = started + sent * interval;
        lateness[sent] = now - dueAt;
        const socket = free.pop();
        if (socket) send(socket, sent, dueAt);
        else if (live > 0) {
          waitedForConnection++;
          waiting.push({ i: sent, due: dueAt });
        }
        else {
          errors++;
          answered(sent, dueAt);
        }
        sent++;
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
}

/**
 * A closed-loop saturation load on the same raw connections: each of `sockets` connections sends
 * its next request as soon as its last one is answered, until `total` requests are answered, or
 * (with `durationS` instead of `total`) until no request is sent after `durationS` seconds and the
 * ones in flight are answered. Its latency is counted from the request's write; the rate from the
 * first write to the last answer (autocannon, with an `amount`, notices its end only at its next
 * one-second tick). It costs the core it shares with PostgreSQL a fraction of autocannon's
 * per-request work when every request has its own path or body (autocannon builds each such
 * request anew; see "Eighteenth session" in docs/performance.md).
 */
async function saturate({ base, sockets = 32, total, durationS, next, onAnswer }) {
  const timed = durationS !== undefined;
  if (timed === (total !== undefined)) throw new Error('saturate needs either total or durationS');
  const url = new URL(base);
  const connections = await Promise.all(Array.from({ length: timed ? sockets : Math.min(sockets, total) }, () => connect(url)));
  const latencies = timed ? [] : new Float64Array(total);
  const statuses = {};
  let errors = 0;
  let sent = 0;
  let done = 0;
  return new Promise((resolve) => {
    const started = performance.now();
    const stopSendingAt = timed ? started + durationS * 1000 : Infinity;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      for (const socket of connections) socket.destroy();
      resolve({ ...summary(latencies, (performance.now() - started) / 1000), statuses, errors });
    };
    const more = () => (timed ? performance.now() < stopSendingAt : sent < total);
    const answered = (i, at) => {
      latencies[i] = performance.now() - at;
      done++;
      if (timed ? !more() && done === sent : done === total) finish();
    };
    const sendNext = (socket) => {
      if (!more()) return;
      socket.inFlight = { i: sent++, at: performance.now() };
      socket.write(requestBytes(url, next()));
    };
    for (const socket of connections) {
      onAnswers(socket, statuses, ({ i, at }, status, body) => {
        onAnswer?.(status, body);
        answered(i, at);
        sendNext(socket);
      });
      socket.on('close', () => {
        // A connection the server closed: its request failed; the others carry on with the rest.
        if (socket.inFlight) {
          errors++;
          answered(socket.inFlight.i, socket.inFlight.at);
          socket.inFlight = undefined;
        }
        if (connections.every((c) => c.destroyed) && !finished) {
          while (!timed && sent < total) {
            errors++;
            latencies[sent++] = 0;
            done++;
          }
          finish();
        }
      });
    }
    for (const socket of connections) sendNext(socket);
  });
}

module.exports = { paced, saturate, requestBytes, responseReader };
