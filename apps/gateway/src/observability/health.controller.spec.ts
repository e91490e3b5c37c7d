import { Logger } from '@nestjs/common';
import { throwError, of } from 'rxjs';
import { HealthController } from './health.controller';

describe('HealthController readyz', () => {
  const replyRecorder = () => {
    const recorded: { status?: number } = {};
    return { recorded, reply: { status: (code: number) => ((recorded.status = code), undefined) } as never };
  };
  const controller = (database: () => Promise<unknown>, transport: () => unknown) =>
    new HealthController({ query: database } as never, { own: { send: transport } } as never, {} as never);

  afterEach(() => jest.restoreAllMocks());

  it('answers 503 with each failed check named but not its reason (the route is public; a driver message names internal addresses); the log keeps the reason', async () => {
    const logged: string[] = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void logged.push(String(message)));
    const { recorded, reply } = replyRecorder();
    const body = await controller(
      () => Promise.reject(new Error('connect ECONNREFUSED 10.2.3.4:5544')),
      () => throwError(() => new Error('No service is listening on prod.us.gateway.health')),
    ).readyz(reply);
    expect(recorded.status).toBe(503);
    expect(body).toEqual({ status: 'not_ready', checks: { database: 'failed', transport: 'failed' } });
    expect(JSON.stringify(body)).not.toMatch(/10\.2\.3\.4|5544|prod\.us/);
    expect(logged).toEqual(['readiness check database failed: connect ECONNREFUSED 10.2.3.4:5544', 'readiness check transport failed: No service is listening on prod.us.gateway.health']);
  });

  it('answers 200 ready when both answer', async () => {
    const { recorded, reply } = replyRecorder();
    const body = await controller(() => Promise.resolve([{ '?column?': 1 }]), () => of({})).readyz(reply);
    expect([recorded.status, body]).toEqual([200, { status: 'ready', checks: { database: 'ok', transport: 'ok' } }]);
  });
});
