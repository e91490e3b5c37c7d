import { Inject, Injectable } from '@nestjs/common';
import { countryOfSessionToken, notFound } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { HomeCountry } from '../residency/home-country';

/**
 * A session token names its home country: a token of another country is answered with
 * `wrong_country` and that country, nothing else, when the session exists there (HomeCountry); a
 * malformed or unknown one is a plain 404.
 */
@Injectable()
export class DecisionAccess {
  constructor(
    private readonly home: HomeCountry,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async requireHomedHere(token: string): Promise<string> {
    const home = countryOfSessionToken(token);
    if (!home) throw notFound('Decision');
    if (home !== this.context.env.COUNTRY) await this.home.requireHere(home, 'session', token, 'Decision');
    return token;
  }
}
