import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsEmail, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateBy, ValidateNested } from 'class-validator';
import { isZonedDateTime } from '@dcr/domain';
import { IsExternalId } from '../subject-fields';
import { APPLICATION_ID, COUNTRY_CODE, FLOW_ID } from '../patterns';

/** An import's id: `imp_`, its country (since the thirtieth session; earlier ids carry none) and 20 characters. */
export const IMPORT_ID = /^imp_([a-z]{2})?[0-9a-z]{20}$/;

/** decisions: consent the organisation collected in its own form, recorded through the Record API. */
export const RECORDS_CREATE = 'decisions.records.create';
export const RECORDS_CONSENT_STATUS = 'decisions.records.consent-status';
/** How a consent record reached the service: its `channel` (records, their events and receipts). */
export const RECORD_CHANNELS = ['controller_attested', 'imported', 'form_capture', 'embedded_field', 'form_capture_browser', 'embedded_field_browser', 'form_platform_webhook'] as const;
export type RecordChannel = (typeof RECORD_CHANNELS)[number];
/**
 * The channels whose controls the service rendered (the consent field): how a purpose was presented
 * (ticked by default, mandatory) is the service's own knowledge there, never the organisation's
 * statement, so their records carry no `presentation_stated` (nor their receipts `presentation_attested`).
 */
export const SERVICE_RENDERED_RECORD_CHANNELS: readonly RecordChannel[] = ['embedded_field', 'embedded_field_browser'];

export const RECORDS_IMPORT = 'decisions.records.import';
export const CAPTURES_CREATE = 'decisions.captures.create';
export const CAPTURES_AUTHORIZE = 'decisions.captures.authorize';
export const RECORDS_IMPORT_GET = 'decisions.records.import-get';
export const RECORDS_IMPORT_LIST = 'decisions.records.import-list';
/** An import stopped by a failed chunk after earlier chunks were recorded: its report says so. */
export const RECORDS_IMPORT_FAILED = 'decisions.records.import-failed';


export class RecordSubjectInput {
  @IsEmail()
  email: string;

  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

export class CreateConsentRecordRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(FLOW_ID)
  flow_id: string;

  @ValidateNested()
  @Type(() => RecordSubjectInput)
  subject: RecordSubjectInput;

  /** Purpose key → `{decision, default_checked, mandatory}`; checked against the flow by the capture rules. */
  @IsObject()
  decisions: Record<string, { decision: string; default_checked?: boolean; mandatory?: boolean }>;

  @ValidateBy({ name: 'isZonedDateTime', validator: { validate: (value: unknown) => isZonedDateTime(value) } })
  captured_at: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  idempotency_key?: string;

  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/)
  notice_digest?: string;

  @IsIn(RECORD_CHANNELS as unknown as string[])
  channel: RecordChannel;

  /** The hosted form builder that delivered a `form_platform_webhook` record (the receipt's `collection_platform`). */
  @IsOptional()
  @IsIn(['typeform'])
  collection_platform?: 'typeform';

  /**
   * The purposes whose presentation is attested, when the caller knows better than the flags say
   * (a form builder's delivery: only the questions the person answered were surely shown). Otherwise
   * every decision stating both flags (statedPresentations).
   */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  presentation_stated?: string[];

  /**
   * Pins the flow version a capture was made against, or (`version_rule: in_force_at_capture`) the
   * version the Record API's caller names, which must have been activated, by `captured_at` unless
   * it is the flow's first. Otherwise as `version_rule` says.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  flow_version?: number;

  /**
   * Which version decides a record that pins none. `in_force_at_capture` (the Record API): the
   * version in force at `captured_at` (versionInForce: the newest activated at or before it, else
   * the first), and a pinned one is checked against `captured_at` (pinnedVersionIssue). Form builders
   * use it too, pinning the version in force at `submitted_at` that their mapping was read against.
   * Absent: the version active when the record is written (captures).
   */
  @IsOptional()
  @IsIn(['in_force_at_capture'])
  version_rule?: 'in_force_at_capture';

  /** Per purpose: did the attested label text match the published wording (recorded, never refused). */
  @IsOptional()
  @IsObject()
  wording_verdict?: Record<string, 'match' | 'drift'>;

  /**
   * With an `idempotency_key`: the fingerprint of the caller's body, so that the same key with another
   * body is a conflict. Without a key nothing compares it, and the gateway leaves it out.
   */
  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/)
  request_fingerprint?: string;

  /** `embedded_field` and `embedded_field_browser` only: the receipt's `extensions.rendering_evidence`. */
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  rendering_evidence?: Array<Record<string, unknown>>;

  @IsOptional()
  @IsBoolean()
  send_receipt?: boolean;
}

export interface ConsentRecordMessage {
  record_id: string;
  status: 'granted' | 'declined';
  flow_id: string;
  flow_version: number;
  subject: { id: string };
  purposes: Record<string, { status: 'granted' | 'declined' | 'objected' | 'noticed'; basis: string }>;
  captured_at: string;
  recorded_at: string;
  channel: string;
  supersedes?: string;
  /** Made in answer to this request only: the person's newer record, when this one was captured before it (history). */
  superseded_by?: string;
}

export interface CreateConsentRecordReply {
  consent_record: ConsentRecordMessage;
  /** False when the idempotency key named a record made before with the same body. */
  created: boolean;
}

export class ConsentStatusRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsOptional()
  @IsExternalId()
  external_id?: string;

  @IsOptional()
  @IsEmail()
  email?: string;

  @IsOptional()
  @Matches(/^sub_[0-9a-z]{20}$/)
  subject_id?: string;
}

export interface ConsentStatusReply {
  subject: { id: string };
  purposes: Record<string, { status: 'granted' | 'declined' | 'withdrawn' | 'expired' | 'objected' | 'noticed'; record_id: string; updated_at: string }>;
}

export class ImportRowInput {
  @IsObject()
  subject: { email?: unknown; external_id?: unknown };

  @IsObject()
  decisions: Record<string, { decision: string; default_checked?: boolean; mandatory?: boolean }>;

  @IsString()
  captured_at: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  idempotency_key?: string;
}

/** An idempotency key a dry run would record, with its body's fingerprint. */
export class DryRunKey {
  @IsString()
  @Length(1, 200)
  idempotency_key: string;

  @IsString()
  fingerprint: string;
}

/** A person a dry run would record or give an external id, by e-mail address. */
export class DryRunPerson {
  @IsString()
  email: string;

  @IsOptional()
  @IsString()
  external_id: string | null;
}

/** What chunks of a dry run would write that the rows of its later chunks meet. */
export class DryRunLedger {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DryRunKey)
  keys: DryRunKey[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DryRunPerson)
  people: DryRunPerson[];
}

/**
 * One chunk of an import (the gateway splits a request into chunks that fit a transport message);
 * every chunk of one import shares its id, and `offset` is the index of its first row.
 */
export class ImportRecordsRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(IMPORT_ID)
  import_id: string;

  @IsInt()
  @Min(0)
  offset: number;

  @Matches(FLOW_ID)
  flow_id: string;

  @IsBoolean()
  dry_run: boolean;

  @IsBoolean()
  send_receipts: boolean;

  /**
   * The flow version active when the import's first chunk was decided (ImportChunkReply.flow_version):
   * every row is decided against the version in force at its `captured_at` among this one and those
   * activated before it, so a version activated while an import runs does not change it. Absent on
   * the first chunk (the active version).
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  flow_version?: number;

  /** The import's last chunk: its report is `completed` once this chunk is recorded (`in_progress` until then). */
  @IsOptional()
  @IsBoolean()
  last?: boolean;

  /** Rows are checked one by one here (a bad row is refused by name, it does not fail the import). */
  @IsObject({ each: true })
  records: ImportRowInput[];

  /**
   * Each row's index in the import (the gateway decides the rows in the order they were captured,
   * importDecisionOrder, so a chunk's rows need not be consecutive). Absent: `offset` + its place.
   */
  @IsOptional()
  @IsInt({ each: true })
  @Min(0, { each: true })
  indexes?: number[];

  /**
   * A dry run's later chunk: what its earlier chunks would have recorded that this chunk's rows
   * meet (their idempotency keys and people), since a dry run writes nothing the chunk could read.
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => DryRunLedger)
  earlier?: DryRunLedger;
}

/**
 * A refused import row names at most this many reasons in the report; the rest are counted
 * (`reasons_omitted`). A row can break every purpose of a flow of 100, and 10,000 such rows made a
 * report of 140 MB, written again with every chunk and read back whole for every page.
 */
export const IMPORT_ROW_REASONS = 10;

/** A refused row's outcome, its reasons kept to IMPORT_ROW_REASONS. */
export function refusedImportRow(index: number, reasons: ReadonlyArray<{ field: string; reason: string }>): ImportRowOutcome {
  return {
    index,
    outcome: 'refused',
    reasons: reasons.slice(0, IMPORT_ROW_REASONS),
    ...(reasons.length > IMPORT_ROW_REASONS ? { reasons_omitted: reasons.length - IMPORT_ROW_REASONS } : {}),
  };
}

export interface ImportRowOutcome {
  index: number;
  outcome: 'recorded' | 'refused';
  record_id?: string;
  /** At most IMPORT_ROW_REASONS of them; the rest are counted in `reasons_omitted`. */
  reasons?: Array<{ field: string; reason: string }>;
  reasons_omitted?: number;
  /** Recorded: the row's idempotency key answered a record made before (by an earlier request, import or row), nothing new was written. */
  replayed?: true;
  /** The flow version the row was decided against (in force at its captured_at; reports made before it say none). */
  flow_version?: number;
}

export interface ImportChunkReply {
  /** The outcomes of the rows decided: the chunk's first `decided` rows (all of them when absent). */
  rows: ImportRowOutcome[];
  /**
   * The rows are decided one flow version at a time, each chunk in one transaction: when the
   * chunk's rows (in captured_at order) reach a capture time in force under a later version, only
   * the rows before it are decided, and the gateway sends the others in its next chunk.
   */
  decided?: number;
  /** The flow version active when the import's first chunk was decided (the next chunks are sent it). */
  flow_version: number;
  /**
   * How many purposes the import's versions have at most: the gateway sizes the next chunks by it,
   * since a refused row's reasons can name every purpose and the reply must fit the bus (docs/api.md, imports).
   */
  purposes: number;
  /** A dry run's chunk: what it would write that later chunks' rows may meet (the gateway sends it on with them). */
  ledger?: DryRunLedger;
  /** A real import's chunk: when its report was made (its first chunk), which the import's answer says as the report does. */
  created_at?: string;
}

/** Why an import stopped: the first row of the chunk that failed, and the failure. */
export class ImportFailure {
  @IsInt()
  @Min(0)
  offset: number;

  @IsString()
  code: string;

  @IsString()
  message: string;
}

export class ImportFailedRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(IMPORT_ID)
  import_id: string;

  @ValidateNested()
  @Type(() => ImportFailure)
  failure: ImportFailure;
}

export interface ImportReport {
  import_id: string;
  flow_id: string;
  dry_run: boolean;
  /**
   * `completed`: every row was decided. `failed`: a chunk failed after earlier ones were recorded;
   * `rows` are those decided before it (`failure.offset` is the first row not decided). `in_progress`:
   * still being recorded, or stopped without word (read again; the rows listed are recorded).
   */
  status: 'completed' | 'in_progress' | 'failed';
  failure?: ImportFailure;
  summary: { recorded: number; refused: number };
  rows: ImportRowOutcome[];
  created_at: string;
}

/** A position in an import's report (ImportReportPosition): a row index and how many rows the walk covers. */
export class ImportReportPositionMessage {
  @IsInt()
  @Min(0)
  after: number;

  @IsInt()
  @Min(1)
  of: number;
}

/** The most rows one message of an import's report asks for when the gateway reads it whole (an import's most rows); a message still stops at what fits the bus. */
export const IMPORT_REPORT_MESSAGE_ROWS = 10_000;

/** An application's imports kept in this country, newest first, a page at a time (after the position given). */
export class ImportListRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsInt()
  @Min(1)
  @Max(200)
  limit: number;

  /** The last listed import's `[created_at, import_id]`: the page starts after it. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  after?: [string, string];
}

/** An import as a list shows it: its report's head and summary, and how many rows the report holds. */
export interface ImportListItem {
  import_id: string;
  flow_id: string;
  status: ImportReport['status'];
  failure?: ImportFailure;
  summary: ImportReport['summary'];
  rows_reported: number;
  created_at: string;
}

export interface ImportListReply {
  data: ImportListItem[];
  /** The position after which the next page starts, or absent after the oldest. */
  next?: [string, string];
}

export class ImportGetRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(IMPORT_ID)
  import_id: string;

  /**
   * The most rows the page holds (the answer may hold fewer, to fit one message, and still name the
   * next page): the client's `limit` (1 to 200), or IMPORT_REPORT_MESSAGE_ROWS when the gateway
   * reads the whole report.
   */
  @IsInt()
  @Min(1)
  @Max(IMPORT_REPORT_MESSAGE_ROWS)
  limit: number;

  /**
   * Where the page starts (ImportReportPosition, from the cursor the gateway was given): after the
   * row with this index, among the first `of` rows the report held, in the order they were decided.
   * Absent: the first page, over every row the report holds.
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => ImportReportPositionMessage)
  position?: ImportReportPositionMessage;
}

/**
 * A page of a report (ImportGetRequest): the report's head and whole summary, the page's rows by
 * index, and the position the next page starts at while rows are left (the gateway makes it the
 * answer's `next_cursor`).
 */
export type ImportReportPage = ImportReport & { next?: { after: number; of: number } };

export const CAPTURE_TOKEN = /^cap_[a-z]{2}[0-9a-z]{30}$/;

export class BrowserCommitInput {
  @ValidateNested()
  @Type(() => RecordSubjectInput)
  subject: RecordSubjectInput;
}

export class RenderedFieldInput {
  @Matches(/^[A-Za-z0-9_-]{22}$/)
  nonce: string;

  @IsInt()
  @Min(1)
  flow_version: number;
}

/** A capture request sent with an `Idempotency-Key` (the domain's CaptureRetry): a retry answers the capture it made. */
export class CaptureRetryInput {
  @Matches(/^[0-9a-f]{64}$/)
  key_digest: string;

  @Matches(/^[0-9a-f]{64}$/)
  request_digest: string;

  @Matches(/^[0-9a-f]{64}$/)
  secret: string;
}

export class CreateCaptureRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(FLOW_ID)
  flow_id: string;

  @IsIn(['form_capture', 'embedded_field'])
  channel: 'form_capture' | 'embedded_field';

  @IsObject()
  decisions: Record<string, { decision: string; default_checked?: boolean; mandatory?: boolean }>;

  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  /**
   * `embedded_field`: the rendering the gateway verified the render proof of: its nonce (a rendering
   * captures once) and the flow version it showed (which must still be the active one).
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => RenderedFieldInput)
  render?: RenderedFieldInput;

  /** `embedded_field`: the rendering evidence entries, built by the gateway from the proof and the frame's observations. */
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  rendering_evidence?: Array<Record<string, unknown>>;

  @IsOptional()
  @IsString()
  origin?: string;

  /** Browser commit (the gateway checked the application allows it): record at once with this person. */
  @IsOptional()
  @ValidateNested()
  @Type(() => BrowserCommitInput)
  commit?: BrowserCommitInput;

  /**
   * The request's `Idempotency-Key`, when it had one: a retry with the same key and body answers the
   * capture the first made (committing it, for a browser commit, if it is not yet); another body is
   * `idempotency_conflict`. Without it every request makes a capture.
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => CaptureRetryInput)
  retry?: CaptureRetryInput;
}

export interface CaptureCreatedReply {
  capture_token: string;
  expires_at: string;
  wording_verdict?: Record<string, 'match' | 'drift'>;
  /** Browser commit only. */
  record_id?: string;
  channel?: string;
}

export class AuthorizeCaptureRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(CAPTURE_TOKEN)
  capture_token: string;

  @ValidateNested()
  @Type(() => RecordSubjectInput)
  subject: RecordSubjectInput;

  @IsOptional()
  @IsBoolean()
  suppress_receipt?: boolean;
}

export interface AuthorizeCaptureReply {
  status: 'granted' | 'declined';
  record_id: string;
  channel: string;
}

/**
 * Cross-border, decisions → decisions of the country a capture token names: the person's home
 * country commits a capture made at another country's endpoint. `claim` marks the capture committed
 * by the claimant (atomically: a capture is committed in one country only) and answers what it
 * holds, none of it personal data (the capture never holds the person); `settle` tells the holder
 * how each commit ended: the record made (its opaque id), or none, releasing the claim when the
 * commit wrote nothing. Only the token's hash
 * travels, never the token or the person.
 */
export const CAPTURES_CLAIM = 'decisions.captures.claim';
export const CAPTURES_SETTLE = 'decisions.captures.settle';

const CAPTURE_TOKEN_HASH = /^[0-9a-f]{64}$/;

export class CaptureClaimRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  /** SHA-256 (hex) of the capture token, as the holder keeps it. */
  @Matches(CAPTURE_TOKEN_HASH, { message: 'capture_token_hash must be 64 lower-case hex characters' })
  capture_token_hash: string;

  /** The country that commits the capture: the person's home. */
  @Matches(COUNTRY_CODE)
  claimant_country: string;
}

/** What a capture holds: the snapshot the record is made from. */
export interface HeldCaptureMessage {
  /** The capture's opaque id (the record's idempotency key is made of it). */
  capture_id: string;
  flow_id: string;
  flow_version: number;
  channel: 'form_capture' | 'embedded_field';
  decisions: Record<string, { decision: string; default_checked: boolean; mandatory: boolean }>;
  wording_verdict: Record<string, 'match' | 'drift'> | null;
  origin: string | null;
  rendering_evidence: Array<Record<string, unknown>> | null;
  captured_at: string;
}

/**
 * `claimed`: the claimant may commit it (also again, when it claimed it before). `not_found`: no such
 * capture of this application. `expired`: past its 24 hours uncommitted. `committed`: committed by
 * another country (there, or claimed by a third), so for another person.
 */
/** `busy`: another country's commit of the capture is under way and has made no record yet (it may still fail and free it). */
export type CaptureClaimReply = { outcome: 'claimed'; capture: HeldCaptureMessage } | { outcome: 'not_found' | 'expired' | 'committed' | 'busy' };

/** How one commit of a claimed capture ended: with the record it made, or without one. */
export class CaptureSettleRequest extends CaptureClaimRequest {
  /** The record the claimant's commit made (or answered again). */
  @IsOptional()
  @Matches(/^rec_[a-z]{2}[0-9a-z]{20}$/)
  record_id?: string;

  /** Without a record: true when the commit wrote nothing (the person is not homed there, the capture rules refused), so the claim may be released. */
  @IsBoolean()
  release: boolean;
}

export interface CaptureSettleReply {
  settled: boolean;
}

/**
 * Cross-border, decisions → decisions of a person's home country: a browser commit retried at another
 * country's endpoint under the same `Idempotency-Key` asks the person's home whether it made the
 * key's capture (within its 24 hours). Only the key's digest (within the gateway's scope) travels,
 * and only whether a capture is held under it comes back: never the person, the body or the token.
 */
export const CAPTURES_RETRY_KEY_HELD = 'decisions.captures.retry_key_held';

export class CaptureRetryKeyHeldRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  /** The retry's key digest (CaptureRetry.key_digest). */
  @Matches(CAPTURE_TOKEN_HASH, { message: 'key_digest must be 64 lower-case hex characters' })
  key_digest: string;
}

export interface CaptureRetryKeyHeldReply {
  held: boolean;
}
