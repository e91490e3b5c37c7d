import { InProcessBus } from '@dcr/transport';
import { applicationWithToken, eventually, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * A country that was down when its peer homed people: the peer's confirmations and sync events
 * found no one listening, so nothing told it. When it starts, its residency-router pulls the
 * entries homed in each peer (`residency-router.directory.pull`) and then knows where those people
 * live without anyone recording them again.
 */
describe('the residency directory while a country is down, and after', () => {
  let us: RunningCountry;
  let de: RunningCountry | undefined;
  const adminToken = randomSecret();

  afterAll(async () => {
    await de?.close();
    await us?.close();
  });

  it('learns at start where the people homed meanwhile in a peer live', async () => {
    const bus = new InProcessBus();
    const common = { transport: 'inprocess' as const, bus, subjectRefKey: randomSecret(), adminToken };
    us = await startCountry({ ...common, country: 'US', peers: ['DE'] });
    const { applicationId, apiToken: token } = await applicationWithToken(us, adminToken);
    // Homed in US while DE is down.
    const people = ['grace@example.com', 'katherine@example.com'];
    for (const email of people) {
      expect((await http(us.url, 'POST', `/api/v1/applications/${applicationId}/subjects`, { token, body: { email } })).status).toBe(201);
    }

    de = await startCountry({ ...common, country: 'DE', peers: ['US'] });
    const inDe = (email: string) => http(de!.url, 'GET', `/api/v1/applications/${applicationId}/subjects?email=${encodeURIComponent(email)}`, { token });
    // A read names no one new, so only the directory tells DE: 421 with US once it has caught up (404 before).
    await eventually(async () => (await inDe(people[0])).status !== 404);
    for (const email of people) {
      const answer = await inDe(email);
      expect([email, answer.status, answer.body.home_country]).toEqual([email, 421, 'US']);
    }
    expect((await inDe('nobody@example.com')).status).toBe(404);
  });

  it('refuses someone new while the peer is down when the deployment requires its agreement, and keeps nothing of them', async () => {
    const alone = await startCountry({
      transport: 'inprocess',
      bus: new InProcessBus(),
      subjectRefKey: randomSecret(),
      adminToken,
      country: 'US',
      peers: ['DE'],
      env: { DIRECTORY_CONFIRMATION: 'required' },
    });
    try {
      const { applicationId, apiToken: token } = await applicationWithToken(alone, adminToken, { name: 'Strict', environment: 'sandbox' });
      const created = await http(alone.url, 'POST', `/api/v1/applications/${applicationId}/subjects`, { token, body: { email: 'dorothy@example.com' } });
      expect([created.status, created.body.code]).toEqual([503, 'service_unavailable']);
      expect((await http(alone.url, 'GET', `/api/v1/applications/${applicationId}/subjects?email=dorothy%40example.com`, { token })).status).toBe(404);
    } finally {
      await alone.close();
    }
  });
});
