import { Body, Controller, Get, Headers, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { INBOX_CLOSE, INBOX_OPEN, INBOX_SIGN_IN, INBOX_WITHDRAW, InboxOpenReply, InboxRecordMessage } from '@dcr/contracts';
import { DomainError, isApplicationId, parseLimit, RecordsPageVia, recordsPageVia, withdrawalChannelOf } from '@dcr/domain';
import { GatewayEnvironment } from '@dcr/config';
import {
  inboxReturnPath,
  recordsPageQuery,
  RecordsPageError,
  RecordsPageOptions,
  renderInboxPage,
  renderInboxSignInPage,
  renderInboxSignInRefusedPage,
  renderRecordsPage,
} from '@dcr/hosted-pages';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { checkAsMessage } from '@dcr/transport';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AnswerNotKept, PublicRoute } from '../auth/auth.decorators';
import { InboxQueryDto } from '../inbox/inbox.dto';
import { CredentialIndex } from '../connect/credential-index';
import { InboxReader } from '../inbox/inbox-reader';
import { SignInCodeLimit } from '../inbox/sign-in-code-limit';
import { retryAfterOf } from '../http/error-responder';
import { ownOrigins, sentFromAnotherSite } from '../http/cross-site';
import { personRecordsPage } from '../inbox/inbox-records';
import { sendPage } from './page-answer';

export const INBOX_COOKIE = 'service_inbox';
/** The inbox cookie, cleared. */
const SIGNED_OUT_COOKIE = `${INBOX_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
/**
 * The records page, of one organisation when given (the page a receipt links to, on this site), with
 * the link that opened it (`via`) kept, so that signing in and withdrawing from it still say so, and
 * the page of the records it shows (`limit`, `cursor`) when given, so that a withdrawal comes back to it.
 */
const recordsPath = (applicationId: string | undefined, via?: RecordsPageVia, page: RecordsPageShown = {}) =>
  `/inbox/records${recordsPageQuery({ organisation: applicationId, via, ...page })}`;

/** Which page of the records a records page shows: its size, when the link asked for one, and its cursor. */
interface RecordsPageShown {
  limit?: number;
  cursor?: string;
}

/**
 * `?limit=` and `?cursor=` of the records page: a page size of 1 to 200 (50 without one), checked as
 * on the API (a bad value is a 400 page naming `limit`), and the cursor of a page (checked by the
 * decisions service: one of another list, or changed by hand, is a 400 page naming `cursor`).
 */
function recordsPageShown(limit: unknown, cursor: unknown): RecordsPageShown {
  return { ...(limit !== undefined && limit !== '' ? { limit: parseLimit(limit) } : {}), ...(typeof cursor === 'string' && cursor !== '' ? { cursor } : {}) };
}

/** What the page shows when a withdrawal from it was refused, and its status. */
const REFUSALS: Partial<Record<DomainError['code'], { error: RecordsPageError; status: number }>> = {
  conflict: { error: 'conflict', status: 409 },
  not_found: { error: 'not_found', status: 404 },
  validation_failed: { error: 'invalid', status: 422 },
  invalid_request: { error: 'invalid', status: 422 },
};

const RECORD_ID = /^rec_[a-z]{2}[0-9a-z]{20}$/;

function cookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

/** The inbox page's filters: the parameters of InboxQueryDto, checked as on the API. */
const INBOX_FILTERS: ReadonlyArray<keyof InboxQueryDto> = ['kind', 'trigger', 'application_id', 'sort', 'limit', 'cursor'];

function inboxFilters(query: Record<string, unknown>): InboxQueryDto {
  const given = Object.fromEntries(INBOX_FILTERS.filter((name) => query[name] !== undefined).map((name) => [name, query[name]]));
  const checked = checkAsMessage(InboxQueryDto, given);
  if ('issues' in checked) throw new DomainError('invalid_request', 'Invalid query parameters', checked.issues);
  return checked.instance as InboxQueryDto;
}

/**
 * The one organisation a records page is about, or every one without `application_id`. Anything
 * else (empty, not an application id, given twice) is a 400 naming it, as the API answers: never
 * read as every organisation's records.
 */
function organisationOf(applicationId: unknown): string | undefined {
  if (applicationId === undefined) return undefined;
  if (typeof applicationId === 'string' && isApplicationId(applicationId)) return applicationId;
  throw new DomainError('invalid_request', 'application_id must be a tp_ id, given once', [
    { field: 'application_id', reason: Array.isArray(applicationId) ? 'given more than once' : 'not an application id' },
  ]);
}

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
};

/**
 * `/inbox`: the person's pending requests as a page. Signing in uses plain HTML forms (e-mail, then
 * the mailed code), taken only from this site's own pages; the inbox token then lives in an
 * HttpOnly, SameSite=Strict cookie.
 */
@ApiExcludeController()
@PublicRoute()
@Controller('inbox')
export class InboxPagesController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly reader: InboxReader,
    private readonly index: CredentialIndex,
    private readonly codeLimit: SignInCodeLimit,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * The person's consent records, with a withdrawal form for every purpose still given: of one
   * organisation with `?application_id=` (the link every receipt and receipt mail carries, with
   * `via=receipt` or `via=email`), else of every organisation in this country. Signing in from here
   * comes back here. After a withdrawal (`?withdrawn=<record_id>`, `&purpose=` when one) it confirms
   * what was withdrawn, when the record shows it so.
   */
  @Get('records')
  async records(
    @Query('withdrawn') withdrawn: string | undefined,
    @Query('purpose') purpose: string | undefined,
    @Query('application_id') applicationId: string | undefined,
    @Query('via') via: string | undefined,
    @Query('limit') limit: string | undefined,
    @Query('cursor') cursor: string | undefined,
    @Headers('accept-language') locale: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const page = recordsPageShown(limit, cursor);
    const confirmation =
      typeof withdrawn === 'string' && RECORD_ID.test(withdrawn) ? { record_id: withdrawn, ...(typeof purpose === 'string' && purpose.length > 0 && purpose.length <= 64 ? { purpose } : {}) } : undefined;
    return this.recordsPage(reply, request, locale, applicationId, via, page, 200, { ...(confirmation ? { confirmation } : {}) });
  }

  /**
   * The records page (or signing in first), of one organisation when given, with the link that
   * opened it kept: one page of the records (`page`; the newest 50 without one), linking to the
   * older ones and back to the newest.
   */
  private async recordsPage(
    reply: FastifyReply,
    request: FastifyRequest,
    locale: string | undefined,
    applicationId: string | undefined,
    via: string | undefined,
    page: RecordsPageShown,
    status: number,
    extra: Pick<RecordsPageOptions, 'confirmation' | 'error'>,
  ) {
    const organisation = organisationOf(applicationId);
    const link = organisation ? recordsPageVia(via) : undefined;
    const here = recordsPath(organisation, link);
    const token = cookie(request, INBOX_COOKIE);
    if (!token) return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale, next: here }));
    try {
      const records = await personRecordsPage(this.clients, token, { applicationId: organisation, limit: page.limit ?? parseLimit(undefined), cursor: page.cursor });
      const items = records.data.map((record) => ({ ...record, application_name: this.index.application(record.application_id)?.name }));
      return this.html(
        reply,
        status,
        renderRecordsPage(items, {
          locale,
          ...extra,
          paging: { ...page, nextCursor: records.next_cursor },
          ...(link ? { via: link } : {}),
          ...(organisation ? { organisation: { id: organisation, name: this.index.application(organisation)?.name } } : {}),
        }),
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthenticated') return this.signedOut(reply, locale, here);
      // Homed in another country for this organisation: that country only, at the wrong door's status.
      const homeCountry = error instanceof DomainError && error.code === 'wrong_country' ? error.extra?.home_country : undefined;
      if (organisation && typeof homeCountry === 'string') {
        return this.html(reply, 421, renderRecordsPage([], { locale, homeCountry, organisation: { id: organisation, name: this.index.application(organisation)?.name } }));
      }
      throw error;
    }
  }

  /**
   * A withdrawal from the records page (a plain form: the SameSite=Strict cookie keeps other sites
   * out, and a form of the same site but not of this origin is refused by its Origin and
   * Sec-Fetch-Site, as a sign-in is). It states the channel of the link that opened the page (`via`: the receipt's, the receipt
   * mail's, else the person's own records). Done, back to the page, which confirms what was
   * withdrawn; refused (withdrawn already, replaced, not theirs, no such purpose), the page with
   * what happened and the list as it stands, at the refusal's status.
   */
  @Post('records/:record_id/withdraw')
  async withdraw(
    @Param('record_id') recordId: string,
    @Query('application_id') applicationId: string | undefined,
    @Query('via') via: string | undefined,
    @Query('limit') limit: string | undefined,
    @Query('cursor') cursor: string | undefined,
    @Body() body: unknown,
    @Headers('accept-language') locale: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    // Back to the page the form was on (one organisation's records, or everyone's, the link that
    // opened it, and the page of the records it showed: the withdrawn record is on it, confirmed).
    const organisation = organisationOf(applicationId);
    const link = organisation ? recordsPageVia(via) : undefined;
    const page = recordsPageShown(limit, cursor);
    const back = recordsPath(organisation, link, page);
    // A form another website posted (also one of the same site, which the SameSite=Strict cookie
    // reaches: a sibling subdomain) withdraws nothing: the list as it stands, saying why, at 403.
    if (sentFromAnotherSite(request, ownOrigins(this.context.env as GatewayEnvironment, request))) {
      return this.recordsPage(reply, request, locale, organisation, link, page, 403, { error: 'cross_site' });
    }
    const token = cookie(request, INBOX_COOKIE);
    if (!token) return this.html(reply, 401, renderInboxSignInPage({ step: 'email', locale, next: back }));
    // An id no record has (a malformed one included): not theirs, as the service would say.
    if (!RECORD_ID.test(recordId)) return this.recordsPage(reply, request, locale, organisation, link, page, 404, { error: 'not_found' });
    // The page's forms send one purpose, or none (everything): a purpose sent twice, or empty, is
    // no form of the page, and is refused as naming no purpose, never read as "everything".
    const sent = (body as Record<string, unknown> | undefined)?.purpose;
    const purpose = field(body, 'purpose');
    if (sent !== undefined && purpose === '') return this.recordsPage(reply, request, locale, organisation, link, page, 422, { error: 'invalid' });
    try {
      await firstValueFrom(
        this.clients.own.send(INBOX_WITHDRAW, { inbox_token: token, record_id: recordId, ...(purpose ? { purpose } : {}), channel: withdrawalChannelOf(link) }),
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthenticated') return this.signedOut(reply, locale, back);
      const refusal = error instanceof DomainError ? REFUSALS[error.code] : undefined;
      if (refusal) return this.recordsPage(reply, request, locale, organisation, link, page, refusal.status, { error: refusal.error });
      throw error;
    }
    const done = new URLSearchParams({ withdrawn: recordId, ...(purpose ? { purpose } : {}) }).toString();
    return reply.status(303).header('cache-control', 'no-store').redirect(`${back}${back.includes('?') ? '&' : '?'}${done}`, 303);
  }

  private signedOut(reply: FastifyReply, locale: string | undefined, next?: string) {
    reply.header('set-cookie', SIGNED_OUT_COOKIE);
    return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale, next }));
  }

  /**
   * The inbox page. Its filters are read as the API reads them (InboxQueryDto: a bad value is a 400
   * page naming the parameter); any other parameter is no filter of it and is left alone, as every
   * page leaves it (a tracking parameter, one with an empty name: `?=x`), where the API refuses it.
   */
  @Get()
  async inbox(@Query() query: Record<string, unknown>, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const filters = inboxFilters(query);
    const token = cookie(request, INBOX_COOKIE);
    if (!token) return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale }));
    try {
      const page = await this.reader.page(token, filters, request);
      const items = page.data.map(({ status: _status, ...item }) => item);
      const body = renderInboxPage(items, { locale, filters, sort: filters.sort, nextCursor: page.next_cursor });
      return this.html(reply, 200, body);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthenticated') {
        reply.header('set-cookie', SIGNED_OUT_COOKIE);
        return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale }));
      }
      throw error;
    }
  }

  /**
   * Signing out (the form on the inbox pages; the SameSite=Strict cookie keeps other sites out): the
   * inbox session ends, so its token opens nothing any more, the cookie is cleared, and the sign-in
   * page follows. Signed out already, the same.
   */
  @Post('sign_out')
  async signOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const token = cookie(request, INBOX_COOKIE);
    if (token) await firstValueFrom(this.clients.own.send(INBOX_CLOSE, { inbox_token: token }));
    return reply.status(303).header('set-cookie', SIGNED_OUT_COOKIE).header('cache-control', 'no-store').redirect('/inbox', 303);
  }

  /**
   * Signing in takes a form this site sent only (the cookie's SameSite=Strict does not keep other
   * sites out of a sign-in, which sets a new cookie: another site could sign the visitor in to its
   * own inbox). A form another website posted is refused (403) before anything is done: no code is
   * mailed or checked, no cookie set.
   */
  private refusedFromAnotherSite(request: FastifyRequest, reply: FastifyReply, locale: string | undefined, body: unknown) {
    if (!sentFromAnotherSite(request, ownOrigins(this.context.env as GatewayEnvironment, request))) return undefined;
    return this.html(reply, 403, renderInboxSignInRefusedPage({ locale, next: inboxReturnPath(field(body, 'next')) }));
  }

  @Post('sign_in')
  async signIn(@Body() body: unknown, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const refused = this.refusedFromAnotherSite(request, reply, locale, body);
    if (refused) return refused;
    const email = field(body, 'email');
    const next = inboxReturnPath(field(body, 'next'));
    try {
      this.codeLimit.take(request.ip);
    } catch (error) {
      // Too many codes asked for from this network address: no code is mailed, the address stays filled in.
      reply.header('retry-after', retryAfterOf(error as DomainError));
      return this.html(reply, 429, renderInboxSignInPage({ step: 'email', email, error: 'network_limited', locale, next }));
    }
    try {
      await firstValueFrom(this.clients.own.send(INBOX_SIGN_IN, { email, locale: locale?.toLowerCase().startsWith('de') ? 'de' : 'en' }));
    } catch (error) {
      if (error instanceof DomainError && (error.code === 'validation_failed' || error.code === 'invalid_request')) {
        return this.html(reply, 422, renderInboxSignInPage({ step: 'email', email, error: 'email', locale, next }));
      }
      // No new code (too many this hour): the person may still enter the newest one they got.
      if (error instanceof DomainError && error.code === 'rate_limited') {
        reply.header('retry-after', retryAfterOf(error));
        return this.html(reply, 429, renderInboxSignInPage({ step: 'code', email, error: 'codes_limited', locale, next }));
      }
      throw error;
    }
    return this.html(reply, 200, renderInboxSignInPage({ step: 'code', email, locale, next }));
  }

  @Post('session')
  @AnswerNotKept()
  async open(@Body() body: unknown, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const refused = this.refusedFromAnotherSite(request, reply, locale, body);
    if (refused) return refused;
    const email = field(body, 'email');
    let opened: InboxOpenReply;
    try {
      opened = await firstValueFrom(this.clients.own.send<InboxOpenReply>(INBOX_OPEN, { email, code: field(body, 'code') }));
    } catch (error) {
      if (error instanceof DomainError && (error.code === 'validation_failed' || error.code === 'invalid_request')) {
        return this.html(reply, 422, renderInboxSignInPage({ step: 'code', email, error: 'code', locale, next: inboxReturnPath(field(body, 'next')) }));
      }
      throw error;
    }
    const maxAge = Math.max(0, Math.floor((Date.parse(opened.expires_at) - Date.now()) / 1000));
    const secure = request.protocol === 'https' ? '; Secure' : '';
    reply.header('set-cookie', `${INBOX_COOKIE}=${encodeURIComponent(opened.inbox_token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`);
    // Back where signing in started (the records page a receipt links to), else the inbox.
    return reply.status(303).header('cache-control', 'no-store').redirect(inboxReturnPath(field(body, 'next')) ?? '/inbox', 303);
  }

  private html(reply: FastifyReply, status: number, body: string) {
    return sendPage(reply, status, body);
  }
}
