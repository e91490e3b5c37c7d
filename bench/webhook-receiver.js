// A fast local webhook receiver for bench/webhooks.js, in its own process so that it does not share
// the service's event loop: answers 200 at once and records when each event id first arrived.
const http = require('node:http');

const firstSeen = new Map();
let requests = 0;
const server = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    requests++;
    const id = request.headers['x-service-event-id'];
    if (id && !firstSeen.has(id)) firstSeen.set(id, Date.now());
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    response.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'stats') process.send({ requests, firstSeen: Object.fromEntries(firstSeen) });
  if (message === 'reset') {
    firstSeen.clear();
    requests = 0;
    process.send({ reset: true });
  }
});
