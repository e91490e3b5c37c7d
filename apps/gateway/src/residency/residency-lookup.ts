import { Inject, Injectable } from '@nestjs/common';
import { LocateReply, LocateRequest, RESIDENCY_LOCATE } from '@dcr/contracts';
import { homeOfSubject, subjectReference, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { HomeCountry } from './home-country';

export type SubjectAddress = { subject_id: string } | { external_id: string } | { email: string };

/**
 * Asks the residency-router where a subject-addressed resource lives. Only the keyed reference
 * leaves the gateway; a resource homed elsewhere is refused with `wrong_country` and its home
 * country, and nothing else. Which country that is: `homeOfSubject` (the directory's entry, else the
 * country a person's id names).
 */
@Injectable()
export class ResidencyLookup {
  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /** Resolves to 'here' or 'unknown', or throws wrong_country (421) naming the home country. */
  async requireHomedHere(applicationId: string, address: SubjectAddress): Promise<'here' | 'unknown'> {
    const [kind, given] = Object.entries(address)[0] as ['subject_id' | 'external_id' | 'email', string];
    // An external id is recorded without the spaces around it (as the decisions service finds it),
    // so one of spaces only is no one's.
    const value = kind === 'external_id' ? given.trim() : given;
    if (kind === 'external_id' && value === '') return 'unknown';
    const reference = subjectReference(this.context.env.SUBJECT_REF_KEY, applicationId, kind, value);
    const { entry } = await firstValueFrom(
      this.clients.own.send<LocateReply, LocateRequest>(RESIDENCY_LOCATE, { references: [reference] }),
    );
    const { COUNTRY, PEER_COUNTRIES } = this.context.env;
    const home = homeOfSubject(entry?.home_country, kind, value, [COUNTRY, ...PEER_COUNTRIES]);
    if (home === undefined) return 'unknown';
    // The directory knows the person: their home. An id the directory does not know names a country
    // by its prefix only: 421 if that country has this application's person, otherwise 404.
    if (home !== COUNTRY && !entry && kind === 'subject_id') await this.homeCountry.requireHere(home, 'subject', value, 'Subject', { application_id: applicationId });
    if (home !== COUNTRY) throw wrongCountry(home);
    return 'here';
  }
}
