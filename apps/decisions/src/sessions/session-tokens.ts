import { Inject, Injectable } from '@nestjs/common';
import { hashCredential, newSessionTokenNonce, sessionTokenFor, sessionTokenKey } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';

/** What a new session's row keeps of its token, and the token itself (answered once, to the organisation). */
export interface IssuedSessionToken {
  token: string;
  tokenHash: string;
  tokenNonce: string;
}

/**
 * This country's session tokens (`dts_<cc>…`): derived from a per-session nonce under a key derived
 * once from SUBJECT_REF_KEY, kept as a hash. A token presented is looked up by its hash (the
 * `token_hash` column, SessionsRepository); the inbox derives a session's token again with `tokenOf`.
 */
@Injectable()
export class SessionTokens {
  private readonly key: Buffer;
  private readonly country: string;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    this.country = context.env.COUNTRY;
    this.key = sessionTokenKey(context.env.SUBJECT_REF_KEY, this.country);
  }

  /** A new session's token: one HMAC and one SHA-256. */
  issue(): IssuedSessionToken {
    const tokenNonce = newSessionTokenNonce();
    const token = sessionTokenFor(this.key, this.country, tokenNonce);
    return { token, tokenHash: hashCredential(token), tokenNonce };
  }

  /** The token of a session from its nonce; null for a session opened before tokens were derived (its token was random). */
  tokenOf(session: { tokenNonce: string | null }): string | null {
    return session.tokenNonce === null ? null : sessionTokenFor(this.key, this.country, session.tokenNonce);
  }

}
