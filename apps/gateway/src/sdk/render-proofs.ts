import { Inject, Injectable, Logger } from '@nestjs/common';
import { GatewayEnvironment } from '@dcr/config';
import { DomainError, FieldControl, isFlowId, parseOrigin } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { errors, jwtVerify, SignJWT } from 'jose';
import { hkdfSync, randomBytes } from 'node:crypto';

/*
 * The consent field's render proof: a JWS (HS256, `typ` service-render-proof+jwt) the gateway signs
 * when it renders the field page and embeds in that page only. The frame posts it with its capture;
 * it stands in for the publishable key of embedded_field captures. It binds what was rendered: the
 * application, the flow and version, each purpose rendered and how, the notice version, the language,
 * the host origin the page was rendered for (and may be framed by), the render time (`iat`) and a
 * nonce (`jti`) that the decisions service lets capture once.
 */

export const RENDER_PROOF_TYPE = 'service-render-proof+jwt';
/** How long after rendering the field may capture with its proof (the frame renews an older one). */
export const RENDER_PROOF_MAX_AGE_SECONDS = 3600;
/** Clock skew tolerated between the gateway replicas of a country. */
const CLOCK_TOLERANCE_SECONDS = 30;
const CONTROLS: readonly FieldControl[] = ['consent', 'objection', 'notice'];
const LOCALE = /^[a-z]{2,3}$/;

/** What a render proof states. */
export interface RenderProofFacts {
  application_id: string;
  flow_id: string;
  flow_version: number;
  /** Purpose key → how it was rendered, in flow order. */
  rendered: Record<string, FieldControl>;
  notice_version: string;
  /** The language of the field's own text. */
  locale: string;
  host_origin: string;
}

export interface VerifiedRenderProof extends RenderProofFacts {
  /** The render time (`iat`), ISO 8601 UTC. */
  rendered_at: string;
  /** Single use (`jti`). */
  nonce: string;
}

const refused = (reason: string) => new DomainError('unauthenticated', `The render proof is not valid: ${reason}`);

function isFacts(claims: Record<string, unknown>): boolean {
  const rendered = claims.rendered;
  return (
    typeof claims.application_id === 'string' &&
    typeof claims.flow_id === 'string' &&
    isFlowId(claims.flow_id) &&
    Number.isInteger(claims.flow_version) &&
    (claims.flow_version as number) >= 1 &&
    typeof rendered === 'object' &&
    rendered !== null &&
    !Array.isArray(rendered) &&
    Object.keys(rendered).length > 0 &&
    Object.values(rendered).every((control) => CONTROLS.includes(control as FieldControl)) &&
    typeof claims.notice_version === 'string' &&
    typeof claims.locale === 'string' &&
    LOCALE.test(claims.locale) &&
    typeof claims.host_origin === 'string' &&
    parseOrigin(claims.host_origin).ok === true &&
    typeof claims.jti === 'string' &&
    /^[A-Za-z0-9_-]{22}$/.test(claims.jti)
  );
}

/** Signs a render proof at `now`, with a fresh nonce. */
export async function signRenderProof(facts: RenderProofFacts, key: Uint8Array, now = new Date()): Promise<{ proof: string; nonce: string; renderedAt: string }> {
  const iat = Math.floor(now.getTime() / 1000);
  const nonce = randomBytes(16).toString('base64url');
  const proof = await new SignJWT({ ...facts })
    .setProtectedHeader({ alg: 'HS256', typ: RENDER_PROOF_TYPE })
    .setIssuedAt(iat)
    .setExpirationTime(iat + RENDER_PROOF_MAX_AGE_SECONDS)
    .setJti(nonce)
    .sign(key);
  return { proof, nonce, renderedAt: new Date(iat * 1000).toISOString() };
}

/**
 * The facts of a render proof signed with `key`, fresh at `now`; otherwise `unauthenticated` saying
 * why (forged or altered, expired, issued in the future, malformed).
 */
export async function verifyRenderProof(proof: string, key: Uint8Array, now = new Date()): Promise<VerifiedRenderProof> {
  if (typeof proof !== 'string' || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw refused('it is not a compact JWS');
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(proof, key, {
      algorithms: ['HS256'],
      typ: RENDER_PROOF_TYPE,
      currentDate: now,
      maxTokenAge: RENDER_PROOF_MAX_AGE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['iat', 'exp', 'jti'],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw refused('it is older than an hour; the field renews it, reload the page');
    if (error instanceof errors.JWSSignatureVerificationFailed) throw refused('its signature does not verify (forged or altered)');
    if (error instanceof errors.JWTClaimValidationFailed) throw refused(`its ${error.claim} claim fails (${error.reason})`);
    if (error instanceof errors.JOSEError) throw refused(`it is malformed (${error.code})`);
    throw error;
  }
  if (!isFacts(claims)) throw refused('it does not state a rendering');
  return {
    application_id: claims.application_id as string,
    flow_id: claims.flow_id as string,
    flow_version: claims.flow_version as number,
    rendered: claims.rendered as Record<string, FieldControl>,
    notice_version: claims.notice_version as string,
    locale: claims.locale as string,
    host_origin: claims.host_origin as string,
    rendered_at: new Date((claims.iat as number) * 1000).toISOString(),
    nonce: claims.jti as string,
  };
}

/** The render proof key of this country: FIELD_RENDER_PROOF_KEY, or derived from SUBJECT_REF_KEY outside production. */
export function renderProofKey(env: Pick<GatewayEnvironment, 'FIELD_RENDER_PROOF_KEY' | 'SUBJECT_REF_KEY' | 'COUNTRY'>): Uint8Array {
  if (env.FIELD_RENDER_PROOF_KEY) return new Uint8Array(Buffer.from(env.FIELD_RENDER_PROOF_KEY, 'base64'));
  return new Uint8Array(hkdfSync('sha256', env.SUBJECT_REF_KEY, 'dcr-consent-field', `render-proof:${env.COUNTRY.toLowerCase()}`, 32));
}

/** Signs and verifies render proofs with this country's key. */
@Injectable()
export class RenderProofs {
  private readonly key: Uint8Array;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    const env = context.env as GatewayEnvironment;
    if (!env.FIELD_RENDER_PROOF_KEY) {
      // The configuration refuses a production start without the key, so this is development and tests only.
      new Logger(RenderProofs.name).warn('FIELD_RENDER_PROOF_KEY derived from SUBJECT_REF_KEY (development only; production sets it)');
    }
    this.key = renderProofKey(env);
  }

  sign(facts: RenderProofFacts, now?: Date) {
    return signRenderProof(facts, this.key, now);
  }

  verify(proof: string, now?: Date): Promise<VerifiedRenderProof> {
    return verifyRenderProof(proof, this.key, now);
  }
}
