import type { ServiceContext } from '@dcr/service-kit';
import type { AuthenticatedRequest } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import type { IndexedApplication } from './credential-index';
import { MeController } from './me.controller';

const application = (name: string): IndexedApplication => ({
  id: 'tp_us_0123456789abcdef',
  accountId: 'acc_0123456789abcdef',
  name,
  environment: 'sandbox',
  origins: [],
  browserCommit: false,
});

const requestOf = (principal: Principal) => ({ principal }) as AuthenticatedRequest;

const tokenOf = (app: IndexedApplication, tokenId = 'api_token_0123456789abcdef') =>
  requestOf({ kind: 'api_token', tokenId, application: app, scopes: ['applications:read'] });

describe('MeController', () => {
  const controller = new MeController({ env: { COUNTRY: 'US' } } as unknown as ServiceContext);

  it("answers a token's identity as JSON, made once for the same application and token", () => {
    const acme = application('Acme');
    const stringify = jest.spyOn(JSON, 'stringify');
    const first = controller.me(tokenOf(acme));
    const second = controller.me(tokenOf(acme));
    expect(stringify).toHaveBeenCalledTimes(1);
    stringify.mockRestore();
    expect(second).toBe(first);
    expect(JSON.parse(first)).toEqual({
      application_id: 'tp_us_0123456789abcdef',
      application: { id: 'tp_us_0123456789abcdef', name: 'Acme', environment: 'sandbox' },
      account_id: 'acc_0123456789abcdef',
      credential: { kind: 'api_token', id: 'api_token_0123456789abcdef', scopes: ['applications:read'] },
      country: 'US',
    });
  });

  it('answers each token of an application with its own identity', () => {
    const acme = application('Acme');
    expect(JSON.parse(controller.me(tokenOf(acme, 'api_token_aaaaaaaaaaaaaaaa'))).credential.id).toBe('api_token_aaaaaaaaaaaaaaaa');
    expect(JSON.parse(controller.me(tokenOf(acme, 'api_token_bbbbbbbbbbbbbbbb'))).credential.id).toBe('api_token_bbbbbbbbbbbbbbbb');
  });

  it('answers from the current application once the credential index has replaced it', () => {
    expect(JSON.parse(controller.me(tokenOf(application('Acme')))).application.name).toBe('Acme');
    expect(JSON.parse(controller.me(tokenOf(application('Acme Europe')))).application.name).toBe('Acme Europe');
  });

  it('answers the admin token without an application', () => {
    expect(JSON.parse(controller.me(requestOf({ kind: 'admin' })))).toEqual({
      application_id: null,
      application: null,
      account_id: null,
      credential: { kind: 'admin', scopes: [] },
      country: 'US',
    });
  });
});
