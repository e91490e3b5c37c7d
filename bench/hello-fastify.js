#!/usr/bin/env node
// The baseline: a bare Fastify server answering a small JSON document, nothing else.
//
// With SHAPE=me it answers what `GET /api/v1/me` answers instead (bench/run.js --shape-baseline):
// the same three extra response headers (x-request-id, ratelimit-policy, ratelimit) and a body of
// the same fields and size, still with nothing else behind it. The gap between the two baselines is
// the cost of the answer itself; the gap between this one and `/me` is the gateway's own work.
const Fastify = require('fastify');

const ME_BODY = {
  application_id: 'tp_dev_cx456xc2nh8a46u7',
  application: { id: 'tp_dev_cx456xc2nh8a46u7', name: 'Development application', environment: 'sandbox' },
  account_id: 'acc_8hz6wly8vcmx3f64',
  credential: {
    kind: 'api_token',
    id: 'api_token_0vnr0g17ndjw50hw',
    scopes: ['applications:read', 'applications:write', 'flows:read', 'flows:write', 'decisions:read', 'decisions:write', 'records:read', 'records:write', 'webhooks:read', 'webhooks:write', 'audit:read', 'audit:verify', 'disclosures:write'],
  },
  country: 'US',
};

const app = Fastify({ logger: false });
if (process.env.SHAPE === 'me') {
  app.get('/', (request, reply) => {
    reply.header('x-request-id', 'req_4fhtixv37fye6rwo');
    reply.header('ratelimit-policy', '"default";q=10000000;w=1');
    reply.header('ratelimit', '"default";r=9999999;t=1');
    return reply.send(ME_BODY);
  });
} else {
  app.get('/', async () => ({ hello: 'world' }));
}
app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' }).then((address) => {
  process.stdout.write(`listening ${address}\n`);
});
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
