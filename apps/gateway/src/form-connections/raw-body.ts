import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { pipeline, Transform } from 'node:stream';
import { MAX_FORM_SUBMISSION_BYTES } from '@dcr/contracts';
import { addRouteHook, routeMethods } from '../http/route-hooks';

/** The form builder's inbound webhook: the only route whose raw body bytes are kept. */
export const TYPEFORM_HOOK_ROUTE = '/hooks/typeform/:connection_id';

export interface RawBodyRequest extends FastifyRequest {
  /** The body exactly as received (set once the body has been read). */
  rawBody?: Buffer;
}

type Payload = NodeJS.ReadableStream & { receivedEncodedLength?: number };

/**
 * A `preParsing` hook that passes the body through unchanged to Fastify's JSON parser and keeps its
 * bytes on `request.rawBody`: the signature is an HMAC over those exact bytes, which a re-serialised
 * JSON body would not reproduce. `receivedEncodedLength` keeps Fastify's Content-Length and body
 * limit checks working on the returned stream.
 */
export function captureRawBody(request: FastifyRequest, _reply: FastifyReply, payload: Payload, done: (error: Error | null, payload?: Payload) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const tap: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer | string, _encoding, next) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(bytes);
      received += bytes.length;
      tap.receivedEncodedLength = received;
      next(null, bytes);
    },
    flush(next) {
      (request as RawBodyRequest).rawBody = Buffer.concat(chunks, received);
      next();
    },
  });
  tap.receivedEncodedLength = 0;
  // An aborted upload destroys the tap with the error, which the parser answers (400).
  pipeline(payload, tap, () => undefined);
  done(null, tap);
}

/** For the gateway's `onRoute` hook: the inbound form-builder route keeps its raw body and takes up to 512 KiB. */
export function configureFormHookRoute(route: RouteOptions): void {
  if (route.url !== TYPEFORM_HOOK_ROUTE || !routeMethods(route).includes('POST')) return;
  route.bodyLimit = MAX_FORM_SUBMISSION_BYTES;
  addRouteHook(route, 'preParsing', captureRawBody);
}
