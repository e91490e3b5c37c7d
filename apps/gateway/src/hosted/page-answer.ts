import { contentSecurityPolicy } from '@dcr/hosted-pages';
import type { FastifyReply } from 'fastify';

/**
 * A page's answer: the HTML with the pages' headers (their strict CSP, `frame-ancestors` only the
 * origins given, none by default; never cached; no referrer; no sniffing).
 */
export function sendPage(reply: FastifyReply, status: number, body: string, frameAncestors: string[] = []) {
  return reply
    .status(status)
    .header('content-security-policy', contentSecurityPolicy({ frameAncestors }))
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(body);
}
