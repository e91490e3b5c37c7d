import { DomainError } from '../errors';
import { prefixedRandomString } from './random';

/** Length of the `<hashid>` part of application and flow ids, and the default opaque-id length. */
export const HASHID_LENGTH = 16;
/** Length of the opaque part of `sub_` person ids (the home country's code and 18 random characters). */
export const SUBJECT_ID_LENGTH = 20;

const REGION = '[a-z]{2,8}';
const HASHID = `[0-9a-z]{${HASHID_LENGTH}}`;
const REGION_PATTERN = new RegExp(`^${REGION}$`);
const APPLICATION_ID_PATTERN = new RegExp(`^tp_(${REGION})_${HASHID}$`);
const FLOW_ID_PATTERN = new RegExp(`^flw_(${REGION})_${HASHID}$`);
const API_TOKEN_RECORD_ID_PATTERN = new RegExp(`^api_token_${HASHID}$`);
const SUBJECT_ID_PATTERN = new RegExp(`^sub_[0-9a-z]{${SUBJECT_ID_LENGTH}}$`);
const PREFIX_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** A region is 2 to 8 lower-case letters (`dev`, `us`, `eu`), the same rule as the `REGION` setting. */
export function isRegion(value: unknown): value is string {
  return typeof value === 'string' && REGION_PATTERN.test(value);
}

function assertRegion(region: string): void {
  if (!isRegion(region)) {
    throw new DomainError('validation_failed', 'The region is not valid', [
      { field: 'region', reason: 'region must be 2 to 8 lower-case letters, such as dev, us or eu' },
    ]);
  }
}

/**
 * `<prefix>_<random>` with `length` characters from [0-9a-z]. The prefix is written without its
 * separator (`newOpaqueId('dts', 24)`); a single trailing `_` is tolerated and not doubled.
 */
export function newOpaqueId(prefix: string, length = HASHID_LENGTH): string {
  const bare = prefix.endsWith('_') ? prefix.slice(0, -1) : prefix;
  if (!PREFIX_PATTERN.test(bare)) {
    throw new RangeError(`id prefix must be lower-case letters and digits separated by single underscores, got "${prefix}"`);
  }
  return prefixedRandomString(`${bare}_`, length);
}

/** Characters of an event id's time: milliseconds since 1970 in base 36 (enough until the year 5188). */
const EVENT_TIME_CHARS = 9;
/** Characters of the counter within one millisecond: 46,656 events a millisecond in one process. */
const EVENT_COUNTER_CHARS = 3;
const EVENT_COUNTER_LIMIT = 36 ** EVENT_COUNTER_CHARS;
let lastEventMs = -1;
let eventCounter = 0;

/**
 * `evt_<20>`: an event's id, ordered by when it was made: 9 characters of the time in milliseconds
 * and 3 of a counter within the millisecond (base 36, so that the ids of one process sort as they
 * were made, also when the clock steps back), then 8 random characters (41 bits: two processes'
 * ids of one millisecond and counter do not collide). The outbox relays its events in this order,
 * by its primary key, with no index of its own for their time (docs/performance.md, twenty-first
 * session). The time an id shows is the event's `occurred_at`, which every event carries anyway.
 */
export function newEventId(now: number = Date.now()): string {
  if (now > lastEventMs) {
    lastEventMs = now;
    eventCounter = 0;
  } else if (++eventCounter === EVENT_COUNTER_LIMIT) {
    lastEventMs += 1;
    eventCounter = 0;
  }
  const time = lastEventMs.toString(36).padStart(EVENT_TIME_CHARS, '0');
  const counter = eventCounter.toString(36).padStart(EVENT_COUNTER_CHARS, '0');
  return prefixedRandomString(`evt_${time}${counter}`, 20 - EVENT_TIME_CHARS - EVENT_COUNTER_CHARS);
}

/** `tp_<region>_<hashid>`. */
export function newApplicationId(region: string): string {
  assertRegion(region);
  return prefixedRandomString(`tp_${region}_`, HASHID_LENGTH);
}

/** `flw_<region>_<hashid>`. */
export function newFlowId(region: string): string {
  assertRegion(region);
  return prefixedRandomString(`flw_${region}_`, HASHID_LENGTH);
}

/** `api_token_<16>`: the id of an API token's record (never the token itself). */
export const newApiTokenRecordId = (): string => newOpaqueId('api_token');

/** `req_<16>`: the `request_id` of every answer (made for every request, so its constant prefix is not re-checked). */
export const newRequestId = (): string => prefixedRandomString('req_', HASHID_LENGTH);

/**
 * `sub_<cc><18>`: the opaque person id returned as `subject.id`, made in the person's home country,
 * whose code starts the opaque part (as a session token's does), so that another country can answer
 * a request naming the id with `wrong_country` without a directory entry for it; the country is what
 * that answer discloses anyway. Clients must not parse it. 18 characters of [0-9a-z] carry 93 bits
 * of randomness. (Ids made before the twenty-first session are 20 random characters, and their
 * directory entries answer for them: see countryOfSubjectId.)
 */
export function newSubjectId(country: string): string {
  if (!/^[A-Za-z]{2}$/.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return prefixedRandomString(`sub_${country.toLowerCase()}`, SUBJECT_ID_LENGTH - 2);
}

const COUNTRY_OF_SUBJECT_ID = new RegExp(`^sub_([a-z]{2})[0-9a-z]{${SUBJECT_ID_LENGTH - 2}}$`);

/**
 * The country (`US`) a well-formed person id names in its first two characters; undefined for
 * anything else. An id made before ids named their country has random characters there, which may
 * read as a country's code by chance: ask the directory about an id first, and read its country only
 * when the directory has no entry for it (ids that name their country are never entered).
 */
export function countryOfSubjectId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return COUNTRY_OF_SUBJECT_ID.exec(id)?.[1]?.toUpperCase();
}

export function isApplicationId(value: unknown): value is string {
  return typeof value === 'string' && APPLICATION_ID_PATTERN.test(value);
}

export function isFlowId(value: unknown): value is string {
  return typeof value === 'string' && FLOW_ID_PATTERN.test(value);
}

export function isApiTokenRecordId(value: unknown): value is string {
  return typeof value === 'string' && API_TOKEN_RECORD_ID_PATTERN.test(value);
}

export function isSubjectId(value: unknown): value is string {
  return typeof value === 'string' && SUBJECT_ID_PATTERN.test(value);
}

/** The region of a well-formed `tp_` or `flw_` id; undefined for anything else. */
export function regionOf(id: string): string | undefined {
  if (typeof id !== 'string') return undefined;
  return (APPLICATION_ID_PATTERN.exec(id) ?? FLOW_ID_PATTERN.exec(id))?.[1];
}
