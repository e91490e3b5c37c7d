import { Inject, Injectable } from '@nestjs/common';
import { GatewayEnvironment } from '@dcr/config';
import { PreviewTokenFacts, signPreviewToken, VerifiedPreviewToken, verifyPreviewToken } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { hkdfSync } from 'node:crypto';
import { renderProofKey } from './render-proofs';

/**
 * The preview link key of this country: TEMPLATE_PREVIEW_KEY, or derived (HKDF-SHA256, its own
 * label) from the render proof key, which production sets (FIELD_RENDER_PROOF_KEY) and development
 * derives from SUBJECT_REF_KEY. Every gateway replica of a country derives the same key.
 */
export function previewTokenKey(env: Pick<GatewayEnvironment, 'TEMPLATE_PREVIEW_KEY' | 'FIELD_RENDER_PROOF_KEY' | 'SUBJECT_REF_KEY' | 'COUNTRY'>): Uint8Array {
  if (env.TEMPLATE_PREVIEW_KEY) return new Uint8Array(Buffer.from(env.TEMPLATE_PREVIEW_KEY, 'base64'));
  return new Uint8Array(hkdfSync('sha256', renderProofKey(env), 'dcr-template-preview', `preview-link:${env.COUNTRY.toLowerCase()}`, 32));
}

/** Signs and verifies preview links (`@dcr/domain` preview tokens) with this country's key. */
@Injectable()
export class PreviewTokens {
  private readonly key: Uint8Array;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    this.key = previewTokenKey(context.env as GatewayEnvironment);
  }

  sign(facts: PreviewTokenFacts, now?: Date): { token: string; expiresAt: string } {
    return signPreviewToken(facts, this.key, now);
  }

  verify(token: string, now?: Date): VerifiedPreviewToken {
    return verifyPreviewToken(token, this.key, now);
  }
}
