/**
 * A probe for where a latency tail comes from: preloaded into the service process (`node
 * bench/records.js --stall-probe <file>`, or `node --require ./bench/stall-probe.js …`), it samples
 * the event loop's delay (perf_hooks monitorEventLoopDelay, 5 ms resolution) and writes, with its
 * time, every 100 ms window whose longest delay was over 30 ms and every garbage collection over
 * 10 ms (its V8 kind: 1 a scavenge, 4 a full mark-compact) to STALL_PROBE_FILE as JSON, every second
 * and when the process exits. A request that waited long while the loop was never held that long
 * waited outside the process (PostgreSQL, its disk, the load generator). It changes nothing else; it
 * is not part of the service.
 */
const fs = require('node:fs');
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');

const file = process.env.STALL_PROBE_FILE;
const events = [];
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
setInterval(() => {
  const longestMs = delay.max / 1e6;
  if (longestMs > 30) events.push({ at: new Date().toISOString(), kind: 'event_loop_delay', ms: Math.round(longestMs) });
  delay.reset();
}, 100).unref();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.duration > 10) events.push({ at: new Date().toISOString(), kind: `gc_${entry.detail?.kind}`, ms: Math.round(entry.duration) });
  }
}).observe({ entryTypes: ['gc'] });
const write = () => fs.writeFileSync(file, JSON.stringify(events, null, 1));
setInterval(write, 1000).unref();
process.on('exit', write);
