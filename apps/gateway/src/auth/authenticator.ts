import { Inject, Injectable } from '@nestjs/common';
import { GatewayEnvironment } from '@dcr/config';
import { classifyBearer, constantTimeEqualHex, DomainError, hashCredential, originMatches } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CredentialIndex } from '../connect/credential-index';
import { TokenUseRecorder } from '../connect/token-use-recorder';
import type { DirectRequest, HeaderSink } from '../http/direct-lane';
import { RateLimitService } from '../http/rate-limit.service';
import { RenderProofs } from '../sdk/render-proofs';
import { AuthenticatedRequest } from './auth.decorators';
import { CredentialKind, Principal } from './principal';
import { RecentTokenHashes } from './recent-token-hashes';
import { RoutePolicy } from './route-policies';

/** A Fastify `preHandler` hook in callback form (no promise per request on the synchronous path). */
export type AuthenticationHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** What admission reads of a request (Fastify's, or the direct lane's), and where it puts the principal. */
type AdmittedRequest = Pick<AuthenticatedRequest, 'headers' | 'principal'> & { body?: unknown };

const notAcceptedYet = (what: string) =>
  new DomainError('credential_not_accepted', `${what} are not accepted yet; use an API token or a publishable key`);

/**
 * Establishes who is calling, for every route that is not public: API token (bearer), admin token
 * (bearer, operator bootstrap), or publishable key (`X-Publishable-Key`, only where a route allows
 * it, and only from the application's allowed origins). Then applies the application's rate limit.
 *
 * It runs as a Fastify `preHandler` hook of each authenticated route (added by the gateway's
 * `onRoute` hook with the route's policy, see RoutePolicies), after the body is parsed (a render
 * proof travels in the body) and before the idempotency claim and the Nest handler. Its errors go
 * through Nest's exception filters like any other. A Nest guard did this before; as a hook it costs
 * no promise chain per request, and the policy lookup is done once per route at start.
 */
@Injectable()
export class Authenticator {
  private readonly adminTokenHash?: string;
  private readonly recentHashes = new RecentTokenHashes();

  constructor(
    private readonly index: CredentialIndex,
    private readonly uses: TokenUseRecorder,
    private readonly rateLimits: RateLimitService,
    private readonly renderProofs: RenderProofs,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    const env = context.env as GatewayEnvironment;
    this.adminTokenHash = env.ADMIN_TOKEN ? hashCredential(env.ADMIN_TOKEN) : undefined;
  }

  /** The hook that authenticates a route's callers, or none for a public route. */
  hookFor(policy: RoutePolicy): AuthenticationHook | undefined {
    if (policy.public) return undefined;
    return (request, reply, done) => {
      let pending: Promise<void> | undefined;
      try {
        pending = this.admit(request as AuthenticatedRequest, reply, policy);
      } catch (error) {
        return done(error as Error);
      }
      if (pending) pending.then(() => done(), done);
      else done();
    };
  }

  /**
   * The same admission for the direct lane (see DirectLane): synchronous, so only for routes that do
   * not take a render proof (it travels in a body, and its check is a promise). A public route admits
   * everyone.
   */
  admitterFor(policy: RoutePolicy): ((request: DirectRequest, headers: HeaderSink) => void) | undefined {
    if (policy.public) return () => undefined;
    if (policy.accepted.includes('render_proof')) return undefined;
    return (request, headers) => {
      this.admit(request, headers, policy);
    };
  }

  /** Sets `request.principal`, or throws; a promise only on the render-proof path (a signature check). */
  private admit(request: AdmittedRequest, reply: HeaderSink, policy: RoutePolicy): Promise<void> | undefined {
    const { accepted, scopes, anyScope } = policy;
    // The consent field's frame has no credential but the render proof of its page (where a route takes it).
    const renderProof = accepted.includes('render_proof') ? this.renderProofOnly(request) : undefined;
    if (renderProof !== undefined) {
      return this.fromRenderProof(renderProof).then((principal) => {
        this.rateLimits.enforce(principal.application.id, reply);
        request.principal = principal;
      });
    }

    const principal = this.authenticate(request);
    if (!accepted.includes(principal.kind)) {
      throw new DomainError(
        'forbidden',
        principal.kind === 'publishable_key'
          ? "A publishable key may only create sessions and captures and read a flow's published wording"
          : credentialNotTaken(principal.kind, accepted),
      );
    }
    if (principal.kind === 'api_token') {
      const missing = scopes.filter((scope) => !principal.scopes.includes(scope));
      if (missing.length > 0) throw new DomainError('forbidden', `This API token lacks the scope ${missing.join(', ')}`);
      if (anyScope.length > 0 && !anyScope.some((scope) => principal.scopes.includes(scope))) {
        throw new DomainError('forbidden', `This API token lacks a scope this route needs: one of ${anyScope.join(', ')}`);
      }
    }
    if (principal.kind !== 'admin') this.rateLimits.enforce(principal.application.id, reply);
    request.principal = principal;
    return undefined;
  }

  private authenticate(request: AdmittedRequest): Principal {
    if (request.headers['x-delegation-grant-id'] !== undefined) {
      throw notAcceptedYet('Delegation grants (X-Delegation-Grant-Id)');
    }
    const authorization = request.headers.authorization;
    if (authorization !== undefined) return this.fromBearer(authorization);
    const publishableKey = request.headers['x-publishable-key'];
    if (typeof publishableKey === 'string' && publishableKey.length > 0) {
      return this.fromPublishableKey(publishableKey, request.headers.origin);
    }
    throw new DomainError(
      'unauthenticated',
      'Missing credentials: send Authorization: Bearer <API token>, or X-Publishable-Key from a browser',
    );
  }

  private fromBearer(header: string): Principal {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new DomainError('unauthenticated', 'The Authorization header must be "Bearer <token>"');
    const token = match[1];
    const kind = classifyBearer(token);
    if (kind === 'agent_token') throw notAcceptedYet('AI agent tokens (ra_agent_…)');
    if (kind === 'oauth_access_token') throw notAcceptedYet('OAuth access tokens');
    const remembered = this.recentHashes.get(token);
    const hash = remembered ?? hashCredential(token);
    // API tokens first: they are nearly every request, and a token's hash cannot be both an API
    // token's and the admin token's, so the admin comparison is only made for what is not an API token.
    // The index is asked every time, remembered hash or not: a revoked token is refused at once.
    const found = this.index.tokenByHash(hash);
    if (found) {
      if (remembered === undefined) this.recentHashes.remember(token, hash);
      this.uses.record(found.id);
      return { kind: 'api_token', tokenId: found.id, application: found.application, scopes: found.scopes };
    }
    if (remembered !== undefined) this.recentHashes.drop(token);
    if (this.adminTokenHash && constantTimeEqualHex(hash, this.adminTokenHash)) return { kind: 'admin' };
    throw new DomainError('unauthenticated', 'The API token is not valid or was revoked');
  }

  /** The body's render proof, when the request carries no other credential. */
  private renderProofOnly(request: AdmittedRequest): string | undefined {
    const { headers } = request;
    if (headers.authorization !== undefined || headers['x-publishable-key'] !== undefined || headers['x-delegation-grant-id'] !== undefined) return undefined;
    const body = request.body as Record<string, unknown> | undefined;
    return typeof body === 'object' && body !== null && typeof body.render_proof === 'string' ? body.render_proof : undefined;
  }

  /**
   * A render proof signed by this country's gateway, fresh, for an application that still exists and
   * still allows the host origin the field was rendered for. Single use is the decisions service's
   * (the capture keeps the proof's nonce).
   */
  private async fromRenderProof(proof: string): Promise<Extract<Principal, { kind: 'render_proof' }>> {
    const verified = await this.renderProofs.verify(proof);
    const application = this.index.application(verified.application_id);
    if (!application) throw new DomainError('unauthenticated', 'The render proof names an application that does not exist');
    if (!originMatches(verified.host_origin, application.origins, application.environment)) {
      throw new DomainError('origin_not_allowed', `The field was rendered for ${verified.host_origin}, which is no longer an allowed origin of this application`);
    }
    return { kind: 'render_proof', application, proof: verified };
  }

  private fromPublishableKey(key: string, origin: string | undefined): Principal {
    const application = this.index.applicationByKeyHash(hashCredential(key));
    if (!application) throw new DomainError('unauthenticated', 'The publishable key is not valid or was revoked');
    // Browser calls must come from a registered origin; server-side calls send no Origin at all.
    if (origin !== undefined && !originMatches(origin, application.origins, application.environment)) {
      throw new DomainError('origin_not_allowed', `The origin ${origin} is not among this application's allowed origins`);
    }
    return { kind: 'publishable_key', application };
  }
}

/** How each credential is sent, for a refusal that says which one a route takes. */
const CREDENTIALS: Record<CredentialKind, { name: string; sent: string }> = {
  api_token: { name: 'an API token', sent: 'Authorization: Bearer <API token>' },
  admin: { name: 'the admin token', sent: 'Authorization: Bearer <admin token>' },
  publishable_key: { name: 'a publishable key', sent: 'X-Publishable-Key from a browser on an allowed origin' },
  render_proof: { name: 'a render proof', sent: "the consent field's render_proof" },
};

/**
 * The refusal of a credential a route does not take, naming what it takes: an API token sent to the
 * capture route (the browser's) is told where the server's token goes instead.
 */
function credentialNotTaken(kind: CredentialKind, accepted: CredentialKind[]): string {
  const taken = accepted.map((accept) => CREDENTIALS[accept].sent).join(', or ');
  const serverSide =
    kind === 'api_token' && accepted.includes('publishable_key') && !accepted.includes('api_token')
      ? '; your server commits a capture with its API token at POST /api/v1/decisions/<capture_token>/authorize'
      : '';
  return `This route does not take ${CREDENTIALS[kind].name}: send ${taken}${serverSide}`;
}
