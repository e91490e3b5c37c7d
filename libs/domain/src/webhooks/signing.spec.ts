import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { SIGNATURE_VERSION, webhookHeaders, webhookSignature, webhookTimestamp } from './signing';

// Vectors computed outside Node with `printf '%s' '<timestamp>.<body>' | openssl dgst -sha256 -hmac '<secret>'`.
const VECTORS = [
  {
    secret: 'whsec_test_secret',
    timestamp: 1700000000,
    body: '{"event":"consent.granted","id":"evt_1"}',
    hex: '33c91d1eaf1398a7bb0b18740f552aa97636cb7aaea937256722136262f7a34d',
  },
  {
    secret: 'whsec_Zoë',
    timestamp: 1700000000,
    body: '{"name":"Zoë"}',
    hex: '5981030d9c1d828c00a7fac5846622992d1704e97f582c9219de28fe644a796d',
  },
];

describe('webhookSignature', () => {
  it.each(VECTORS)('matches the openssl vector for $secret', ({ secret, timestamp, body, hex }) => {
    expect(webhookSignature(secret, timestamp, body)).toBe(`v1=${hex}`);
    expect(webhookSignature(secret, timestamp, Buffer.from(body, 'utf8'))).toBe(`v1=${hex}`);
  });

  it('is v1=<64 lower-case hex> and equals an independent HMAC over "<timestamp>.<body>"', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 0, max: 2 ** 40 }), fc.string(), (secret, ts, body) => {
        const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(`${ts}.${body}`, 'utf8')).digest('hex');
        const signature = webhookSignature(secret, ts, body);
        expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
        expect(signature).toBe(`${SIGNATURE_VERSION}=${expected}`);
      }),
    );
  });

  it('signs bytes exactly: any change of body, timestamp or secret changes the signature', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.nat(), fc.uint8Array({ minLength: 1 }), fc.nat({ max: 1000 }), (secret, ts, bytes, i) => {
        const body = Buffer.from(bytes);
        const base = webhookSignature(secret, ts, body);
        const flipped = Buffer.from(body);
        flipped[i % flipped.length] ^= 0x01;
        expect(webhookSignature(secret, ts, flipped)).not.toBe(base);
        expect(webhookSignature(secret, ts + 1, body)).not.toBe(base);
        expect(webhookSignature(`${secret}x`, ts, body)).not.toBe(base);
      }),
    );
  });

  it.each([-1, 1.5, Number.NaN, Infinity, 2 ** 60])('refuses the timestamp %p', (ts) => {
    expect(() => webhookSignature('whsec_x', ts, '{}')).toThrow(RangeError);
  });

  it('refuses an empty secret', () => {
    expect(() => webhookSignature('', 1, '{}')).toThrow(RangeError);
  });
});

describe('webhookHeaders', () => {
  it('carries the four service headers, JSON content type and the user agent', () => {
    const { secret, timestamp, body, hex } = VECTORS[0];
    expect(webhookHeaders({ secret, timestamp, eventId: 'evt_1', eventType: 'consent.granted', rawBody: body })).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'DecisionService-Webhooks/1',
      'X-Service-Signature': `v1=${hex}`,
      'X-Service-Timestamp': '1700000000',
      'X-Service-Event-ID': 'evt_1',
      'X-Service-Event-Type': 'consent.granted',
    });
  });

  it('signs with the secret before a rotation too, its value after the new one\'s and a comma', () => {
    const { secret, timestamp, body, hex } = VECTORS[0];
    const previous = 'whsec_the_one_before';
    const headers = webhookHeaders({ secret, previousSecret: previous, timestamp, eventId: 'evt_1', eventType: 'consent.granted', rawBody: body });
    expect(headers['X-Service-Signature']).toBe(`v1=${hex},${webhookSignature(previous, timestamp, body)}`);
  });
});

describe('webhookTimestamp', () => {
  it('is whole Unix seconds, rounded down', () => {
    expect(webhookTimestamp(new Date('2023-11-14T22:13:20.999Z'))).toBe(1700000000);
  });
});
