import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { InboxItemMessage, InboxListRequest, InboxOpenReply, InboxOpenRequest, InboxPageMessage, InboxSignInRequest, InboxTokenRequest } from '@dcr/contracts';
import { decodeCursor, DomainError, encodeCursor, hashCredential, IN_FLIGHT_STATUSES, inboxAddressDigest, newInboxToken, newOpaqueId, normaliseEmail, sealForBearer, unsealWithBearer } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource, IsNull, MoreThan, Repository } from 'typeorm';
import { MailTransport } from '../mail/mail-transport';
import {
  newOneTimeCode,
  ONE_TIME_CODE_MAX_ATTEMPTS,
  ONE_TIME_CODE_TTL_MS,
  ONE_TIME_CODES_PER_HOUR,
  oneTimeCodeHash,
  oneTimeCodeMatches,
} from '../mail/one-time-code';
import { SessionTokens } from '../sessions/session-tokens';
import { signInMail } from '../sessions/sign-in-mail';
import { INBOX_SIGN_IN, SignInCode } from '../sessions/sign-in-code.entity';
import { InboxSession } from './inbox-session.entity';

/** What an inbox session's address is sealed for (sealForBearer). */
export const INBOX_ADDRESS = 'inbox-address';

/** An inbox sign-in lasts twelve hours. */
export const INBOX_SESSION_TTL_MS = 12 * 3600 * 1000;

/** A position in the list: the sort key and the session's public id (never its token, a credential). */
type Position = { k: string; i: string };

/**
 * The unified inbox: one list per person of the pending consent and approval requests addressed to
 * their e-mail (named by the organisation, or proved by signing in) in this country, with filters,
 * two orders and keyset pagination. Each request's link carries its session token, derived again
 * from the session's nonce (the row keeps none); sessions opened before tokens were derived have no
 * nonce and are left out (they end within SESSION_TTL_SECONDS, or at their deadline, and still open
 * through the link the organisation sent).
 */
@Injectable()
export class InboxService {
  constructor(
    private readonly dataSource: DataSource,
    @InjectRepository(SignInCode) private readonly codes: Repository<SignInCode>,
    @InjectRepository(InboxSession) private readonly sessions: Repository<InboxSession>,
    private readonly mail: MailTransport,
    private readonly tokens: SessionTokens,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * Mails a sign-in code to any address (whether anything is addressed to it here is not told).
   * The code is kept by the address's keyed digest, never the address: the person may be homed in
   * another country, whose personal data does not stay here (docs/architecture.md, Residency).
   */
  async signIn(request: InboxSignInRequest): Promise<{ sent: true; expires_at: string }> {
    const email = normaliseEmail(request.email);
    const emailDigest = inboxAddressDigest(this.key, email);
    const now = new Date();
    const recent = await this.codes.count({ where: { sessionId: INBOX_SIGN_IN, emailDigest, createdAt: MoreThan(new Date(now.getTime() - 3600_000)) } });
    if (recent >= ONE_TIME_CODES_PER_HOUR) {
      throw new DomainError('rate_limited', 'Too many sign-in codes for this address; wait before asking again', undefined, { retry_after: 3600 });
    }
    const code = newOneTimeCode();
    const expiresAt = new Date(now.getTime() + ONE_TIME_CODE_TTL_MS);
    await this.codes.insert({
      id: newOpaqueId('otp', 20),
      sessionId: INBOX_SIGN_IN,
      email: null,
      emailDigest,
      codeHash: oneTimeCodeHash(this.key, code, 'inbox', email),
      attempts: 0,
      expiresAt,
      consumedAt: null,
      createdAt: now,
    });
    await this.mail.send({ to: email, ...signInMail(request.locale ?? 'en', code, ONE_TIME_CODE_TTL_MS / 60000) });
    return { sent: true, expires_at: expiresAt.toISOString() };
  }

  async open(request: InboxOpenRequest): Promise<InboxOpenReply> {
    const email = normaliseEmail(request.email);
    const now = new Date();
    const wrong = (reason: string) => new DomainError('validation_failed', 'The code is not valid', [{ field: 'code', reason }]);
    const code = await this.codes.findOne({ where: { sessionId: INBOX_SIGN_IN, emailDigest: inboxAddressDigest(this.key, email) }, order: { createdAt: 'DESC' } });
    // No code, a used one and an expired one are one answer, the one a wrong code gets: anyone may
    // send an address here, and telling these apart would tell them whether its owner asked for a
    // code in the last minutes.
    const unknown = 'the code does not match, or has expired: request a new one';
    if (!code || code.consumedAt || code.expiresAt.getTime() <= now.getTime()) throw wrong(unknown);
    if (code.attempts >= ONE_TIME_CODE_MAX_ATTEMPTS) throw wrong('too many attempts: request a new code');
    // Every try takes one of the code's attempts before it is compared, in one statement: guesses sent
    // at once cannot all read the same count (nothing else serialises them here, unlike a session's
    // code, whose transition holds the session's row).
    const attempt = await this.takeAttempt(code.id);
    if (attempt === undefined) throw wrong('too many attempts: request a new code');
    if (!oneTimeCodeMatches(this.key, code.codeHash, request.code, 'inbox', email)) {
      throw wrong(attempt >= ONE_TIME_CODE_MAX_ATTEMPTS ? 'too many attempts: request a new code' : unknown);
    }
    const consumed = await this.codes.update({ id: code.id, consumedAt: IsNull() }, { consumedAt: now });
    if (consumed.affected === 0) throw wrong(unknown);
    // Naming this country, so that another country answers it with wrong_country from the token alone.
    const token = newInboxToken(this.context.env.COUNTRY);
    const expiresAt = new Date(now.getTime() + INBOX_SESSION_TTL_MS);
    // The address only sealed under the token, which is kept as a hash: readable when the person presents it.
    await this.sessions.insert({ id: newOpaqueId('inbs', 20), tokenHash: hashCredential(token), emailSealed: sealForBearer(token, INBOX_ADDRESS, email), createdAt: now, expiresAt });
    return { inbox_token: token, expires_at: expiresAt.toISOString() };
  }

  /** Counts one try at a code: the attempts made with it, or undefined when none was left (or it was used). */
  private async takeAttempt(id: string): Promise<number | undefined> {
    const { raw } = await this.codes
      .createQueryBuilder()
      .update(SignInCode)
      .set({ attempts: () => '"attempts" + 1' })
      .where('"id" = :id AND "attempts" < :max AND "consumed_at" IS NULL', { id, max: ONE_TIME_CODE_MAX_ATTEMPTS })
      .returning(['attempts'])
      .execute();
    return (raw as Array<{ attempts: number }>)[0]?.attempts;
  }

  async close(request: InboxTokenRequest): Promise<void> {
    await this.sessions.delete({ tokenHash: hashCredential(request.inbox_token) });
  }

  async list(request: InboxListRequest): Promise<InboxPageMessage> {
    const email = await this.emailOf(request.inbox_token);
    const after = decodeCursor<Position>(request.cursor);
    // 'infinity': cursors written before requests were sorted by when they end (a request without a deadline sorted last).
    if (after && (typeof after.k !== 'string' || typeof after.i !== 'string' || (after.k !== 'infinity' && Number.isNaN(Date.parse(after.k))))) {
      throw new DomainError('invalid_request', 'The cursor is not valid', [{ field: 'cursor', reason: 'not a cursor of this list' }]);
    }
    const newest = request.sort === 'newest';
    // By when a request must be decided: its deadline, or, without one, when it expires (which it does).
    const sortKey = newest ? 's.created_at' : 'LEAST(s.deadline_at, s.expires_at)';
    const params: unknown[] = [email, [...IN_FLIGHT_STATUSES]];
    const where = ['s.subject_email = $1', 's.status = ANY($2)', 's.expires_at > now()', 's.token_nonce IS NOT NULL'];
    const bind = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (request.kind) where.push(`s.kind = ${bind(request.kind)}`);
    if (request.trigger) where.push(`s.approval->>'trigger' = ${bind(request.trigger)}`);
    if (request.application_id) where.push(`s.application_id = ${bind(request.application_id)}`);
    if (after) where.push(`(${sortKey}, s.id) ${newest ? '<' : '>'} (${bind(after.k)}::timestamptz, ${bind(after.i)})`);
    const direction = newest ? 'DESC' : 'ASC';
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT s.id, s.token_nonce, s.kind, s.status, s.application_id, s.flow_id, s.approval->>'trigger' AS trigger,
              COALESCE(s.approval->>'title', f.terms->>'title', f.terms->>'name', '') AS title,
              s.deadline_at, s.expires_at, s.created_at, ${sortKey} AS sort_key
         FROM "decisions"."decision_sessions" s
         LEFT JOIN "decisions"."flow_versions" f ON f.id = s.flow_id AND f.version = s.flow_version
        WHERE ${where.join(' AND ')}
        ORDER BY ${sortKey} ${direction}, s.id ${direction}
        LIMIT ${bind(request.limit + 1)}`,
      params,
    );
    const page = rows.slice(0, request.limit);
    const last = page[page.length - 1];
    const keyOf = (value: unknown) => (value instanceof Date ? value.toISOString() : 'infinity');
    return {
      email,
      data: page.map((row) => this.item(row)),
      next_cursor: rows.length > request.limit && last ? encodeCursor({ k: keyOf(last.sort_key), i: last.id as string }) : null,
    };
  }

  private item(row: Record<string, unknown>): InboxItemMessage {
    const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : null);
    return {
      session_token: this.tokens.tokenOf({ tokenNonce: row.token_nonce as string }) as string,
      kind: row.kind as 'consent' | 'approval',
      status: row.status as string,
      title: row.title as string,
      application_id: row.application_id as string,
      flow_id: (row.flow_id as string | null) ?? null,
      trigger: (row.trigger as string | null) ?? null,
      deadline_at: iso(row.deadline_at),
      expires_at: iso(row.expires_at) as string,
      created_at: iso(row.created_at) as string,
    };
  }

  /** The e-mail address an inbox token was opened for (401 when it is unknown or expired). */
  async emailOf(token: string): Promise<string> {
    const session = await this.sessions.findOne({ where: { tokenHash: hashCredential(token) } });
    const email = session && session.expiresAt.getTime() > Date.now() ? unsealWithBearer(token, INBOX_ADDRESS, session.emailSealed) : undefined;
    if (email === undefined) {
      throw new DomainError('unauthenticated', 'Sign in to the inbox again: the inbox session is missing or has expired');
    }
    return email;
  }

  private get key(): string {
    return this.context.env.SUBJECT_REF_KEY;
  }
}
