import { renderErrorPage } from '@dcr/hosted-pages';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { errorAnswer } from '../http/error-responder';
import { sendPage } from './page-answer';

/** Statuses whose error page says what happened in its own words (not found, gone, another country, a failure). */
const OWN_WORDS = (status: number) => status === 404 || status === 410 || status === 421 || status >= 500;

/**
 * The pages a person opens in a browser: the inbox and its records (with their forms), the hosted
 * decision pages and the hosted flow page. Not the API (`/api/v1/inbox`, `/api/v1/decisions`).
 */
export function isPersonPage(url: string): boolean {
  const path = url.split('?', 1)[0];
  return path === '/inbox' || path.startsWith('/inbox/') || path.startsWith('/decisions/') || path.startsWith('/accord/');
}

/**
 * What reaches the error filter on a person's page (a form refused before its handler ran, such as
 * one holding a prototype key; a filter of the inbox page with a bad value; a failure): the status,
 * request id and headers errorAnswer gives the API's answer, as a readable page in the person's
 * language instead of the JSON body, with the message and the fields named for a refusal (4xx), the
 * page's own words for a 404, 410, 421 (with the home country) and 5xx, and the request id as a reference.
 */
export function sendPageError(error: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const { status, body, headers } = errorAnswer(error, request.id, logger, (name) => reply.hasHeader(name));
  for (const [name, value] of headers) if (name !== 'content-type') reply.header(name, value);
  const path = request.url.split('?', 1)[0];
  const page = renderErrorPage({
    status,
    locale: request.headers['accept-language'],
    mode: path.startsWith('/decisions/') && path.endsWith('/embed') ? 'embed' : 'page',
    requestId: body.request_id,
    ...(typeof body.home_country === 'string' ? { homeCountry: body.home_country } : {}),
    ...(OWN_WORDS(status) ? {} : { message: body.message, details: body.details }),
  });
  void sendPage(reply, status, page);
}
