import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { INBOX_CLOSE, INBOX_OPEN, INBOX_SIGN_IN, INBOX_WITHDRAW, InboxOpenReply, InboxRecordMessage, InboxWithdrawReply } from '@dcr/contracts';
import { countryOfInboxToken, countryOfRecordId, DomainError, isInboxToken, Page, parseLimit, wrongCountry } from '@dcr/domain';
import { ServiceEnvironment } from '@dcr/config';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AnswerNotKept, PublicRoute } from '../auth/auth.decorators';
import { ApiConflict, ApiErrorResponses, ApiPage, ApiWrongCountry } from '../openapi/openapi.decorators';
import { INBOX_TOKEN_SCHEME } from '../openapi/openapi-document';
import { InboxItemDto, InboxOpenDto, InboxOpenReplyDto, InboxRecordDto, InboxRecordPurposeDto, InboxRecordsQueryDto, InboxQueryDto, InboxSignInDto, InboxSignInReplyDto, InboxWithdrawDto, InboxWithdrawReplyDto } from './inbox.dto';
import { InboxReader } from './inbox-reader';
import { SignInCodeLimit } from './sign-in-code-limit';
import { HomeCountry } from '../residency/home-country';
import { personRecordsPage } from './inbox-records';

/** What a 421 of an inbox route may be about first. */
const TOKEN_COUNTRY = 'The inbox (its token, `inb_<cc>…`, names the country that issued it)';

/**
 * The inbox token the request carries. One naming another country (`inb_de…`: countryOfInboxToken) is
 * answered as the session tokens are, 421 `wrong_country` with that country and nothing else, before
 * anything is looked up: the country is read from the token alone, which its holder has, so the
 * answer tells them nothing they could not try, and nothing about the person travels or is looked up
 * (the home country answers 401 there if the token opens no inbox any more). A token naming no
 * country (issued before tokens named theirs) or a country that is no peer is looked up here: 401.
 */
export function inboxBearer(authorization: string | undefined, here: Pick<ServiceEnvironment, 'COUNTRY' | 'PEER_COUNTRIES'>): string {
  const token = /^Bearer\s+(\S+?)\s*$/.exec(authorization ?? '')?.[1];
  if (!isInboxToken(token)) throw new DomainError('unauthenticated', 'Send Authorization: Bearer <inbox token> (from POST /api/v1/inbox/session)');
  const home = countryOfInboxToken(token);
  if (home && home !== here.COUNTRY && here.PEER_COUNTRIES.includes(home)) throw wrongCountry(home);
  return token;
}

/**
 * The unified inbox of a person: sign in with a mailed one-time code, then list the pending consent
 * and approval requests addressed to that e-mail in this country. The inbox token is not an API
 * credential: it reads this list and nothing else.
 */
@ApiTags('Inbox')
@ApiErrorResponses()
@PublicRoute()
@Controller('api/v1/inbox')
export class InboxController {
  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    private readonly reader: InboxReader,
    private readonly codeLimit: SignInCodeLimit,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('sign_in')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Mail a one-time code to the person (6 digits, 10 minutes, 5 attempts; at most 5 per hour)',
    description: 'At most 5 codes an address an hour, and at most `SIGN_IN_CODES_PER_IP_PER_HOUR` (30 by default) asked for from one client address an hour: beyond either, 429 `rate_limited` with `Retry-After`.',
  })
  @ApiOkResponse({ type: InboxSignInReplyDto, description: 'The code was mailed' })
  signIn(@Body() body: InboxSignInDto, @Req() request: FastifyRequest, @Headers('accept-language') language?: string) {
    this.codeLimit.take(request.ip);
    const locale = (body.locale ?? language)?.toLowerCase().startsWith('de') ? 'de' : 'en';
    return firstValueFrom(this.clients.own.send(INBOX_SIGN_IN, { email: body.email, locale }));
  }

  @Post('session')
  @AnswerNotKept()
  @ApiOperation({ summary: 'Trade the code for an inbox token (inb_…, 12 hours)', description: 'An `Idempotency-Key` is taken and ignored here: the answer is not kept (a repeat runs again, and a spent code is refused).' })
  @ApiCreatedResponse({ type: InboxOpenReplyDto, description: 'The inbox token' })
  open(@Body() body: InboxOpenDto): Promise<InboxOpenReply> {
    return firstValueFrom(this.clients.own.send<InboxOpenReply>(INBOX_OPEN, body));
  }

  @Delete('session')
  @HttpCode(204)
  @ApiWrongCountry(TOKEN_COUNTRY)
  @ApiBearerAuth(INBOX_TOKEN_SCHEME)
  @ApiOperation({ summary: 'Sign out of the inbox' })
  @ApiNoContentResponse()
  async close(@Headers('authorization') authorization?: string): Promise<void> {
    await firstValueFrom(this.clients.own.send(INBOX_CLOSE, { inbox_token: inboxBearer(authorization, this.context.env) }));
  }

  @Get()
  @ApiBearerAuth(INBOX_TOKEN_SCHEME)
  @ApiOperation({
    summary: 'Pending consent and approval requests of the signed-in person',
    description: 'Filter by kind, by approval trigger and by application_id; sort by deadline (soonest first) or newest first. Each row leads to /decisions/<session_token>.',
  })
  @ApiWrongCountry(TOKEN_COUNTRY)
  @ApiPage(InboxItemDto)
  list(@Query() query: InboxQueryDto, @Req() request: FastifyRequest, @Headers('authorization') authorization?: string) {
    return this.reader.page(inboxBearer(authorization, this.context.env), query, request);
  }

  @Get('records')
  @ApiBearerAuth(INBOX_TOKEN_SCHEME)
  @ApiOperation({
    summary: "The signed-in person's consent records in this country, with each purpose's current status",
    description:
      'The credential-free withdrawal entry every receipt names (withdrawal_method): sign in with a mailed code, then withdraw. Consents given on the hosted pages ' +
      '(sessions signed in with the same address) are listed too, with channel `hosted`. Every record is listed with `withdrawal: "per_purpose"` (all of it, or one purpose); `whole` is not given any more. ' +
      'One page at a time: at most `limit` records (50 by default, 1 to 200; fewer when they would not fit 512 KiB), then `next_cursor` until the oldest is listed. ' +
      'Each replaced record names its successor (`superseded_by`) also when that is on an earlier page. The cursor is opaque, names the list (every organisation\'s, or the one `application_id` names) ' +
      'and the last position listed, nothing of the person: one of another list, or changed by hand, is a 400 naming `cursor`.',
  })
  @ApiExtraModels(InboxRecordPurposeDto)
  @ApiWrongCountry(`${TOKEN_COUNTRY}, or, with application_id, the person's records with that organisation (the directory homes them in another country for it),`)
  @ApiPage(InboxRecordDto, 'One page of the records, newest given first (`captured_at`, then `recorded_at`, then `record_id`): imported history in the order the person gave it; `next_cursor` names the older ones')
  async records(@Query() query: InboxRecordsQueryDto, @Headers('authorization') authorization?: string): Promise<Page<InboxRecordMessage>> {
    const token = inboxBearer(authorization, this.context.env);
    const { application_id: applicationId, limit, cursor } = query;
    if (applicationId !== undefined && !/^tp_[a-z]{2,8}_[0-9a-z]{16}$/.test(applicationId)) {
      throw new DomainError('invalid_request', 'application_id must be a tp_ id', [{ field: 'application_id', reason: 'not an application id' }]);
    }
    // Newest given first (recordsPagePosition): imported history in the order the person gave it, not
    // the import's; the decisions service reads this page alone.
    return personRecordsPage(this.clients, token, { applicationId, limit: parseLimit(limit), cursor: typeof cursor === 'string' && cursor !== '' ? cursor : undefined });
  }

  @ApiConflict('Nothing (or not that purpose) is granted on the record any more, or the record was replaced by a newer one')
  @ApiWrongCountry(`${TOKEN_COUNTRY}, or the record (its id names the country),`)
  @ApiOkResponse({ type: InboxWithdrawReplyDto, description: 'The confirmation: what was withdrawn, when, and the record as it stands now' })
  @Post('records/:record_id/withdraw')
  @HttpCode(200)
  @ApiBearerAuth(INBOX_TOKEN_SCHEME)
  @ApiOperation({
    summary: 'Withdraw a record (every purpose still granted) or one purpose of it; answers the confirmation',
    description:
      'A consent given on the hosted pages is withdrawn the same way: one purpose of several goes out as `consent.purpose_revoked` and the consent stays given for the rest; everything still given, or its last purpose by name, revokes it (`consent.revoked`, as its session token would). ' +
      '`channel` says where the person withdrew from (`own_records` by default; `receipt_link` or `email_link` when the receipt\'s or the receipt mail\'s link brought them); any other value is a 422 naming `channel`.',
  })
  async withdraw(@Param('record_id') recordId: string, @Body() body: InboxWithdrawDto, @Headers('authorization') authorization?: string): Promise<InboxWithdrawReply> {
    // The inbox token first: without it nothing about the record is told (not even where it is kept).
    const token = inboxBearer(authorization, this.context.env);
    if (!/^rec_[a-z]{2}[0-9a-z]{20}$/.test(recordId)) throw new DomainError('not_found', 'Record was not found');
    const withdraw = () =>
      firstValueFrom(this.clients.own.send<InboxWithdrawReply>(INBOX_WITHDRAW, { inbox_token: token, record_id: recordId, purpose: body.purpose, channel: body.channel }));
    const home = countryOfRecordId(recordId);
    if (!home || home === this.context.env.COUNTRY) return withdraw();
    // A record of another country is withdrawn there (its id names it): 421 with that country only.
    // The token is checked here first, as for a record of this country: this country has no such
    // record, so a signed-in person is answered 404 and anyone else 401, and only then is the
    // person sent on. A token that opens no inbox (never issued, signed out) learns nothing of the
    // record, not even that it exists elsewhere.
    try {
      return await withdraw();
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'not_found')) throw error;
      await this.homeCountry.requireHere(home, 'record', recordId, 'Record');
      throw error;
    }
  }
}
