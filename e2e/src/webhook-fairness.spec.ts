import { WebhookReceiver } from '@dcr/testing';
import { InProcessBus } from '@dcr/transport';
import { applicationWithToken, eventually, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * One application's receivers that hang do not hold every other application's deliveries back: the
 * dispatcher takes due deliveries in turns across applications, each turn counted after what the
 * application has in flight. Two sending slots here, and a read timeout of two seconds: the first
 * slot that frees goes to the other application's delivery, not to the next of eight hanging ones.
 */
describe('webhook deliveries across applications', () => {
  let us: RunningCountry;
  let receiver: WebhookReceiver;
  const adminToken = randomSecret();

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    us = await startCountry({
      country: 'US',
      peers: [],
      transport: 'inprocess',
      bus: new InProcessBus(),
      subjectRefKey: randomSecret(),
      adminToken,
      env: { WEBHOOK_CONCURRENCY: '2', WEBHOOK_READ_TIMEOUT: '2s', WEBHOOK_RETRY_WAITS: '1h,1h,1h,1h' },
    });
  });

  afterAll(async () => {
    await us?.close();
    await receiver?.close();
  });

  it("sends another application's delivery in the first free slot while one application's eight hang", async () => {
    const hog = await applicationWithToken(us, adminToken);
    const other = await applicationWithToken(us, adminToken);
    const subscribe = async (app: { applicationId: string; apiToken: string }, path: string) => {
      const created = await http(us.url, 'POST', `/api/v1/applications/${app.applicationId}/webhooks`, { token: app.apiToken, body: { url: `${receiver.url}${path}`, events: ['consent.granted'] } });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    const test = (app: { applicationId: string; apiToken: string }, id: string) => http(us.url, 'POST', `/api/v1/applications/${app.applicationId}/webhooks/${id}/test`, { token: app.apiToken });
    const hanging = await subscribe(hog, '/hang');
    const fine = await subscribe(other, '/ok');
    for (let i = 0; i < 8; i++) expect((await test(hog, hanging)).status).toBe(202);
    // Both slots hold a hanging delivery; six more of the same application wait.
    await eventually(async () => receiver.at('/hang').length === 2);
    expect((await test(other, fine)).status).toBe(202);
    await eventually(async () => receiver.at('/ok').length === 1, 20_000);
    // Taken first come, first served, it would have waited for all eight (four rounds of timeouts).
    const hangingBefore = receiver.at('/hang').filter((hit) => hit.at <= receiver.at('/ok')[0].at).length;
    expect(hangingBefore).toBeLessThan(8);
    expect(hangingBefore).toBeLessThanOrEqual(4);
  });
});
