#!/usr/bin/env node
// The baseline: a bare Fastify server answering a small JSON document, nothing else.
const Fastify = require('fastify');

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' }).then((address) => {
  process.stdout.write(`listening ${address}\n`);
});
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
