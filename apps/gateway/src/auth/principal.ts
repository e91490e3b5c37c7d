import { DomainError, notFound } from '@dcr/domain';
import { IndexedApplication } from '../connect/credential-index';
import type { VerifiedRenderProof } from '../sdk/render-proofs';

/** Who is calling, as established by the Authenticator (a route hook). */
export type Principal =
  | { kind: 'admin' }
  | { kind: 'api_token'; tokenId: string; application: IndexedApplication; scopes: string[] }
  | { kind: 'publishable_key'; application: IndexedApplication }
  /** The consent field's frame: its render proof stands in for the publishable key (embedded_field captures only). */
  | { kind: 'render_proof'; application: IndexedApplication; proof: VerifiedRenderProof };

export type CredentialKind = Principal['kind'];

/** The accounts a principal may act in: an API token reaches every application of its account. */
export function canAccessApplication(principal: Principal, application: IndexedApplication): boolean {
  if (principal.kind === 'admin') return true;
  if (principal.kind === 'api_token') return principal.application.accountId === application.accountId;
  return principal.application.id === application.id;
}

/** An application the caller may not see is answered exactly like one that does not exist. */
export function requireApplicationAccess(
  principal: Principal,
  application: IndexedApplication | undefined,
): IndexedApplication {
  if (!application || !canAccessApplication(principal, application)) throw notFound('Application');
  return application;
}

export function requireScope(principal: Principal, scope: string): void {
  if (principal.kind === 'api_token' && !principal.scopes.includes(scope)) {
    throw new DomainError('forbidden', `This API token lacks the scope ${scope}`);
  }
}
