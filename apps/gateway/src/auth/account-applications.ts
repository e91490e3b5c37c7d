import { Injectable } from '@nestjs/common';
import { ResourceKind } from '@dcr/contracts';
import { isFlowId } from '@dcr/domain';
import { CredentialIndex } from '../connect/credential-index';
import { audienceOf, HomeCountry } from '../residency/home-country';
import { canAccessApplication, Principal } from './principal';

/** How many flows' applications a gateway remembers (a flow never moves to another application). */
const REMEMBERED_FLOWS = 10_000;

/**
 * API tokens act for their whole account (the specification: "full account-level access"): a request
 * that names a resource of another application of the token's account (a flow to record against, a
 * capture to commit, an import to read) acts for that application. A resource of no application of
 * the account, or of none at all, is left to the token's own application, which answers it as one it
 * does not have (404, or a 422 naming the field): another account's resources stay indistinguishable
 * from missing ones. Other credentials act for their own application only.
 */
@Injectable()
export class AccountApplications {
  /** Flows' applications once found, oldest first (the Record API names a flow in every request). */
  private readonly flowOwners = new Map<string, string>();

  constructor(
    private readonly home: HomeCountry,
    private readonly index: CredentialIndex,
  ) {}

  /** The application a request naming this country's resource `id` acts for. */
  async applicationFor(principal: Exclude<Principal, { kind: 'admin' }>, kind: ResourceKind, id: string): Promise<string> {
    if (principal.kind !== 'api_token') return principal.application.id;
    const owner = kind === 'flow' ? await this.flowOwner(id) : await this.home.owner(kind, id);
    return this.ofAccount(principal, owner);
  }

  /** The application a request naming the resource `id`, held in the peer country `home`, acts for (that country is asked). */
  async applicationIn(principal: Exclude<Principal, { kind: 'admin' }>, home: string, kind: ResourceKind, id: string): Promise<string> {
    if (principal.kind !== 'api_token') return principal.application.id;
    return this.ofAccount(principal, await this.home.ownerIn(home, kind, id, audienceOf(principal)!));
  }

  private ofAccount(principal: Extract<Principal, { kind: 'api_token' }>, owner: string | null | undefined): string {
    if (!owner || owner === principal.application.id) return principal.application.id;
    const application = this.index.application(owner);
    return application && canAccessApplication(principal, application) ? owner : principal.application.id;
  }

  private async flowOwner(flowId: string): Promise<string | null> {
    if (!isFlowId(flowId)) return null;
    const remembered = this.flowOwners.get(flowId);
    if (remembered) return remembered;
    const owner = await this.home.owner('flow', flowId);
    if (owner) {
      if (this.flowOwners.size >= REMEMBERED_FLOWS) this.flowOwners.delete(this.flowOwners.keys().next().value!);
      this.flowOwners.set(flowId, owner);
    }
    return owner;
  }
}
