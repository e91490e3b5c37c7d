import { prototypeKeyIssues } from '@dcr/domain';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { errorCodes, type FastifyRequest } from 'fastify';
import { parse as secureJsonParse } from 'secure-json-parse';
import { prototypeKeysRefused } from './error-responder';

const REFUSE_PROTOTYPE_KEYS = { protoAction: 'error', constructorAction: 'error', safe: true } as const;

/**
 * The gateway's parser of `application/json` bodies (any charset parameter; other `+json` types are
 * read by no route and stay 415): Fastify's own, with one difference. Fastify's (secure-json-parse)
 * refuses a `__proto__` key, or a `constructor` key holding `prototype`, as it refuses text that is
 * not JSON, so such a body was answered "not valid JSON" naming `body`. Here malformed bodies still
 * raise Fastify's error, answered in one place (error-responder's malformedJson), an empty body is
 * read as none (Fastify refuses it as malformed), and a valid body holding such keys is a 400 naming
 * each key's path (`subject.__proto__`).
 *
 * secure-json-parse answers `null` (`safe`) when it finds such a key; only then, or for a body that is
 * `null` itself, is the text parsed again to find where: an ordinary body costs what Fastify's parser did.
 */
export function parseJsonBody(_request: FastifyRequest, body: Buffer, done: (error: Error | null, parsed?: unknown) => void): void {
  // An empty body labelled JSON (what many clients send for a POST without a body) is no body: a
  // route that reads none acts, and one that reads one answers that its body must be a JSON object.
  if (body.length === 0) return done(null, undefined);
  let parsed: unknown;
  try {
    parsed = secureJsonParse(body, undefined, REFUSE_PROTOTYPE_KEYS);
  } catch {
    return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
  }
  if (parsed === null) {
    const text = body.toString('utf8');
    // As secure-json-parse reads it: a leading byte order mark is not part of the JSON.
    const issues = prototypeKeyIssues(JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text));
    if (issues.length > 0) return done(prototypeKeysRefused(issues), undefined);
  }
  done(null, parsed);
}

/**
 * Installs parseJsonBody as the application's `application/json` parser, through Nest (which would
 * otherwise install Fastify's default one at init, and refuses a second parser for the type), with
 * the server's body limit; a route's own limit (imports, the form-builder hook) still takes precedence.
 */
export function useJsonBodyParser(app: NestFastifyApplication): void {
  const { bodyLimit } = app.getHttpAdapter().getInstance().initialConfig;
  app.useBodyParser('application/json', { bodyLimit }, parseJsonBody);
}
