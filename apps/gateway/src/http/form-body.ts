import { formFieldPrototypeKeyIssues } from '@dcr/domain';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { parse as parseQueryString } from 'fast-querystring';
import { prototypeKeysRefused } from './error-responder';

/**
 * The gateway's parser of `application/x-www-form-urlencoded` bodies (the pages' forms): Nest's
 * default one (fast-querystring: flat names, a name sent twice an array), with one difference. Nest's
 * refused a `__proto__` field with its generic "Object contains forbidden prototype property" and no
 * `details`, and took `constructor[prototype]`; here a form holding a field that is, or in the
 * bracket or dot notation forms write nesting in reaches, a prototype key (formFieldPrototypeKeyIssues)
 * is refused as a JSON body holding one is (json-body.ts): 400 naming each field as the form sent it.
 * On the pages that answer is an HTML page (page-errors.ts), on the API the error body.
 */
export function parseFormBody(_request: FastifyRequest, body: Buffer, done: (error: Error | null, parsed?: unknown) => void): void {
  const parsed = parseQueryString(body.toString()) as Record<string, unknown>;
  const issues = formFieldPrototypeKeyIssues(Object.keys(parsed));
  if (issues.length > 0) return done(prototypeKeysRefused(issues), undefined);
  done(null, parsed);
}

/** Installs parseFormBody as the application's form parser, through Nest, with the server's body limit (as useJsonBodyParser). */
export function useFormBodyParser(app: NestFastifyApplication): void {
  const { bodyLimit } = app.getHttpAdapter().getInstance().initialConfig;
  app.useBodyParser('application/x-www-form-urlencoded', { bodyLimit }, parseFormBody);
}
