import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CredentialKind, Principal } from './principal';

export const PUBLIC_ROUTE = 'dcr:public';
export const ACCEPTED_CREDENTIALS = 'dcr:accepted-credentials';
export const REQUIRED_SCOPES = 'dcr:required-scopes';
export const REQUIRED_ANY_SCOPE = 'dcr:required-any-scope';
export const ANSWER_NOT_KEPT = 'dcr:answer-not-kept';

/** No credential needed (health, discovery documents). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

/**
 * Which credential kinds a route accepts. Without this decorator a route takes API tokens only;
 * the admin token is accepted only where a route names it, and a publishable key only where a
 * route names it (session and capture creation).
 */
export const AcceptCredentials = (...kinds: CredentialKind[]) => SetMetadata(ACCEPTED_CREDENTIALS, kinds);

/**
 * A POST whose answer is never kept under an Idempotency-Key (the key is taken and ignored; a repeat
 * runs again): a route without a credential that trades a one-time code for a new token. Kept, its
 * answer would be replayed to anyone sending the key and the body (the code spent, for a day), and
 * a wrong code would be a 409 that counts no attempt.
 */
export const AnswerNotKept = () => SetMetadata(ANSWER_NOT_KEPT, true);

/** API-token scopes a route needs (every one of them). */
export const RequireScopes = (...scopes: string[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/**
 * API-token scopes of which a route needs one: a read that serves two kinds of client (a receipt,
 * read by an integrator of the Record API with `records:read` and by one of the hosted pages with
 * `decisions:read`).
 */
export const RequireAnyScope = (...scopes: string[]) => SetMetadata(REQUIRED_ANY_SCOPE, scopes);

export interface AuthenticatedRequest extends FastifyRequest {
  principal?: Principal;
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.principal) throw new Error('CurrentPrincipal used on a route without authentication');
  return request.principal;
});
