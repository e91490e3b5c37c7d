import { Inject, Injectable } from '@nestjs/common';
import { LocateReply, LocateRequest, RESIDENCY_LOCATE } from '@dcr/contracts';
import { subjectReference, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';

export type SubjectAddress = { subject_id: string } | { external_id: string } | { email: string };

/**
 * Asks the residency-router where a subject-addressed resource lives. Only the keyed reference
 * leaves the gateway; a resource homed elsewhere is refused with `wrong_country` and its home
 * country, and nothing else.
 */
@Injectable()
export class ResidencyLookup {
  constructor(
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /** Resolves to 'here' or 'unknown', or throws wrong_country (421) naming the home country. */
  async requireHomedHere(applicationId: string, address: SubjectAddress): Promise<'here' | 'unknown'> {
    const [kind, value] = Object.entries(address)[0] as ['subject_id' | 'external_id' | 'email', string];
    const reference = subjectReference(this.context.env.SUBJECT_REF_KEY, applicationId, kind, value);
    const { entry } = await firstValueFrom(
      this.clients.own.send<LocateReply, LocateRequest>(RESIDENCY_LOCATE, { references: [reference] }),
    );
    if (!entry) return 'unknown';
    if (entry.home_country !== this.context.env.COUNTRY) throw wrongCountry(entry.home_country);
    return 'here';
  }
}
