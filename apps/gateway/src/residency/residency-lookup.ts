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
    const { home, known } = await this.homeOf(applicationId, kind, given);
    if (home === undefined) return 'unknown';
    const { COUNTRY } = this.context.env;
    // The directory knows the person: their home. An id the directory does not know names a country
    // by its prefix only: 421 if that country has this application's person, otherwise 404.
    if (home !== COUNTRY && !known && kind === 'subject_id') await this.homeCountry.requireHere(home, 'subject', given, 'Subject', { application_id: applicationId });
    if (home !== COUNTRY) throw wrongCountry(home);
    return 'here';
  }

  /**
   * For a request naming a person by external id and/or e-mail address (the subjects endpoint's
   * create): wrong_country (421) with the home of one homed in another country, the external id's
   * first (the directory registers a new person's references in that order), unless the other one
   * is homed here. Then the two name different people, which the decisions service refuses (422
   * on the identifier homed elsewhere), as the Record API refuses it.
   */
  async requireNamedHere(applicationId: string, by: { external_id?: string; email?: string }): Promise<void> {
    const { COUNTRY } = this.context.env;
    const [byId, byAddress] = await Promise.all([
      by.external_id === undefined ? undefined : this.homeOf(applicationId, 'external_id', by.external_id).then(({ home }) => home),
      by.email === undefined ? undefined : this.homeOf(applicationId, 'email', by.email).then(({ home }) => home),
    ]);
    if (byId !== undefined && byId !== COUNTRY && byAddress !== COUNTRY) throw wrongCountry(byId);
    if (byAddress !== undefined && byAddress !== COUNTRY && byId !== COUNTRY) throw wrongCountry(byAddress);
  }

  /** Where the directory (or, for a person's id, the id itself) homes a person: `homeOfSubject`; `known`: the directory has an entry. */
  private async homeOf(applicationId: string, kind: 'subject_id' | 'external_id' | 'email', given: string): Promise<{ home: string | undefined; known: boolean }> {
    // An external id is recorded without the spaces around it (as the decisions service finds it),
    // so one of spaces only is no one's.
    const value = kind === 'external_id' ? given.trim() : given;
    if (kind === 'external_id' && value === '') return { home: undefined, known: false };
    const reference = subjectReference(this.context.env.SUBJECT_REF_KEY, applicationId, kind, value);
    const { entry } = await firstValueFrom(
      this.clients.own.send<LocateReply, LocateRequest>(RESIDENCY_LOCATE, { references: [reference] }),
    );
    const { COUNTRY, PEER_COUNTRIES } = this.context.env;
    return { home: homeOfSubject(entry?.home_country, kind, value, [COUNTRY, ...PEER_COUNTRIES]), known: entry !== null && entry !== undefined };
  }
}
