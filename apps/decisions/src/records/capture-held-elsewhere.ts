import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuthorizeCaptureReply, AuthorizeCaptureRequest, CAPTURES_CLAIM, CAPTURES_SETTLE, CaptureClaimReply, CaptureClaimRequest, CaptureSettleReply, CaptureSettleRequest } from '@dcr/contracts';
import { DomainError, hashCredential, notFound, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { setTimeout } from 'node:timers/promises';
import { firstValueFrom } from 'rxjs';
import { SubjectsService } from '../subjects/subjects.service';
import { captureExpired, committedForAnotherPerson, CommitCapture, recordedNothing } from './commit-capture';

/**
 * `authorize` of a capture made at another country's endpoint (its token names that country), for
 * a person homed here: the capture is claimed from the country holding it (CAPTURES_CLAIM, the
 * token's hash in, what the capture holds out, none of it personal data) and recorded here like any
 * capture commit; the holder is then told the record's opaque id (CAPTURES_SETTLE), or that the
 * commit recorded nothing, which frees the capture again. The person's e-mail stays here. For a
 * person not homed here the answer is the 421 of their home country, or, when no country knows them
 * yet, of the country holding the capture, which records them.
 */
/** The longest single wait between claims of a busy capture (the waits double from 50 ms up to it: about 3 s in all). */
const CLAIM_WAIT_LIMIT_MS = 1600;

@Injectable()
export class CommitCaptureHeldElsewhere {
  private readonly logger = new Logger(CommitCaptureHeldElsewhere.name);

  constructor(
    private readonly clients: ServiceClients,
    private readonly subjects: SubjectsService,
    private readonly commit: CommitCapture,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async execute(holder: string, request: AuthorizeCaptureRequest): Promise<AuthorizeCaptureReply> {
    const { COUNTRY, PEER_COUNTRIES } = this.context.env;
    if (!PEER_COUNTRIES.includes(holder)) throw notFound('Capture');
    const home = await this.subjects.homeOf(request.application_id, request.subject);
    if (home !== COUNTRY) throw wrongCountry(home ?? holder);

    const claim: CaptureClaimRequest = { application_id: request.application_id, capture_token_hash: hashCredential(request.capture_token), claimant_country: COUNTRY };
    const claimed = await this.claimFrom(holder, claim);
    if (claimed.outcome !== 'claimed') {
      if (claimed.outcome === 'not_found') throw notFound('Capture');
      if (claimed.outcome === 'busy') throw new DomainError('service_unavailable', 'The capture is being committed by another country at this moment; try again');
      throw claimed.outcome === 'expired' ? captureExpired() : committedForAnotherPerson();
    }

    let committed: AuthorizeCaptureReply;
    try {
      committed = await this.commit.execute(request.application_id, claimed.capture, request.subject, {
        suppressReceipt: request.suppress_receipt === true,
        channel: claimed.capture.channel,
      });
    } catch (error) {
      await this.settle(holder, { ...claim, release: recordedNothing(error) });
      throw error;
    }
    await this.settle(holder, { ...claim, record_id: committed.record_id, release: false });
    return committed;
  }

  /**
   * Claims the capture from its holder. While another commit holds it without a record (the
   * holder's own, say, for this same person, which fails with 421 once it finds them homed here),
   * the claim is tried again after a wait (50 ms, doubling, about 3 s in all) before the caller is
   * told to try again later: the capture is not someone else's, it is busy.
   */
  private async claimFrom(holder: string, claim: CaptureClaimRequest): Promise<CaptureClaimReply> {
    for (let wait = 50; ; wait *= 2) {
      const reply = await firstValueFrom(this.clients.peer(holder).send<CaptureClaimReply, CaptureClaimRequest>(CAPTURES_CLAIM, claim));
      if (reply.outcome !== 'busy' || wait > CLAIM_WAIT_LIMIT_MS) return reply;
      await setTimeout(wait);
    }
  }

  /**
   * Tells the holder how the commit ended. Its answer changes nothing here: a settlement that does
   * not arrive leaves the capture claimed by this country, which can still commit it, and no other.
   */
  private async settle(holder: string, request: CaptureSettleRequest): Promise<void> {
    try {
      await firstValueFrom(this.clients.peer(holder).send<CaptureSettleReply, CaptureSettleRequest>(CAPTURES_SETTLE, request));
    } catch (error) {
      this.logger.warn(`capture settlement to ${holder} failed: ${(error as Error).message}`);
    }
  }
}
