import { Controller, Inject, Injectable } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  DECISIONS_RESOURCE_OWNER,
  GATEWAY_RESOURCE_EXISTS,
  ResourceAudience,
  ResourceExistsReply,
  ResourceExistsRequest,
  ResourceKind,
  ResourceOwnerReply,
  ResourceOwnerRequest,
} from '@dcr/contracts';
import { notFound, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom, timeout } from 'rxjs';
import { Principal } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';

/** How long a wrong-door check waits for the home country. */
const EXISTS_TIMEOUT_MS = 5000;

/** Whom a resource must be visible to for this caller: an API token's account, a key's application; anyone for the admin or a token-addressed resource. */
export function audienceOf(principal: Principal | undefined): ResourceAudience | undefined {
  if (!principal || principal.kind === 'admin') return undefined;
  if (principal.kind === 'api_token') return { account_id: principal.application.accountId };
  return { application_id: principal.application.id };
}

/**
 * A resource's id names its home country. Addressed through another country, it is answered 421
 * `wrong_country` with that country only if it exists there (and the caller may see it): the
 * contract's "an unknown resource is a plain 404" holds across countries too. The home country is
 * asked with the opaque id and answers yes or no (GATEWAY_RESOURCE_EXISTS). If it cannot be asked
 * (down, unreachable), the id's country is answered as the wrong door, as before: the caller learns
 * where to go, and the 404, if it is one, comes from there.
 */
@Injectable()
export class HomeCountry {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * Returns when `home` is this country; otherwise throws 421 (it exists there, visible to
   * `visibleTo`: see audienceOf) or 404 (`label` was not found).
   */
  async requireHere(home: string, kind: ResourceKind, id: string, label: string, visibleTo?: ResourceAudience): Promise<void> {
    const { COUNTRY, PEER_COUNTRIES } = this.context.env;
    if (home === COUNTRY) return;
    if (!PEER_COUNTRIES.includes(home)) throw notFound(label);
    throw (await this.existsIn(home, kind, id, visibleTo)) ? wrongCountry(home) : notFound(label);
  }

  /**
   * Whether the peer country `home` has the resource, visible to `visibleTo`. A country that cannot
   * be asked (down, unreachable) is taken to have it: the caller learns where to go, and the 404,
   * if it is one, comes from there.
   */
  async existsIn(home: string, kind: ResourceKind, id: string, visibleTo?: ResourceAudience): Promise<boolean> {
    const answer = await this.askIn(home, kind, id, visibleTo);
    return answer?.exists ?? true;
  }

  /**
   * The application the peer country `home` says the resource belongs to, when it has it visible to
   * `visibleTo`; null when it has not; undefined when it cannot be asked.
   */
  async ownerIn(home: string, kind: ResourceKind, id: string, visibleTo: ResourceAudience): Promise<string | null | undefined> {
    const answer = await this.askIn(home, kind, id, visibleTo);
    return answer && (answer.exists ? (answer.application_id ?? null) : null);
  }

  private async askIn(home: string, kind: ResourceKind, id: string, visibleTo?: ResourceAudience): Promise<ResourceExistsReply | undefined> {
    try {
      const request: ResourceExistsRequest = { kind, id, ...(visibleTo ? { visible_to: visibleTo } : {}) };
      return await firstValueFrom(
        this.clients.peer(home).send<ResourceExistsReply, ResourceExistsRequest>(GATEWAY_RESOURCE_EXISTS, request).pipe(timeout(EXISTS_TIMEOUT_MS)),
      );
    } catch {
      return undefined;
    }
  }

  /** For a peer country: whether the resource exists here and is visible to the audience it names, and whose it is then. */
  async exists(request: ResourceExistsRequest): Promise<ResourceExistsReply> {
    const owner = await this.owner(request.kind, request.id);
    if (!owner) return { exists: false };
    const audience = request.visible_to;
    if (!audience) return { exists: true, application_id: owner };
    const application = this.index.application(owner);
    if (!application) return { exists: false };
    if (audience.account_id !== undefined && application.accountId !== audience.account_id) return { exists: false };
    if (audience.application_id !== undefined && application.id !== audience.application_id) return { exists: false };
    return { exists: true, application_id: owner };
  }

  /** The application a resource of this country belongs to (DECISIONS_RESOURCE_OWNER), or null. */
  async owner(kind: ResourceKind, id: string): Promise<string | null> {
    const owner: ResourceOwnerReply = await firstValueFrom(
      this.clients.own.send<ResourceOwnerReply, ResourceOwnerRequest>(DECISIONS_RESOURCE_OWNER, { kind, id }),
    );
    return owner.application_id;
  }
}

/** The gateway's answer to a peer country's wrong-door check. */
@Controller()
export class HomeCountryController {
  constructor(private readonly home: HomeCountry) {}

  @MessagePattern(GATEWAY_RESOURCE_EXISTS)
  exists(@Payload() request: ResourceExistsRequest): Promise<ResourceExistsReply> {
    return this.home.exists(request);
  }
}
