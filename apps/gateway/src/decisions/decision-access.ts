import { Inject, Injectable } from '@nestjs/common';
import { countryOfSessionToken, notFound, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';

/**
 * A session token names its home country: a token of another country is answered with
 * `wrong_country` and that country, nothing else; a malformed one is a plain 404.
 */
@Injectable()
export class DecisionAccess {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  requireHomedHere(token: string): string {
    const home = countryOfSessionToken(token);
    if (!home) throw notFound('Decision');
    if (home !== this.context.env.COUNTRY) throw wrongCountry(home);
    return token;
  }
}
