/**
 * Subject naming. Every subject starts with the country prefix, so two countries can share one NATS
 * server (or one in-process bus) without ever seeing each other's messages. Patterns are literal
 * dot-separated tokens: no wildcards, so the in-process bus can match subjects exactly like NATS does.
 */
/** `us`, or `<namespace>.us` when several deployments share one NATS server (SUBJECT_NAMESPACE). */
const PREFIX = /^([a-z0-9_-]+\.)?[a-z0-9_-]+$/;
const SERVICE = /^[a-z0-9_-]+$/i;
const PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export function assertPrefix(prefix: string): string {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new TypeError(`Subject prefix "${prefix}" must be a lower-case country token such as "us", optionally after a namespace token ("staging.us")`);
  }
  return prefix;
}

export function assertServiceName(service: string): string {
  if (typeof service !== 'string' || !SERVICE.test(service)) {
    throw new TypeError(`Service name "${service}" must be one token of letters, digits, "-" or "_"`);
  }
  return service;
}

/** The subject a pattern is carried on, e.g. `us` + `residency.locate` → `us.residency.locate`. */
export function subjectFor(prefix: string, pattern: string): string {
  if (typeof pattern !== 'string' || !PATTERN.test(pattern)) {
    throw new TypeError(
      `Message pattern ${JSON.stringify(pattern)} must be a plain string of dot-separated tokens such as "residency.locate"`,
    );
  }
  return `${prefix}.${pattern}`;
}

/** Replicas of one service share a queue group, so each request or event reaches one of them. */
export function queueGroupFor(prefix: string, service: string): string {
  return `${prefix}.${service}`;
}
