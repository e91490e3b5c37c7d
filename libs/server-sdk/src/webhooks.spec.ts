import { createHmac } from 'node:crypto';
import fc from 'fast-check';
// Relative imports only: the package must work on its own, without the workspace's other libs.
import {
  VerifyWebhookInput,
  WebhookDeduplicator,
  WebhookIdStore,
  WebhookVerificationError,
  WebhookVerificationFailure,
  verifyWebhook,
} from './index';

const SECRET = 'whsec_test_secret';
const TIMESTAMP = 1700000000;
const BODY =
  '{"event":"consent.granted","id":"evt_1","created_at":"2023-11-14T22:13:20.000Z","application_id":"app_us_1","data":{"flow_id":"flw_1","name":"Zoë"}}';

/** The service's rule, written out independently of the code under test. */
function sign(secret: string, timestamp: number | string, body: string | Buffer): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]));
  return `v1=${mac.digest('hex')}`;
}

function delivery(overrides: Partial<VerifyWebhookInput> = {}): VerifyWebhookInput {
  return {
    secret: SECRET,
    headers: {
      'x-service-signature': sign(SECRET, TIMESTAMP, BODY),
      'x-service-timestamp': String(TIMESTAMP),
      'x-service-event-id': 'evt_1',
      'x-service-event-type': 'consent.granted',
      'content-type': 'application/json',
    },
    rawBody: BODY,
    now: TIMESTAMP + 10,
    ...overrides,
  };
}

function failure(input: VerifyWebhookInput): WebhookVerificationFailure {
  try {
    verifyWebhook(input);
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as WebhookVerificationError).statusCode).toBe(400);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('the delivery was accepted');
}

const EXPECTED_EVENT = {
  id: 'evt_1',
  event: 'consent.granted',
  createdAt: '2023-11-14T22:13:20.000Z',
  applicationId: 'app_us_1',
  data: { flow_id: 'flw_1', name: 'Zoë' },
  timestamp: TIMESTAMP,
};

describe('verifyWebhook', () => {
  it('matches a fixed vector computed with openssl', () => {
    // printf '%s' '1700000000.{"event":"consent.granted","id":"evt_1"}' | openssl dgst -sha256 -hmac whsec_test_secret
    expect(sign(SECRET, TIMESTAMP, '{"event":"consent.granted","id":"evt_1"}')).toBe(
      'v1=33c91d1eaf1398a7bb0b18740f552aa97636cb7aaea937256722136262f7a34d',
    );
  });

  it('accepts a correctly signed delivery and returns the event from the signed body', () => {
    expect(verifyWebhook(delivery())).toEqual(EXPECTED_EVENT);
  });

  it('accepts the body as a string, a Buffer or a Uint8Array view of the same bytes', () => {
    const bytes = Buffer.from(BODY, 'utf8');
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    expect(verifyWebhook(delivery({ rawBody: bytes }))).toEqual(EXPECTED_EVENT);
    expect(verifyWebhook(delivery({ rawBody: new Uint8Array(bytes) }))).toEqual(EXPECTED_EVENT);
    expect(verifyWebhook(delivery({ rawBody: padded.subarray(4, 4 + bytes.length) }))).toEqual(EXPECTED_EVENT);
  });

  it('accepts a WHATWG Headers object', () => {
    const headers = new Headers({
      'X-Service-Signature': sign(SECRET, TIMESTAMP, BODY),
      'X-Service-Timestamp': String(TIMESTAMP),
    });
    expect(verifyWebhook(delivery({ headers }))).toEqual(EXPECTED_EVENT);
  });

  it('looks header names up case-insensitively in a plain object', () => {
    const headers = { 'X-Service-Signature': sign(SECRET, TIMESTAMP, BODY), 'X-SERVICE-TIMESTAMP': String(TIMESTAMP) };
    expect(verifyWebhook(delivery({ headers }))).toEqual(EXPECTED_EVENT);
  });

  it('accepts several signatures when one of them is valid, separated by commas, spaces or repeated headers', () => {
    const valid = sign(SECRET, TIMESTAMP, BODY);
    const other = sign('whsec_old', TIMESTAMP, BODY);
    for (const signature of [`${other},${valid}`, `${other} ${valid}`, `${valid}, ${other}`, `v2=abc ${valid}`, [other, valid]]) {
      expect(verifyWebhook(delivery({ headers: { 'x-service-signature': signature, 'x-service-timestamp': String(TIMESTAMP) } }))).toEqual(
        EXPECTED_EVENT,
      );
    }
  });

  it('accepts any of several secrets during a rotation', () => {
    expect(verifyWebhook(delivery({ secret: ['whsec_new', SECRET] }))).toEqual(EXPECTED_EVENT);
  });

  it('refuses a tampered body', () => {
    expect(failure(delivery({ rawBody: BODY.replace('granted', 'denied') }))).toBe('signature_mismatch');
    expect(failure(delivery({ rawBody: `${BODY} ` }))).toBe('signature_mismatch');
  });

  it('refuses a re-serialised body (the exact bytes are signed)', () => {
    expect(failure(delivery({ rawBody: JSON.stringify(JSON.parse(BODY), null, 2) }))).toBe('signature_mismatch');
  });

  it('refuses a wrong secret', () => {
    expect(failure(delivery({ secret: 'whsec_other' }))).toBe('signature_mismatch');
    expect(failure(delivery({ secret: ['whsec_a', 'whsec_b'] }))).toBe('signature_mismatch');
  });

  it('refuses a signature made for another timestamp (the timestamp is signed)', () => {
    const headers = { 'x-service-signature': sign(SECRET, TIMESTAMP, BODY), 'x-service-timestamp': String(TIMESTAMP + 1) };
    expect(failure(delivery({ headers, now: TIMESTAMP }))).toBe('signature_mismatch');
  });

  it('refuses timestamps more than five minutes old or ahead, and accepts the edges', () => {
    expect(verifyWebhook(delivery({ now: TIMESTAMP + 300 })).id).toBe('evt_1');
    expect(verifyWebhook(delivery({ now: TIMESTAMP - 300 })).id).toBe('evt_1');
    expect(failure(delivery({ now: TIMESTAMP + 301 }))).toBe('timestamp_out_of_tolerance');
    expect(failure(delivery({ now: TIMESTAMP - 301 }))).toBe('timestamp_out_of_tolerance');
    expect(failure(delivery({ now: TIMESTAMP + 3600 }))).toBe('timestamp_out_of_tolerance');
  });

  it('honours a custom tolerance and defaults the clock to now', () => {
    expect(failure(delivery({ now: TIMESTAMP + 11, toleranceSeconds: 10 }))).toBe('timestamp_out_of_tolerance');
    expect(verifyWebhook(delivery({ now: TIMESTAMP + 3600, toleranceSeconds: 3600 })).id).toBe('evt_1');
    // No `now`: the real clock is years after TIMESTAMP.
    expect(failure(delivery({ now: undefined }))).toBe('timestamp_out_of_tolerance');
    const fresh = Math.floor(Date.now() / 1000);
    const headers = { 'x-service-signature': sign(SECRET, fresh, BODY), 'x-service-timestamp': String(fresh) };
    expect(verifyWebhook(delivery({ headers, now: undefined })).timestamp).toBe(fresh);
  });

  it.each([
    [{ 'x-service-timestamp': String(TIMESTAMP) }],
    [{ 'x-service-signature': sign(SECRET, TIMESTAMP, BODY) }],
    [{ 'x-service-signature': '', 'x-service-timestamp': String(TIMESTAMP) }],
    [{ 'x-service-signature': sign(SECRET, TIMESTAMP, BODY), 'x-service-timestamp': undefined }],
    [{}],
  ])('refuses missing headers: %j', (headers) => {
    expect(failure(delivery({ headers }))).toBe('missing_header');
  });

  it('refuses missing headers in a Headers object', () => {
    expect(failure(delivery({ headers: new Headers() }))).toBe('missing_header');
  });

  it.each([
    ['sha256=abc', String(TIMESTAMP)],
    ['v1=xyz', String(TIMESTAMP)],
    ['v1=' + 'a'.repeat(63), String(TIMESTAMP)],
    [sign(SECRET, TIMESTAMP, BODY).slice(3), String(TIMESTAMP)],
    [sign(SECRET, TIMESTAMP, BODY), 'yesterday'],
    [sign(SECRET, TIMESTAMP, BODY), '1700000000.5'],
    [sign(SECRET, TIMESTAMP, BODY), '-1700000000'],
  ])('refuses the malformed signature %j / timestamp %j', (signature, timestamp) => {
    expect(failure(delivery({ headers: { 'x-service-signature': signature, 'x-service-timestamp': timestamp } }))).toBe(
      'bad_signature_format',
    );
  });

  it('refuses a correctly signed body that is not a webhook event', () => {
    for (const body of ['not json', '[]', 'null', '{"event":"x","id":"evt_1"}']) {
      const headers = { 'x-service-signature': sign(SECRET, TIMESTAMP, body), 'x-service-timestamp': String(TIMESTAMP) };
      expect(failure(delivery({ headers, rawBody: body }))).toBe('malformed_payload');
    }
  });

  it('explains a body that was parsed before verification', () => {
    expect(() => verifyWebhook(delivery({ rawBody: JSON.parse(BODY) }))).toThrow(/exact request bytes/);
  });

  it('refuses to run without a secret', () => {
    expect(() => verifyWebhook(delivery({ secret: '' }))).toThrow(TypeError);
    expect(() => verifyWebhook(delivery({ secret: [] }))).toThrow(TypeError);
  });

  it('accepts exactly the deliveries signed with the secret, for any secret, body and timestamp', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (secret, otherSecret, timestamp, data) => {
          const body = JSON.stringify({ event: 'webhook.test', id: 'evt_x', created_at: 'now', application_id: 'app', data });
          const headers = { 'x-service-signature': sign(secret, timestamp, body), 'x-service-timestamp': String(timestamp) };
          const input = { secret, headers, rawBody: Buffer.from(body), now: timestamp };
          expect(verifyWebhook(input).data).toEqual(JSON.parse(body).data);
          if (otherSecret !== secret) expect(failure({ ...input, secret: otherSecret })).toBe('signature_mismatch');
        },
      ),
    );
  });
});

describe('WebhookDeduplicator', () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it('runs the handler once; a duplicate answers duplicate:true without running it', async () => {
    const dedup = new WebhookDeduplicator();
    const handler = jest.fn(async () => 'done');
    await expect(dedup.process({ id: 'evt_1' }, handler)).resolves.toEqual({ duplicate: false, result: 'done' });
    await expect(dedup.process({ id: 'evt_1' }, handler)).resolves.toEqual({ duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
    await expect(dedup.process({ id: 'evt_2' }, handler)).resolves.toEqual({ duplicate: false, result: 'done' });
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('runs concurrent duplicates once; the others wait for the first', async () => {
    const dedup = new WebhookDeduplicator();
    const gate = deferred();
    let runs = 0;
    const handler = async () => {
      runs += 1;
      await gate.promise;
      return runs;
    };
    const calls = Array.from({ length: 5 }, () => dedup.process({ id: 'evt_1' }, handler));
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(1);
    gate.resolve();
    const results = await Promise.all(calls);
    expect(results[0]).toEqual({ duplicate: false, result: 1 });
    expect(results.slice(1)).toEqual(Array(4).fill({ duplicate: true }));
    expect(runs).toBe(1);
  });

  it('does not remember an id whose handler failed, so a retry processes it', async () => {
    const dedup = new WebhookDeduplicator();
    await expect(dedup.process({ id: 'evt_1' }, async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    await expect(dedup.process({ id: 'evt_1' }, async () => 'ok')).resolves.toEqual({ duplicate: false, result: 'ok' });
    await expect(dedup.process({ id: 'evt_1' }, async () => 'again')).resolves.toEqual({ duplicate: true });
  });

  it('lets one waiting duplicate take over when the first concurrent attempt fails', async () => {
    const dedup = new WebhookDeduplicator();
    const gate = deferred();
    let runs = 0;
    const failing = dedup.process({ id: 'evt_1' }, async () => {
      runs += 1;
      await gate.promise;
      throw new Error('boom');
    });
    const second = dedup.process({ id: 'evt_1' }, async () => {
      runs += 1;
      return 'second';
    });
    const third = dedup.process({ id: 'evt_1' }, async () => {
      runs += 1;
      return 'third';
    });
    gate.resolve();
    await expect(failing).rejects.toThrow('boom');
    const outcomes = await Promise.all([second, third]);
    expect(runs).toBe(2);
    expect(outcomes).toContainEqual({ duplicate: true });
    expect(outcomes.filter((o) => !o.duplicate)).toHaveLength(1);
  });

  it('forgets ids after ttlMs', async () => {
    let now = 0;
    const dedup = new WebhookDeduplicator({ ttlMs: 1000, now: () => now });
    const handler = jest.fn(async () => undefined);
    await dedup.process({ id: 'evt_1' }, handler);
    now = 999;
    await expect(dedup.process({ id: 'evt_1' }, handler)).resolves.toEqual({ duplicate: true });
    now = 1000;
    await expect(dedup.process({ id: 'evt_1' }, handler)).resolves.toEqual({ duplicate: false, result: undefined });
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('uses a store the caller provides, passing the ttl', async () => {
    const ids = new Map<string, number>();
    const store: WebhookIdStore = {
      has: jest.fn(async (id: string) => ids.has(id)),
      add: jest.fn(async (id: string, ttlMs: number) => void ids.set(id, ttlMs)),
    };
    const dedup = new WebhookDeduplicator({ store, ttlMs: 5000 });
    ids.set('evt_seen_elsewhere', 1);
    const handler = jest.fn(async () => 'x');
    await expect(dedup.process({ id: 'evt_seen_elsewhere' }, handler)).resolves.toEqual({ duplicate: true });
    await expect(dedup.process({ id: 'evt_new' }, handler)).resolves.toEqual({ duplicate: false, result: 'x' });
    expect(store.add).toHaveBeenCalledWith('evt_new', 5000);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('surfaces a store that fails to remember (at-least-once, not silent)', async () => {
    const store: WebhookIdStore = { has: async () => false, add: async () => Promise.reject(new Error('redis down')) };
    const dedup = new WebhookDeduplicator({ store });
    await expect(dedup.process({ id: 'evt_1' }, async () => 'x')).rejects.toThrow('redis down');
  });

  it('refuses an empty id and a bad ttl', async () => {
    await expect(new WebhookDeduplicator().process({ id: '' }, async () => 1)).rejects.toThrow(TypeError);
    expect(() => new WebhookDeduplicator({ ttlMs: 0 })).toThrow(RangeError);
  });

  it('runs each id exactly once however calls interleave', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 20 }), fc.scheduler(), async (ids, s) => {
        const dedup = new WebhookDeduplicator();
        const runs = new Map<string, number>();
        const handler = (id: string) => async () => {
          runs.set(id, (runs.get(id) ?? 0) + 1);
          await s.schedule(Promise.resolve());
        };
        const all = Promise.all(ids.map((id) => dedup.process({ id }, handler(id))));
        const results = await s.waitFor(all);
        for (const id of new Set(ids)) expect(runs.get(id)).toBe(1);
        expect(results.filter((r) => !r.duplicate)).toHaveLength(new Set(ids).size);
      }),
      { numRuns: 50 },
    );
  });
});
