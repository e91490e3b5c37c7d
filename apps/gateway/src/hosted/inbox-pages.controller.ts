import { Body, Controller, Get, Headers, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { INBOX_OPEN, INBOX_RECORDS, INBOX_SIGN_IN, INBOX_WITHDRAW, InboxOpenReply, InboxRecordMessage } from '@dcr/contracts';
import { DomainError } from '@dcr/domain';
import { contentSecurityPolicy, renderInboxPage, renderInboxSignInPage, renderRecordsPage } from '@dcr/hosted-pages';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';
import { InboxQueryDto } from '../inbox/inbox.dto';
import { CredentialIndex } from '../connect/credential-index';
import { InboxReader } from '../inbox/inbox-reader';

export const INBOX_COOKIE = 'service_inbox';

function cookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
};

/**
 * `/inbox`: the person's pending requests as a page. Signing in uses plain HTML forms (e-mail, then
 * the mailed code); the inbox token then lives in an HttpOnly, SameSite=Strict cookie.
 */
@ApiExcludeController()
@PublicRoute()
@Controller('inbox')
export class InboxPagesController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly reader: InboxReader,
    private readonly index: CredentialIndex,
  ) {}

  /** The person's consent records, with a withdrawal form for every purpose still given. */
  @Get('records')
  async records(@Query('withdrawn') withdrawn: string | undefined, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const token = cookie(request, INBOX_COOKIE);
    if (!token) return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale }));
    try {
      const records = await firstValueFrom(this.clients.own.send<InboxRecordMessage[]>(INBOX_RECORDS, { inbox_token: token }));
      const items = records.map((record) => ({ ...record, application_name: this.index.application(record.application_id)?.name }));
      return this.html(reply, 200, renderRecordsPage(items, { locale, confirmation: withdrawn === '1' }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthenticated') return this.signedOut(reply, locale);
      throw error;
    }
  }

  /** A withdrawal from the records page (a plain form; the SameSite=Strict cookie keeps other sites out). */
  @Post('records/:record_id/withdraw')
  async withdraw(@Param('record_id') recordId: string, @Body() body: unknown, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const token = cookie(request, INBOX_COOKIE);
    if (!token) return this.html(reply, 401, renderInboxSignInPage({ step: 'email', locale }));
    const purpose = field(body, 'purpose');
    try {
      await firstValueFrom(this.clients.own.send(INBOX_WITHDRAW, { inbox_token: token, record_id: recordId, ...(purpose ? { purpose } : {}) }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthenticated') return this.signedOut(reply, locale);
      // Withdrawn already, or not theirs: the list shows how things stand.
      if (error instanceof DomainError && ['conflict', 'not_found', 'validation_failed', 'invalid_request'].includes(error.code)) {
        return reply.status(303).header('cache-control', 'no-store').redirect('/inbox/records', 303);
      }
      throw error;
    }
    return reply.status(303).header('cache-control', 'no-store').redirect('/inbox/records?withdrawn=1', 303);
  }

  private signedOut(reply: FastifyReply, locale: string | undefined) {
    reply.header('set-cookie', `${INBOX_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale }));
  }

  @Get()
  async inbox(@Query() query: InboxQueryDto, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const token = cookie(request, INBOX_COOKIE);
    if (!token) return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale }));
    try {
      const page = await this.reader.page(token, query, request);
      const items = page.data.map(({ status: _status, ...item }) => item);
      const body = renderInboxPage(items, { locale, filters: query, sort: query.sort, nextCursor: page.next_cursor });
      return this.html(reply, 200, body);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthenticated') {
        reply.header('set-cookie', `${INBOX_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
        return this.html(reply, 200, renderInboxSignInPage({ step: 'email', locale }));
      }
      throw error;
    }
  }

  @Post('sign_in')
  async signIn(@Body() body: unknown, @Headers('accept-language') locale: string | undefined, @Res() reply: FastifyReply) {
    const email = field(body, 'email');
    try {
      await firstValueFrom(this.clients.own.send(INBOX_SIGN_IN, { email, locale: locale?.toLowerCase().startsWith('de') ? 'de' : 'en' }));
    } catch (error) {
      if (error instanceof DomainError && (error.code === 'validation_failed' || error.code === 'invalid_request')) {
        return this.html(reply, 422, renderInboxSignInPage({ step: 'email', email, error: 'email', locale }));
      }
      throw error;
    }
    return this.html(reply, 200, renderInboxSignInPage({ step: 'code', email, locale }));
  }

  @Post('session')
  async open(@Body() body: unknown, @Headers('accept-language') locale: string | undefined, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const email = field(body, 'email');
    let opened: InboxOpenReply;
    try {
      opened = await firstValueFrom(this.clients.own.send<InboxOpenReply>(INBOX_OPEN, { email, code: field(body, 'code') }));
    } catch (error) {
      if (error instanceof DomainError && (error.code === 'validation_failed' || error.code === 'invalid_request')) {
        return this.html(reply, 422, renderInboxSignInPage({ step: 'code', email, error: 'code', locale }));
      }
      throw error;
    }
    const maxAge = Math.max(0, Math.floor((Date.parse(opened.expires_at) - Date.now()) / 1000));
    const secure = request.protocol === 'https' ? '; Secure' : '';
    reply.header('set-cookie', `${INBOX_COOKIE}=${encodeURIComponent(opened.inbox_token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`);
    return reply.status(303).header('cache-control', 'no-store').redirect('/inbox', 303);
  }

  private html(reply: FastifyReply, status: number, body: string) {
    return reply
      .status(status)
      .header('content-security-policy', contentSecurityPolicy({}))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(body);
  }
}
